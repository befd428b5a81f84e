#include "datasets/hdf5_container.hpp"

#include <optional>

#include "common/error.hpp"
#include "datasets/hdf5_types.hpp"

namespace strata {

namespace {

std::string shape_text(const std::vector<uint64_t>& s) {
  std::string t;
  for (uint64_t x : s) t += (t.empty() ? "" : "x") + std::to_string(x);
  return t;
}

void write_attribute(hid_t ds, const DatasetAttribute& a, const std::string& where) {
  H5Id type(check_id(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check_status(H5Tset_size(type.get(), a.value.empty() ? 1 : a.value.size()), "H5Tset_size");
  H5Id space(check_id(H5Screate(H5S_SCALAR), "H5Screate"));
  H5Id attr(check_id(H5Acreate2(ds, a.name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                     "cannot create attribute \"" + a.name + "\" of " + where));
  const std::string value = a.value.empty() ? std::string(1, '\0') : a.value;
  check_status(H5Awrite(attr.get(), type.get(), value.data()), "H5Awrite of attribute \"" + a.name + "\"");
}

// Rank 0 runs `fn` (which fills `offsets`), then every rank gets the offsets or the error.
template <class F>
std::vector<uint64_t> on_rank0(MPI_Comm comm, size_t n, F&& fn) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<uint64_t> offsets(n, 0);
  collectively(comm, [&] {
    if (rank == 0) fn(offsets);
  });
  if (n > 0) MPI_Bcast(offsets.data(), static_cast<int>(n), MPI_UINT64_T, 0, comm);
  return offsets;
}

uint64_t dataset_offset(hid_t ds, const std::string& name, const std::string& path) {
  const haddr_t off = H5Dget_offset(ds);
  if (off == HADDR_UNDEF) {
    throw_runtime("dataset \"" + name + "\" in \"" + path +
                  "\" has no contiguous storage allocated (the engine's HDF5 container needs contiguous layout with "
                  "early allocation)");
  }
  return static_cast<uint64_t>(off);
}

}  // namespace

std::vector<uint64_t> create_hdf5_container(MPI_Comm comm, const std::string& path,
                                            const std::vector<DatasetSpec>& datasets) {
  return on_rank0(comm, datasets.size(), [&](std::vector<uint64_t>& offsets) {
    quiet_hdf5_errors();
    H5Id fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
    // The newest format: compact object headers, so metadata stays small beside the data.
    check_status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds");
    H5Id file(check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                       "cannot create HDF5 file \"" + path + "\""));
    H5Id dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
    check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
    check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    for (size_t i = 0; i < datasets.size(); ++i) {
      const DatasetSpec& d = datasets[i];
      std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
      H5Id space(check_id(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple"));
      H5Id ds(check_id(H5Dcreate2(file.get(), d.name.c_str(), hdf5_file_type(d.type), space.get(), H5P_DEFAULT,
                                  dcpl.get(), H5P_DEFAULT),
                       "cannot create dataset \"" + d.name + "\" in \"" + path + "\""));
      for (const auto& a : d.attributes) write_attribute(ds.get(), a, "dataset \"" + d.name + "\"");
      offsets[i] = dataset_offset(ds.get(), d.name, path);
    }
    check_status(H5Fclose(file.release()), "H5Fclose of \"" + path + "\"");
  });
}

std::vector<uint64_t> hdf5_container_offsets(MPI_Comm comm, const std::string& path,
                                             const std::vector<DatasetSpec>& datasets) {
  return on_rank0(comm, datasets.size(), [&](std::vector<uint64_t>& offsets) {
    quiet_hdf5_errors();
    H5Id file(check_id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT),
                       "cannot open HDF5 file \"" + path + "\" for reading"));
    for (size_t i = 0; i < datasets.size(); ++i) {
      const DatasetSpec& d = datasets[i];
      if (H5Lexists(file.get(), d.name.c_str(), H5P_DEFAULT) <= 0) {
        throw_runtime("HDF5 file \"" + path + "\" has no dataset \"" + d.name + "\"");
      }
      H5Id ds(check_id(H5Dopen2(file.get(), d.name.c_str(), H5P_DEFAULT), "cannot open dataset \"" + d.name + "\""));
      H5Id space(check_id(H5Dget_space(ds.get()), "H5Dget_space"));
      const int nd = H5Sget_simple_extent_ndims(space.get());
      std::vector<hsize_t> dims(static_cast<size_t>(nd > 0 ? nd : 0));
      H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
      const std::vector<uint64_t> got(dims.begin(), dims.end());
      H5Id type(check_id(H5Dget_type(ds.get()), "H5Dget_type"));
      if (got != d.shape || H5Tget_size(type.get()) != elem_size(d.type)) {
        throw_runtime("dataset \"" + d.name + "\" in \"" + path + "\" has shape " + shape_text(got) + " and " +
                      std::to_string(H5Tget_size(type.get())) + "-byte elements; expected " + shape_text(d.shape) +
                      " of " + elem_name(d.type));
      }
      offsets[i] = dataset_offset(ds.get(), d.name, path);
    }
  });
}

}  // namespace strata
