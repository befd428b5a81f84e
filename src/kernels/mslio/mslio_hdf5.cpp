// MSLIO's hdf5 mode, the paper's other proposed next step: one HDF5 file for visualisation, one
// float64 dataset per dimension ("dim0", "dim1", ...) holding every local problem's points in
// problem order; each rank writes its contiguous range of problems collectively, straight from
// its point-by-point memory through a strided memory selection (no copy).
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/error.hpp"
#include "fs/mpiio_file.hpp"
#include "kernels/mslio/mslio_io.hpp"

#ifdef STRATA_HAVE_HDF5
#include "common/hdf5_handles.hpp"
#include "common/hints.hpp"
#endif

namespace strata::mslio {

#ifndef STRATA_HAVE_HDF5

bool have_hdf5() { return false; }
CallTotals write_hdf5(const Setup&, const double*, MPI_Comm, const Hints&, bool) {
  throw_usage("this strata was built without HDF5 (configure with -DSTRATA_WITH_HDF5=ON)");
}
CallTotals read_hdf5(const Setup&, const double*, MPI_Comm, const Hints&, bool, std::optional<std::string>&) {
  throw_usage("this strata was built without HDF5 (configure with -DSTRATA_WITH_HDF5=ON)");
}

#else

bool have_hdf5() { return true; }

namespace {

H5Id access_list(MPI_Comm comm, const Hints& hints) {
  H5Id fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"));
  MpiInfo info(hints);
  check_status(H5Pset_fapl_mpio(fapl.get(), comm, info.get()), "H5Pset_fapl_mpio");
  return fapl;
}

std::string dataset_name(unsigned d) { return "dim" + std::to_string(d); }

// This rank's points of one dimension, in the file and in the point-by-point memory.
void select(const Setup& s, unsigned d, hid_t file_space, hid_t memory_space) {
  if (s.count == 0) {
    check_status(H5Sselect_none(file_space), "H5Sselect_none");
    check_status(H5Sselect_none(memory_space), "H5Sselect_none");
    return;
  }
  hsize_t start = s.first * s.points, count = s.count * s.points;
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr), "select");
  hsize_t mstart = d, mstride = s.dims;
  check_status(H5Sselect_hyperslab(memory_space, H5S_SELECT_SET, &mstart, &mstride, &count, nullptr), "select");
}

H5Id memory_space(const Setup& s) {
  hsize_t n = std::max<hsize_t>(s.count * s.values(), 1);
  return H5Id(check_id(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
}

H5Id collective_transfer() {
  H5Id dxpl(check_id(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"));
  check_status(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  return dxpl;
}

}  // namespace

CallTotals write_hdf5(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints, bool fsync) {
  CallTotals total;
  const double t0 = now_s();
  H5Id fapl = access_list(comm, hints);
  H5Id file(check_id(H5Fcreate(mpiio_path(s.hdf5_path()).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                     "cannot create \"" + s.hdf5_path() + "\""));
  std::vector<H5Id> datasets;
  hsize_t n = s.problems * s.points;
  H5Id dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
  check_status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  for (unsigned d = 0; d < s.dims; ++d) {
    H5Id space(check_id(H5Screate_simple(1, &n, nullptr), "H5Screate_simple"));
    datasets.emplace_back(check_id(H5Dcreate2(file.get(), dataset_name(d).c_str(), H5T_IEEE_F64LE, space.get(),
                                              H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                   "cannot create dataset " + dataset_name(d)));
  }
  const double t1 = now_s();
  H5Id dxpl = collective_transfer();
  H5Id mspace = memory_space(s);
  double dummy = 0;
  for (unsigned d = 0; d < s.dims; ++d) {
    H5Id fspace(check_id(H5Dget_space(datasets[d].get()), "H5Dget_space"));
    select(s, d, fspace.get(), mspace.get());
    check_status(H5Dwrite(datasets[d].get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(),
                          s.count ? memory : &dummy),
                 "H5Dwrite of " + dataset_name(d) + " in \"" + s.hdf5_path() + "\"");
    ++total.writes;
  }
  const double t2 = now_s();
  if (fsync) check_status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
  datasets.clear();
  check_status(H5Fclose(file.release()), "H5Fclose of \"" + s.hdf5_path() + "\"");
  total.open_s = t1 - t0;
  total.write_s = t2 - t1;
  total.close_s = now_s() - t2;
  total.opens = total.closes = 1;
  total.bytes = s.count * s.values() * sizeof(double);
  return total;
}

CallTotals read_hdf5(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints, bool compare,
                     std::optional<std::string>& mismatch) {
  CallTotals total;
  const double t0 = now_s();
  H5Id fapl = access_list(comm, hints);
  H5Id file(check_id(H5Fopen(mpiio_path(s.hdf5_path()).c_str(), H5F_ACC_RDONLY, fapl.get()),
                     "cannot open \"" + s.hdf5_path() + "\""));
  std::vector<H5Id> datasets;
  for (unsigned d = 0; d < s.dims; ++d) {
    datasets.emplace_back(check_id(H5Dopen2(file.get(), dataset_name(d).c_str(), H5P_DEFAULT),
                                   "\"" + s.hdf5_path() + "\" has no dataset " + dataset_name(d)));
    H5Id space(check_id(H5Dget_space(datasets.back().get()), "H5Dget_space"));
    hsize_t n = 0;
    if (H5Sget_simple_extent_ndims(space.get()) != 1 || H5Sget_simple_extent_dims(space.get(), &n, nullptr) < 0 ||
        n != s.problems * s.points) {
      throw_usage("dataset " + dataset_name(d) + " of \"" + s.hdf5_path() + "\" does not hold " +
                  std::to_string(s.problems) + " local problems of " + std::to_string(s.points) +
                  " points (written with other --ccross, --subelements?)");
    }
  }
  const double t1 = now_s();
  H5Id dxpl = collective_transfer();
  H5Id mspace = memory_space(s);
  std::vector<double> back(std::max<uint64_t>(s.count * s.values(), 1), -1.0);
  for (unsigned d = 0; d < s.dims; ++d) {
    H5Id fspace(check_id(H5Dget_space(datasets[d].get()), "H5Dget_space"));
    select(s, d, fspace.get(), mspace.get());
    check_status(H5Dread(datasets[d].get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(), back.data()),
                 "H5Dread of " + dataset_name(d) + " in \"" + s.hdf5_path() + "\"");
    ++total.writes;
  }
  const double t2 = now_s();
  datasets.clear();
  check_status(H5Fclose(file.release()), "H5Fclose of \"" + s.hdf5_path() + "\"");
  total.open_s = t1 - t0;
  total.write_s = t2 - t1;
  total.close_s = now_s() - t2;
  total.opens = total.closes = 1;
  total.bytes = s.count * s.values() * sizeof(double);
  if (compare) {
    for (uint64_t i = 0; i < s.count * s.values(); ++i) {
      if (std::memcmp(&back[i], &memory[i], sizeof(double)) != 0) {
        const uint64_t k = s.first + i / s.values(), p = (i % s.values()) / s.dims;
        const unsigned d = static_cast<unsigned>(i % s.dims);
        mismatch = "\"" + s.hdf5_path() + "\" dataset " + dataset_name(d) + ", local problem " + std::to_string(k) +
                   ", point " + std::to_string(p) + ": found " + std::to_string(back[i]) + ", expected " +
                   std::to_string(memory[i]);
        break;
      }
    }
  }
  return total;
}

#endif

}  // namespace strata::mslio
