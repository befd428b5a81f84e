// Constructors of the backend implementations, for the registry in backend.cpp only.
#pragma once

#include <memory>

#include "backends/backend.hpp"

namespace strata {

std::unique_ptr<Backend> make_posix_backend(const BackendContext& ctx, const Decomposition& d, const Target& t);
std::unique_ptr<Backend> make_mpiio_backend(const BackendContext& ctx, const Decomposition& d, const Target& t,
                                            bool collective);
std::unique_ptr<Backend> make_strata_backend(const BackendContext& ctx, const Decomposition& d, const Target& t);
std::unique_ptr<Backend> make_hdf5_backend(const BackendContext& ctx, const Decomposition& d, const Target& t);
std::unique_ptr<Backend> make_pnetcdf_backend(const BackendContext& ctx, const Decomposition& d, const Target& t);

}  // namespace strata
