#include "h5/h5file.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace miniamr::h5 {

namespace {

// HDF5 prints its whole error stack to stderr by default; miniamr reports one message instead.
void silence_hdf5() {
  static const bool silenced = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)silenced;
}

// A property list for MPI-IO on `comm` (file access) or for collective transfers.
Id file_access(MPI_Comm comm) {
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
  return fapl;
}

Id collective_transfer() {
  Id dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

}  // namespace

bool Id::reset() {
  bool ok = true;
  if (id_ >= 0 && close_ != nullptr) ok = close_(id_) >= 0;
  id_ = H5I_INVALID_HID;
  return ok;
}

template <>
hid_t memory_type<double>() {
  return H5T_NATIVE_DOUBLE;
}
template <>
hid_t memory_type<std::int64_t>() {
  return H5T_NATIVE_INT64;
}
template <>
hid_t memory_type<std::uint64_t>() {
  return H5T_NATIVE_UINT64;
}
template <>
hid_t memory_type<std::uint32_t>() {
  return H5T_NATIVE_UINT32;
}
template <>
hid_t memory_type<std::int32_t>() {
  return H5T_NATIVE_INT32;
}
template <>
hid_t memory_type<std::uint8_t>() {
  return H5T_NATIVE_UINT8;
}
template <>
hid_t memory_type<float>() {
  return H5T_NATIVE_FLOAT;
}

void File::fail(std::string_view what, std::string_view object) const {
  throw Error(fmt::format("{}: {}{}{}", path_, what, object.empty() ? "" : " ", object));
}

void File::agree(bool ok, std::string_view what, std::string_view object) const {
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, comm_);
  if (all_ok == 0) fail(ok ? fmt::format("{} (on another rank)", what) : std::string(what), object);
}

File File::create(const std::string& path, MPI_Comm comm) {
  silence_hdf5();
  const Id fapl = file_access(comm);
  Id id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  File f(path, std::move(id), comm);
  f.agree(f.id_.get() >= 0, "cannot create the HDF5 file", "");
  return f;
}

File File::open(const std::string& path, MPI_Comm comm) {
  silence_hdf5();
  const Id fapl = file_access(comm);
  Id id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  File f(path, std::move(id), comm);
  f.agree(f.id_.get() >= 0, "not a readable HDF5 file", "");
  return f;
}

template <class T>
void File::write_rows(const std::string& name, std::span<const T> mine, std::int64_t first_row,
                      std::int64_t total_rows, std::int64_t width) {
  write_slab(name, mine, first_row, total_rows, width, 2);
}

template <class T>
void File::write_vector(const std::string& name, std::span<const T> mine, std::int64_t first,
                        std::int64_t total) {
  write_slab(name, mine, first, total, 1, 1);
}

