// STREAM-like copy bandwidth: c[i] = a[i] over arrays far larger than the caches, on the OpenMP
// threads (OMP_NUM_THREADS), each thread touching first the part it copies. Prints the best of
// --reps passes in GB/s, counting 16 bytes per element (one read, one write; the write-allocate
// read that non-temporal-free stores also cause is not counted, as in STREAM).
//
//   OMP_NUM_THREADS=2 build/bench/stream_copy [--mib 256] [--reps 10]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

int main(int argc, char** argv) {
  std::size_t mib = 256;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view key = argv[i];
    if (key == "--mib")
      mib = std::strtoull(argv[i + 1], nullptr, 10);
    else if (key == "--reps")
      reps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "stream_copy: unknown option %s (--mib N, --reps N)\n", argv[i]);
      return 2;
    }
  }
  if (mib == 0 || reps < 1) {
    std::fprintf(stderr, "stream_copy: --mib and --reps must be positive\n");
    return 2;
  }
  const std::size_t n = mib * (std::size_t{1} << 20) / sizeof(double);
  const std::unique_ptr<double[]> a(new double[n]), c(new double[n]);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 1.0, c[i] = 0.0;
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) c[i] = a[i];
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 16.0 * double(n) / s / 1e9);
  }
  std::printf("copy_gbs %.3f threads %d mib %zu\n", best, omp_get_max_threads(), mib);
  return c[n / 2] == 1.0 ? 0 : 1;
}
