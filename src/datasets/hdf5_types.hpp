// The HDF5 types of Strata's element types, for the engine's HDF5 container and the hdf5 backend.
#pragma once

#include <hdf5.h>

#include "common/hdf5_handles.hpp"
#include "decomp/decomposition.hpp"

namespace strata {

hid_t hdf5_memory_type(ElemType t);  // native type
hid_t hdf5_file_type(ElemType t);    // little-endian file type

}  // namespace strata
