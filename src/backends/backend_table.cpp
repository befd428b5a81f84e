// The backend table: a row per backend built in, and what reads it. A new backend is its file
// (the class and the function returning its row), a row here and a line in CMakeLists.txt;
// docs/extending.md shows one.
#include <algorithm>

#include "backends/backend.hpp"
#include "common/error.hpp"
#include "common/suggest.hpp"
#ifdef STRATA_HAVE_HDF5
#include "common/hdf5_handles.hpp"
#endif

namespace strata {

// Each defined in its backend's file (src/backends/<name>_backend.cpp).
BackendRow posix_backend_row();
BackendRow mpiio_ind_backend_row();
BackendRow mpiio_coll_backend_row();
BackendRow strata_backend_row();
BackendRow hdf5_backend_row();
BackendRow hdf5_multi_backend_row();
BackendRow pnetcdf_backend_row();

const std::vector<BackendRow>& backend_table() {
  static const std::vector<BackendRow> rows = {
      posix_backend_row(),      mpiio_ind_backend_row(), mpiio_coll_backend_row(), strata_backend_row(),
#ifdef STRATA_HAVE_HDF5
      hdf5_backend_row(),
#endif
#ifdef STRATA_HAVE_HDF5_MULTI
      hdf5_multi_backend_row(),
#endif
#ifdef STRATA_HAVE_PNETCDF
      pnetcdf_backend_row(),
#endif
  };
  return rows;
}

std::string hint_family_name(HintFamily h) {
  switch (h) {
    case HintFamily::none: return "none";
    case HintFamily::mpi_io: return "mpi-io";
    case HintFamily::engine: return "engine";
  }
  return "?";
}

bool BackendCapabilities::supports(Layout l) const {
  return std::find(layouts.begin(), layouts.end(), l) != layouts.end();
}

bool BackendCapabilities::takes(const std::string& option) const {
  return std::find(options.begin(), options.end(), option) != options.end();
}

std::string backends_that(const std::function<bool(const BackendRow&)>& pred, const std::string& none) {
  std::vector<std::string> names;
  for (const BackendRow& row : backend_table()) {
    if (pred(row)) names.push_back(row.name);
  }
  if (names.empty()) return none;
  std::string text = names.front();
  for (size_t i = 1; i < names.size(); ++i) text += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

const BackendRow& backend_row(const std::string& name) {
  std::string known;
  for (const BackendRow& row : backend_table()) {
    if (row.name == name) return row;
    known += (known.empty() ? "" : ", ") + row.name;
  }
  if (name == "hdf5-multi") {
    // H5Dwrite_multi first shipped in HDF5 1.14; this build's HDF5 is older (or absent).
    throw_usage("backend hdf5-multi (H5Dwrite_multi) needs HDF5 >= 1.14 and is not built in" +
#ifdef STRATA_HAVE_HDF5
                std::string(" (this build has HDF5 ") + hdf5_library_version() + ")" +
#endif
                std::string("; `make build-hdf5-114` builds HDF5 1.14 and Strata against it (build-hdf5-114/bin/strata)"
                            "; --backend strata --container hdf5 writes every dataset in one collective phase"));
  }
  std::vector<std::string> names;
  for (const BackendRow& row : backend_table()) names.push_back(row.name);
  throw_usage("unknown backend \"" + name + "\"" + did_you_mean(name, names) + " (available: " + known + ")");
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendContext& ctx, const Decomposition& d,
                                      const Target& target) {
  const BackendRow& row = backend_row(name);
  if (!row.can.supports(target.layout)) {
    throw_usage("backend " + name + " writes " +
                (row.can.supports(Layout::shared) ? std::string("one shared file") : std::string("no shared file")) +
                "; it cannot express --" + layout_name(target.layout) + " (use " +
                backends_that([&](const BackendRow& r) { return r.can.supports(target.layout); }) + ")");
  }
  return row.make(ctx, d, target);
}

}  // namespace strata
