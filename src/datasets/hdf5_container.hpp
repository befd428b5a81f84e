// The engine's HDF5 container: HDF5 keeps the metadata, the engine moves the raw data.
//
// create_hdf5_container makes the file and every dataset (contiguous layout, storage allocated
// at creation, never filled, optional text attributes), reads each dataset's file offset with
// H5Dget_offset and closes every handle; the engine then writes all datasets' bytes at those
// offsets in one phase. Rank 0 does the HDF5 work with the serial driver (no metadata passes
// through MPI-IO's collective path) and broadcasts the offsets; the step is collective: every
// rank gets the offsets or the same error. The file then opens in h5py and h5dump like any
// other. hdf5_container_offsets is the reading side: it checks each dataset's shape and type.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/datasets.hpp"

namespace strata {

std::vector<uint64_t> create_hdf5_container(MPI_Comm comm, const std::string& path,
                                            const std::vector<DatasetSpec>& datasets);
std::vector<uint64_t> hdf5_container_offsets(MPI_Comm comm, const std::string& path,
                                             const std::vector<DatasetSpec>& datasets);

}  // namespace strata