// `rank` 2: rows of `width` values; 1: a vector (width 1).
template <class T>
void File::write_slab(const std::string& name, std::span<const T> mine, std::int64_t first_row,
                      std::int64_t total_rows, std::int64_t width, int rank) {
  const hsize_t dims[2] = {hsize_t(total_rows), hsize_t(width)};
  const Id space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  const Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  const Id set(H5Dcreate2(id_.get(), name.c_str(), memory_type<T>(), space.get(), lcpl.get(),
                          H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose);
  agree(set.get() >= 0, "cannot create the dataset", name);
  const hsize_t start[2] = {hsize_t(first_row), 0};
  const hsize_t count[2] = {hsize_t(std::int64_t(mine.size()) / width), hsize_t(width)};
  // A rank without rows still takes part in the collective write, selecting nothing.
  const hsize_t one_row[2] = {1, hsize_t(width)};
  const Id memspace(H5Screate_simple(rank, count[0] > 0 ? count : one_row, nullptr), H5Sclose);
  if (count[0] > 0) {
    H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  } else {
    H5Sselect_none(space.get());
    H5Sselect_none(memspace.get());
  }
  const Id dxpl = collective_transfer();
  const T nothing{};
  agree(H5Dwrite(set.get(), memory_type<T>(), memspace.get(), space.get(), dxpl.get(),
                 mine.empty() ? &nothing : mine.data()) >= 0,
        "cannot write the dataset", name);
}

template <class T>
std::vector<T> File::read_row_list(const std::string& name, std::span<const std::int64_t> rows,
                                   std::int64_t width) const {
  const Id set(H5Dopen2(id_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (set.get() < 0) fail("has no dataset", name);
  const Id space(H5Dget_space(set.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2 || dims[1] != hsize_t(width))
    fail(fmt::format("rows of width {} are not in the dataset", width), name);
  const Id type(H5Dget_type(set.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5Tget_class(memory_type<T>()))
    fail("has the wrong element type in the dataset", name);
  // One hyperslab per run of consecutive rows, joined: one collective read for any row set.
  H5Sselect_none(space.get());
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    if (rows[i] < 0 || hsize_t(rows[j - 1]) >= dims[0] || (i > 0 && rows[i] <= rows[i - 1]))
      fail(fmt::format("row {} is not in the dataset (or the rows are not ascending)", rows[i]),
           name);
    const hsize_t start[2] = {hsize_t(rows[i]), 0};
    const hsize_t count[2] = {hsize_t(j - i), hsize_t(width)};
    H5Sselect_hyperslab(space.get(), H5S_SELECT_OR, start, nullptr, count, nullptr);
    i = j;
  }
  std::vector<T> out(rows.size() * std::size_t(width));
  const hsize_t count[2] = {hsize_t(rows.size()), hsize_t(width)};
  const Id memspace(H5Screate_simple(2, count, nullptr), H5Sclose);
  if (rows.empty()) H5Sselect_none(memspace.get());
  const Id dxpl = collective_transfer();
  agree(H5Dread(set.get(), memory_type<T>(), memspace.get(), space.get(), dxpl.get(), out.data()) >=
            0,
        "cannot read the dataset", name);
  return out;
}

template <class T>
std::vector<T> File::read_rows(const std::string& name, std::int64_t first_row, std::int64_t rows,
                               std::int64_t width) const {
  std::vector<std::int64_t> list(std::size_t(std::max<std::int64_t>(rows, 0)));
  for (std::size_t i = 0; i < list.size(); ++i) list[i] = first_row + std::int64_t(i);
  return read_row_list<T>(name, list, width);
}

bool File::has(const std::string& name) const {
  return H5Lexists(id_.get(), name.c_str(), H5P_DEFAULT) > 0;
}

std::int64_t File::rows(const std::string& name) const {
  if (!has(name)) return 0;
  const Id set(H5Dopen2(id_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  if (set.get() < 0) return 0;
  const Id space(H5Dget_space(set.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 1) return 0;
  return std::int64_t(dims[0]);
}

void File::set_attribute(const std::string& name, std::string_view text) {
  const Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1));
  const Id space(H5Screate(H5S_SCALAR), H5Sclose);
  const Id attr(
      H5Acreate2(id_.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const std::string padded = text.empty() ? std::string(1, '\0') : std::string(text);
  agree(attr.get() >= 0 && H5Awrite(attr.get(), type.get(), padded.data()) >= 0,
        "cannot write the attribute", name);
}

void File::set_attribute(const std::string& name, std::int64_t value) {
  const Id space(H5Screate(H5S_SCALAR), H5Sclose);
  const Id attr(
      H5Acreate2(id_.get(), name.c_str(), H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  agree(attr.get() >= 0 && H5Awrite(attr.get(), H5T_NATIVE_INT64, &value) >= 0,
        "cannot write the attribute", name);
}

void File::set_attribute(const std::string& name, double value) {
  const Id space(H5Screate(H5S_SCALAR), H5Sclose);
  const Id attr(
      H5Acreate2(id_.get(), name.c_str(), H5T_NATIVE_DOUBLE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  agree(attr.get() >= 0 && H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &value) >= 0,
        "cannot write the attribute", name);
}

void File::set_attribute(const std::string& object, const std::string& name,
                         std::string_view text) {
  const Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1));
  const Id space(H5Screate(H5S_SCALAR), H5Sclose);
  const Id attr(H5Acreate_by_name(id_.get(), object.c_str(), name.c_str(), type.get(), space.get(),
                                  H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  const std::string padded = text.empty() ? std::string(1, '\0') : std::string(text);
  agree(attr.get() >= 0 && H5Awrite(attr.get(), type.get(), padded.data()) >= 0,
        "cannot write the attribute", object + "/" + name);
}

void File::set_attribute(const std::string& object, const std::string& name,
                         std::span<const std::int64_t> values) {
  const hsize_t n = values.size();
  const Id space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  const Id attr(H5Acreate_by_name(id_.get(), object.c_str(), name.c_str(), H5T_NATIVE_INT64,
                                  space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  agree(attr.get() >= 0 && H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()) >= 0,
        "cannot write the attribute", object + "/" + name);
}

std::string File::text_attribute(const std::string& name) const {
  const Id attr(H5Aopen(id_.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (attr.get() < 0) fail("has no attribute", name);
  const Id type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0)
    fail("has a non-text attribute", name);
  std::string text(H5Tget_size(type.get()), '\0');
  const Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem.get(), text.size());
  if (H5Aread(attr.get(), mem.get(), text.data()) < 0) fail("cannot read the attribute", name);
  if (const auto nul = text.find('\0'); nul != std::string::npos) text.resize(nul);
  return text;
}

std::int64_t File::int_attribute(const std::string& name) const {
  const Id attr(H5Aopen(id_.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (attr.get() < 0) fail("has no attribute", name);
  std::int64_t value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) fail("cannot read the attribute", name);
  return value;
}

double File::real_attribute(const std::string& name) const {
  const Id attr(H5Aopen(id_.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
  if (attr.get() < 0) fail("has no attribute", name);
  double value = 0;
  if (H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &value) < 0) fail("cannot read the attribute", name);
  return value;
}

void File::close() {
  if (id_.get() < 0) return;
  const bool flushed = H5Fflush(id_.get(), H5F_SCOPE_GLOBAL) >= 0;
  agree(id_.reset() && flushed, "cannot write the file to the end", "");
}

#define MINIAMR_H5_ROWS(T)                                                                   \
  template void File::write_rows<T>(const std::string&, std::span<const T>, std::int64_t,    \
                                    std::int64_t, std::int64_t);                             \
  template std::vector<T> File::read_rows<T>(const std::string&, std::int64_t, std::int64_t, \
                                             std::int64_t) const;                            \
  template std::vector<T> File::read_row_list<T>(                                            \
      const std::string&, std::span<const std::int64_t>, std::int64_t) const;                \
  template void File::write_vector<T>(const std::string&, std::span<const T>, std::int64_t,  \
                                      std::int64_t);
MINIAMR_H5_ROWS(double)
MINIAMR_H5_ROWS(float)
MINIAMR_H5_ROWS(std::int64_t)
MINIAMR_H5_ROWS(std::uint64_t)
MINIAMR_H5_ROWS(std::uint32_t)
MINIAMR_H5_ROWS(std::int32_t)
MINIAMR_H5_ROWS(std::uint8_t)
#undef MINIAMR_H5_ROWS

}  // namespace miniamr::h5
