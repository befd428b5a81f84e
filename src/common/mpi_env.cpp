#include "common/mpi_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/hints.hpp"

namespace strata {

namespace {

// Parses "Open MPI v4.1.4, package: ..." or "MPICH Version: 4.0.2 ...".
void parse_library_string(const std::string& s, MpiLibrary& lib) {
  std::string first = s.substr(0, s.find('\n'));
  lib.full = first;
  if (first.rfind("Open MPI", 0) == 0) {
    lib.name = "Open MPI";
    auto v = first.find('v');
    if (v != std::string::npos) {
      auto end = first.find_first_of(", ", v);
      lib.version = first.substr(v + 1, end == std::string::npos ? std::string::npos : end - v - 1);
    }
  } else if (first.find("MPICH") != std::string::npos) {
    lib.name = "MPICH";
    auto v = first.find("Version:");
    if (v != std::string::npos) {
      std::istringstream in(first.substr(v + 8));
      in >> lib.version;
    }
  } else if (first.find("Intel") != std::string::npos) {
    lib.name = "Intel MPI";
  } else {
    lib.name = first.substr(0, first.find(' '));
  }
}

// a.b.c as a comparable number.
long version_number(const std::string& v) {
  int a = 0, b = 0, c = 0;
  std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c);
  return a * 10000L + b * 100L + c;
}

}  // namespace

MpiLibrary mpi_library() {
  MpiLibrary lib;
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  s = s.substr(0, s.find('\0'));
  parse_library_string(s, lib);
  MPI_Get_version(&lib.standard_major, &lib.standard_minor);
  return lib;
}

std::vector<std::string> apply_mpi_workarounds_before_init() {
  std::vector<std::string> applied;
  MpiLibrary lib = mpi_library();
  if (lib.name != "Open MPI") return applied;
  long v = version_number(lib.version);
  struct Fix {
    const char* variable;
    long fixed_in;
    const char* why;
  } fixes[] = {
      {"OMPI_MCA_fbtl_posix_write_datasieving", 40107, "OMPIO write data sieving can corrupt data (ompi #12718)"},
      {"OMPI_MCA_fbtl_posix_read_datasieving", 40105, "OMPIO read data sieving length bug (ompi #10546)"},
  };
  for (const auto& f : fixes) {
    if (v >= f.fixed_in || std::getenv(f.variable) != nullptr) continue;
    setenv(f.variable, "0", 0);
    applied.push_back(std::string(f.variable) + "=0: " + f.why);
  }
  // Virtual nodes put several "nodes" on one host. osc/rdma names a window's shared-memory
  // segment by host, job and the context id of a communicator it duplicates among the
  // window's members only, so windows of two virtual nodes can share a name and corrupt each
  // other (seen as failed unlink(2) warnings and wrong data). osc/sm does not collide.
  const bool virtual_nodes =
      std::getenv("STRATA_RANKS_PER_NODE") != nullptr || std::getenv("STRATA_NODE_MAP") != nullptr;
  if (virtual_nodes && std::getenv("OMPI_MCA_osc") == nullptr) {
    setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
    applied.push_back(
        "OMPI_MCA_osc=sm,pt2pt: virtual nodes share one host, where osc/rdma window segments of two "
        "node communicators can collide");
  }
  // A one-rank job cannot create a window over memory it brings (MPI_Win_create: an mmap'ed
  // nvr or tmpfs buffer) with Open MPI 4.1's default one-sided components — MPI_ERR_WIN, measured
  // with 4.1.4; two ranks and more work. osc/pt2pt serves it. Open MPI's launcher says the size.
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  const bool one_rank = world == nullptr || std::string(world) == "1";
  if (one_rank && std::getenv("OMPI_MCA_osc") == nullptr) {
    setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
    applied.push_back(
        "OMPI_MCA_osc=sm,pt2pt: a one-rank job needs osc/pt2pt to expose tier memory (nvr, tmpfs) "
        "with MPI_Win_create");
  }
  return applied;
}

std::string io_component() {
  MpiLibrary lib = mpi_library();
  if (lib.name == "MPICH" || lib.name == "Intel MPI") return "romio";
  if (lib.name != "Open MPI") return "unknown";
  const char* io = std::getenv("OMPI_MCA_io");
  if (io != nullptr) {
    std::string s = io;
    // "^ompio" excludes OMPIO; "romio321" selects ROMIO.
    if (s.find("romio") != std::string::npos && s[0] != '^') return "romio";
    if (s.find("ompio") != std::string::npos && s[0] == '^') return "romio";
  }
  return "ompio";
}

std::string io_component_caveat(const std::string& component) {
  const MpiLibrary lib = mpi_library();
  if (component != "ompio" || lib.name != "Open MPI" || version_number(lib.version) >= 50000) return "";
  return "Open MPI " + lib.version +
         "'s OMPIO can lose a failed write or wait forever on one (a full disk under "
         "mpiio-coll, hdf5 and pnetcdf: docs/reliability.md); where errors matter, prefer ROMIO (--mca io romio321)";
}

std::string io_component_of(MPI_File fh) {
  MPI_Info info = MPI_INFO_NULL;
  if (MPI_File_get_info(fh, &info) != MPI_SUCCESS) return io_component();
  MpiInfo owned(info);
  for (const auto& [k, v] : owned.entries()) {
    if (k.rfind("romio_", 0) == 0) return "romio";
  }
  MpiLibrary lib = mpi_library();
  return lib.name == "Open MPI" ? "ompio" : io_component();
}

MPI_Comm comm_from_fortran(MPI_Fint handle) {
  const MPI_Comm c = MPI_Comm_f2c(handle);
  // Open MPI's f2c of an index it does not know is a null pointer (MPICH's handle 0 is invalid too).
  if (c == MPI_COMM_NULL || c == MPI_Comm{}) return MPI_COMM_NULL;
  MPI_Errhandler world = MPI_ERRHANDLER_NULL, self = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &self);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int size = 0;
  const int rc = MPI_Comm_size(c, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, world);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, self);
  MPI_Errhandler_free(&world);
  MPI_Errhandler_free(&self);
  return rc == MPI_SUCCESS && size > 0 ? c : MPI_COMM_NULL;
}

}  // namespace strata
