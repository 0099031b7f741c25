// Parallel HDF5 files, the little of them miniamr needs: one file written by all ranks at once,
// datasets of rows where each rank writes or reads its own contiguous range (collective MPI-IO),
// and scalar attributes. Every HDF5 handle is closed by its owner; every failure is an h5::Error
// naming the file, the object and the HDF5 call, instead of HDF5's own error-stack printout.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <hdf5.h>
#include <mpi.h>

namespace miniamr::h5 {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One HDF5 identifier and the function that closes it.
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() { reset(); }
  Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  // Closes now; false when HDF5 reported a failure (a write that did not reach the disk).
  bool reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// The element types rows can hold.
template <class T>
hid_t memory_type();

class File {
 public:
  // Collective over `comm`: a new file (an existing one is replaced), or an existing one to read.
  static File create(const std::string& path, MPI_Comm comm);
  static File open(const std::string& path, MPI_Comm comm);

  // Collective. Dataset `name` ("a/b" makes the group "a") of `total_rows` rows of `width`
  // values; this rank writes `mine` (a whole number of rows) from row `first_row` on.
  template <class T>
  void write_rows(const std::string& name, std::span<const T> mine, std::int64_t first_row,
                  std::int64_t total_rows, std::int64_t width = 1);
  // Collective. The same as a one-dimensional dataset of `total` values (formats whose readers
  // want vectors, not columns): this rank writes `mine` from index `first` on.
  template <class T>
  void write_vector(const std::string& name, std::span<const T> mine, std::int64_t first,
                    std::int64_t total);
  // Collective. `rows` rows of dataset `name` from `first_row` on; checks the element type class
  // and the width.
  template <class T>
  std::vector<T> read_rows(const std::string& name, std::int64_t first_row, std::int64_t rows,
                           std::int64_t width = 1) const;
  // Collective. The rows `rows` (ascending, any gaps) of dataset `name`, in that order.
  template <class T>
  std::vector<T> read_row_list(const std::string& name, std::span<const std::int64_t> rows,
                               std::int64_t width = 1) const;
  // The number of rows of dataset `name`, 0 when there is none.
  std::int64_t rows(const std::string& name) const;
  bool has(const std::string& name) const;

  // Attributes of the root group. Collective: every rank passes the same value.
  void set_attribute(const std::string& name, std::string_view text);
  void set_attribute(const std::string& name, std::int64_t value);
  void set_attribute(const std::string& name, double value);
  // Attributes of the group or dataset `object` (which must exist). Collective, as above.
  void set_attribute(const std::string& object, const std::string& name, std::string_view text);
  void set_attribute(const std::string& object, const std::string& name,
                     std::span<const std::int64_t> values);
  std::string text_attribute(const std::string& name) const;
  std::int64_t int_attribute(const std::string& name) const;
  double real_attribute(const std::string& name) const;

  // Collective. Flushes and closes; throws when the data could not be written.
  void close();
  const std::string& path() const { return path_; }

 private:
  File(std::string path, Id id, MPI_Comm comm)
      : path_(std::move(path)), id_(std::move(id)), comm_(comm) {}
  [[noreturn]] void fail(std::string_view what, std::string_view object) const;
  template <class T>
  void write_slab(const std::string& name, std::span<const T> mine, std::int64_t first_row,
                  std::int64_t total_rows, std::int64_t width, int rank);
  // Collective: throws on every rank when `ok` is false on any, so that no rank goes on to the
  // next collective call while another has left (a full disk may fail one rank's write only).
  void agree(bool ok, std::string_view what, std::string_view object) const;
  std::string path_;
  Id id_;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace miniamr::h5
