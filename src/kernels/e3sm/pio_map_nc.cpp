// E3SM-IO's decomposition files (made by its utils/dat2nc from PIO's .dat maps), read with
// PnetCDF on this rank alone: dimension num_decomp, and for each decomposition i = 1..num_decomp
// the global attributes Di.ndims and Di.dims (C order, slowest first) and the per-process
// variables Di.nreqs, Di.fill_starts, Di.offsets and Di.lengths (0-based offsets of runs, merged
// where contiguous within a row). Requests from fill_starts on were added by dat2nc -f to cover
// the array's gaps: they are not in the .dat map, so they are left out and the map written is the
// .dat's, element for element.
#include "kernels/e3sm/pio_map.hpp"

#ifdef STRATA_HAVE_PNETCDF
#include <mpi.h>
#include <pnetcdf.h>
#endif

#include "common/error.hpp"

namespace strata {

bool is_e3sm_map_file(const std::string& path) {
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".nc") == 0;
}

#ifdef STRATA_HAVE_PNETCDF

namespace {

class NcFile {
 public:
  explicit NcFile(const std::string& path) : path_(path) {
    check(ncmpi_open(MPI_COMM_SELF, path.c_str(), NC_NOWRITE, MPI_INFO_NULL, &id_), "cannot open");
  }
  ~NcFile() {
    if (id_ >= 0) ncmpi_close(id_);
  }
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;

  void check(int rc, const std::string& what) const {
    if (rc != NC_NOERR) {
      throw_usage("E3SM-IO map \"" + path_ + "\": " + what + ": " + ncmpi_strerror(rc) +
                  " (expected a decomposition file from E3SM-IO's dat2nc)");
    }
  }
  MPI_Offset dim(const std::string& name) const {
    int d = -1;
    MPI_Offset n = 0;
    check(ncmpi_inq_dimid(id_, name.c_str(), &d), "no dimension " + name);
    check(ncmpi_inq_dimlen(id_, d, &n), "dimension " + name);
    return n;
  }
  std::vector<long long> global(const std::string& name) const {
    MPI_Offset n = 0;
    check(ncmpi_inq_attlen(id_, NC_GLOBAL, name.c_str(), &n), "no global attribute " + name);
    std::vector<long long> v(static_cast<size_t>(n));
    check(ncmpi_get_att_longlong(id_, NC_GLOBAL, name.c_str(), v.data()), "global attribute " + name);
    return v;
  }
  std::vector<long long> ints(const std::string& name) const {
    int v = -1, dimid = -1, ndims = 0;
    check(ncmpi_inq_varid(id_, name.c_str(), &v), "no variable " + name);
    check(ncmpi_inq_varndims(id_, v, &ndims), "variable " + name);
    if (ndims != 1) throw_usage("E3SM-IO map \"" + path_ + "\": variable " + name + " is not one-dimensional");
    check(ncmpi_inq_vardimid(id_, v, &dimid), "variable " + name);
    MPI_Offset n = 0;
    check(ncmpi_inq_dimlen(id_, dimid, &n), "variable " + name);
    std::vector<long long> out(static_cast<size_t>(n));
    check(ncmpi_get_var_longlong_all(id_, v, out.data()), "reading " + name);
    return out;
  }
  [[noreturn]] void bad(const std::string& what) const { throw_usage("E3SM-IO map \"" + path_ + "\": " + what); }

 private:
  std::string path_;
  int id_ = -1;
};

}  // namespace

std::vector<PioMap> read_e3sm_maps(const std::string& path) {
  NcFile nc(path);
  const MPI_Offset count = nc.dim("num_decomp");
  const MPI_Offset nprocs = nc.dim("decomp_nprocs");
  std::vector<PioMap> maps;
  for (MPI_Offset i = 1; i <= count; ++i) {
    const std::string D = "D" + std::to_string(i) + ".";
    PioMap map;
    map.npes = static_cast<int>(nprocs);
    const std::vector<long long> dims = nc.global(D + "dims");
    if (dims.empty() || static_cast<long long>(dims.size()) != nc.global(D + "ndims").at(0)) {
      nc.bad(D + "dims does not hold " + D + "ndims sizes");
    }
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {  // PIO's order: fastest first
      if (*it <= 0) nc.bad(D + "dims holds a size below 1");
      map.dims.push_back(static_cast<uint64_t>(*it));
    }
    const auto nreqs = nc.ints(D + "nreqs"), fill = nc.ints(D + "fill_starts");
    const auto offsets = nc.ints(D + "offsets"), lengths = nc.ints(D + "lengths");
    if (nreqs.size() != static_cast<size_t>(nprocs) || fill.size() != nreqs.size() ||
        lengths.size() != offsets.size()) {
      nc.bad(D + "nreqs, fill_starts, offsets and lengths disagree in size");
    }
    const uint64_t elements = map.elements();
    size_t at = 0;  // this process's first request in offsets[] and lengths[]
    for (size_t r = 0; r < nreqs.size(); ++r) {
      if (nreqs[r] < 0 || fill[r] < 0 || fill[r] > nreqs[r] || at + static_cast<size_t>(nreqs[r]) > offsets.size()) {
        nc.bad(D + "nreqs or fill_starts of process " + std::to_string(r) + " is out of range");
      }
      std::vector<uint64_t>& mine = map.offsets.emplace_back();
      for (long long q = 0; q < fill[r]; ++q) {
        const long long off = offsets[at + static_cast<size_t>(q)], len = lengths[at + static_cast<size_t>(q)];
        if (off < 0 || len < 0 || static_cast<uint64_t>(off + len) > elements) {
          nc.bad(D + "a request of process " + std::to_string(r) + " lies outside the array");
        }
        for (long long k = 0; k < len; ++k) mine.push_back(static_cast<uint64_t>(off + k) + 1);  // PIO: 1-based
      }
      at += static_cast<size_t>(nreqs[r]);
    }
    maps.push_back(std::move(map));
  }
  if (maps.empty()) nc.bad("no decompositions (num_decomp is 0)");
  return maps;
}

#else

std::vector<PioMap> read_e3sm_maps(const std::string& path) {
  throw_usage("E3SM-IO map \"" + path + "\": reading .nc maps needs PnetCDF, which this build leaves out");
}

#endif

}  // namespace strata
