#!/usr/bin/env bash
# Installs what is missing from Debian 12 (as root, with apt), builds miniamr, then either runs
# the default scenario (`run`), the whole test suite (`test`) or a simulated run (`simulate`).
#   bash tools/bootstrap.sh run       # build + expanding sphere on 2 ranks
#   bash tools/bootstrap.sh test      # build + the simulation build + every test (unit,
#                                     # regression decks, MPI, simulation, style), then the
#                                     # sanitizer stage (FUZZ_SECONDS=60 adds libFuzzer)
#   bash tools/bootstrap.sh simulate  # build + the simulation build + 64 simulated ranks
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
case "$mode" in run | test | simulate) ;; *) echo "usage: $0 run|test|simulate" >&2; exit 2 ;; esac

packages=(build-essential cmake libopenmpi-dev openmpi-bin libfmt-dev libyaml-cpp-dev
          libgtest-dev libbenchmark-dev libtbb-dev nlohmann-json3-dev libtrilinos-kokkos-dev python3 python3-yaml
          python3-matplotlib clang-format help2man libhdf5-openmpi-dev python3-h5py python3-vtk9
          libsimgrid-dev libjemalloc2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# MPI as root (containers, CI) and oversubscribed test runs that must not busy-poll.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
if [[ $mode != run ]]; then
  # The simulation build: miniamr alone, against SimGrid's SMPI (tools/miniamr-simulate runs it).
  cmake -S . -B build-smpi -DCMAKE_BUILD_TYPE=Release -DMINIAMR_SIMGRID=ON
  cmake --build build-smpi -j "$jobs" --target miniamr
fi

if [[ $mode == run ]]; then
  mkdir -p out && cd out
  # --report_perf 13: the default progress and end report, plus results.yaml.
  mpirun -np 2 ../build/miniamr ../inputs/expanding_sphere.deck --report_perf 13
  echo "results written to $(pwd)/results.yaml"
elif [[ $mode == simulate ]]; then
  mkdir -p out && cd out
  ../tools/miniamr-simulate --np 64 --platform ../platforms/cluster_fat_tree.xml \
    --calibration ../platforms/calibration.yaml -- ../inputs/two_spheres-ci.deck --num_tsteps 20 --report_perf 13
  echo "results written to $(pwd)/results.yaml"
else
  (cd build && ctest --output-on-failure -j "$jobs")
  # The sanitizer stage: ASan + UBSan build of the unit tests, the 1-2 rank decks and the
  # parser's fuzz driver. libFuzzer (clang) runs for FUZZ_SECONDS when asked (0 by default,
  # which keeps CI within its time; the GCC fuzz driver runs in both ctest passes).
  bash tools/sanitize_and_fuzz.sh "${FUZZ_SECONDS:-0}"
fi
