#include "backends/backend.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "arch/node_local.hpp"
#include "backends/backend_factories.hpp"
#include "common/error.hpp"
#ifdef STRATA_HAVE_HDF5
#include "common/hdf5_handles.hpp"
#endif
#include "strata/strata.hpp"

namespace strata {

std::string layout_name(Layout l) {
  switch (l) {
    case Layout::shared: return "shared";
    case Layout::file_per_process: return "file-per-process";
    case Layout::file_per_node: return "file-per-node";
  }
  return "?";
}

FileGroup file_group(MPI_Comm comm, const NodeMap& nodes, const Target& t, const Decomposition& d) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  FileGroup f;
  std::string path = t.path;
  collectively(comm, [&] {
    if (t.node_local) {
      if (t.layout == Layout::shared) {
        throw_usage("--node-local needs --file-per-node or --file-per-process: a shared file cannot live on "
                    "node-local storage");
      }
      path = (std::filesystem::path(node_local_dir(nodes.node)) / std::filesystem::path(t.path).filename()).string();
    }
  });
  char suffix[24];
  const unsigned long long local = d.local_bytes();
  switch (t.layout) {
    case Layout::shared:
      f.path = path;
      f.comm = comm;
      f.creator = rank == 0;
      f.bytes_needed = d.global_bytes();
      f.files = 1;
      break;
    case Layout::file_per_process:
      std::snprintf(suffix, sizeof suffix, ".%08d", rank);
      f.path = path + suffix;
      f.comm = MPI_COMM_SELF;
      f.raw_layout = false;
      f.bytes_needed = local;
      f.files = size;
      break;
    case Layout::file_per_node: {
      std::snprintf(suffix, sizeof suffix, ".node%05d", nodes.node);
      f.path = path + suffix;
      f.comm = nodes.node_comm.get();
      f.raw_layout = false;
      unsigned long long before = 0;
      MPI_Exscan(&local, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, f.comm);
      f.base = nodes.local_rank == 0 ? 0 : before;
      f.bytes_needed = f.base + local;
      f.creator = nodes.local_rank == 0;
      f.files = nodes.node_count;
      break;
    }
  }
  return f;
}

uint64_t file_offset(const FileGroup& f, const Decomposition& d, int var, uint64_t elem_begin, uint64_t mem_offset) {
  if (!f.raw_layout) return f.base + mem_offset;
  return d.variable_offset(var) + elem_begin * elem_size(d.variables[static_cast<size_t>(var)].type);
}

std::vector<BackendInfo> backend_list() {
  std::vector<BackendInfo> out = {
      {"posix", "pwrite/pread: one shared file, or a file per process with --file-per-process"},
      {"mpiio-ind", "MPI-IO independent MPI_File_write_at/read_at at explicit offsets"},
      {"mpiio-coll", "MPI-IO collective MPI_File_write_at_all/read_at_all through a derived-datatype file view"},
      {"strata", "Strata's engine: one planned phase, one-sided puts into pipelined aggregator buffers"},
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
  if (name == "strata") return make_strata_backend(ctx, d, target);
#ifdef STRATA_HAVE_HDF5
  if (name == "hdf5") return make_hdf5_backend(ctx, d, target);
#endif
#ifdef STRATA_HAVE_PNETCDF
  if (name == "pnetcdf") return make_pnetcdf_backend(ctx, d, target);
#endif
  check_backend_name(name);
  throw_usage("backend \"" + name + "\" is not built in");
}

void check_backend_options(const std::string& name, const BackendOptions& o) {
  if (o.per_block && name != "hdf5") throw_usage("--per-block applies to backend hdf5 only");
  if (o.per_variable && name != "mpiio-coll") throw_usage("--per-variable applies to backend mpiio-coll only");
  if (o.container != "raw" && name != "strata") throw_usage("--container applies to backend strata only");
  if (o.container != "raw" && o.container != "hdf5") {
    throw_usage("unknown container \"" + o.container + "\" (available: raw, hdf5)");
  }
}

void check_backend_name(const std::string& name) {
  if (name == "hdf5-multi") {
    // H5Dwrite_multi first shipped in HDF5 1.14; no such backend is built here.
    throw_usage("backend hdf5-multi (H5Dwrite_multi) needs HDF5 >= 1.14 and is not built in" +
#ifdef STRATA_HAVE_HDF5
                std::string(" (this build has HDF5 ") + hdf5_library_version() + ")" +
#endif
                std::string("; --backend strata --container hdf5 writes every dataset in one collective phase"));
  }
  std::string known;
  for (const auto& b : backend_list()) {
    if (b.name == name) return;
    known += (known.empty() ? "" : ", ") + b.name;
  }
  throw_usage("unknown backend \"" + name + "\" (available: " + known + ")");
}

void remove_output(const BackendContext& ctx) {
  if (!ctx.file.creator) return;
  const std::string& path = ctx.file.path;
  // The engine's index describes the output it wrote; any new write makes it stale.
  for (const std::string& p : {path, index_path(path)}) {
    if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
      throw_system("cannot remove the previous output \"" + p + "\"", errno);
    }
  }
}

}  // namespace strata
