#include "backends/backend.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "backends/backend_factories.hpp"
#include "common/error.hpp"

namespace strata {

std::string file_path_for_rank(const Target& t, int rank) {
  if (!t.file_per_process) return t.path;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, ".%08d", rank);
  return t.path + suffix;
}

std::vector<BackendInfo> backend_list() {
  std::vector<BackendInfo> out = {
      {"posix", "pwrite/pread: one shared file, or a file per process with --file-per-process"},
      {"mpiio-ind", "MPI-IO independent MPI_File_write_at/read_at at explicit offsets"},
      {"mpiio-coll", "MPI-IO collective MPI_File_write_at_all/read_at_all through a derived-datatype file view"},
  };
#ifdef STRATA_HAVE_HDF5
  out.push_back({"hdf5", "parallel HDF5: a dataset per variable, collective H5Dwrite of hyperslab selections"});
#endif
#ifdef STRATA_HAVE_PNETCDF
  out.push_back({"pnetcdf", "PnetCDF (CDF-5): a variable per variable, iput/iget of every block then one wait_all"});
#endif
  return out;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendContext& ctx, const Decomposition& d,
                                      const Target& target) {
  if (name == "posix") return make_posix_backend(ctx, d, target);
  if (name == "mpiio-ind") return make_mpiio_backend(ctx, d, target, false);
  if (name == "mpiio-coll") return make_mpiio_backend(ctx, d, target, true);
#ifdef STRATA_HAVE_HDF5
  if (name == "hdf5") return make_hdf5_backend(ctx, d, target);
#endif
#ifdef STRATA_HAVE_PNETCDF
  if (name == "pnetcdf") return make_pnetcdf_backend(ctx, d, target);
#endif
  check_backend_name(name);
  throw_usage("backend \"" + name + "\" is not built in");
}

void check_backend_name(const std::string& name) {
  std::string known;
  for (const auto& b : backend_list()) {
    if (b.name == name) return;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  throw_usage("unknown backend \"" + name + "\" (available: " + known + ")");
}

void remove_output(const BackendContext& ctx, const Target& target) {
  if (!target.file_per_process && ctx.rank != 0) return;
  const std::string path = file_path_for_rank(target, ctx.rank);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw_system("cannot remove the previous output \"" + path + "\"", errno);
  }
}

}  // namespace strata
