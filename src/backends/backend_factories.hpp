// The rows of the backend table, one per backend, each defined in its backend's file; listed by
// backend_table() (backend_table.cpp) only.
#pragma once

#include "backends/backend.hpp"

namespace strata {

BackendRow posix_backend_row();
BackendRow mpiio_ind_backend_row();
BackendRow mpiio_coll_backend_row();
BackendRow strata_backend_row();
BackendRow hdf5_backend_row();
BackendRow pnetcdf_backend_row();

}  // namespace strata
