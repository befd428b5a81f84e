// The MPI library underneath: its name and version, the MPI-IO component in use, and the
// settings Strata applies before MPI_Init to steer around known defects.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace strata {

struct MpiLibrary {
  std::string name;        // "Open MPI", "MPICH", ...
  std::string version;     // "4.1.4"
  std::string full;        // MPI_Get_library_version, first line
  int standard_major = 0;  // MPI standard version
  int standard_minor = 0;
};

MpiLibrary mpi_library();

// Known-defect workarounds (MPI-IO-NOTES.md): Open MPI < 4.1.7 can corrupt data with OMPIO's
// write data sieving (ompi #12718) and < 4.1.5 mis-sizes read data sieving (#10546). Before
// MPI_Init, Strata turns both off through OMPI_MCA_* variables unless the user set them.
// Returns a description of each setting applied. Must be called before MPI_Init.
std::vector<std::string> apply_mpi_workarounds_before_init();

// "ompio", "romio" or "unknown": the MPI-IO component files are opened with.
// Open MPI picks OMPIO unless the io MCA parameter selects ROMIO (mpirun --mca io romio321
// exports OMPI_MCA_io); MPICH always uses ROMIO.
std::string io_component();
// What is known to go wrong with real I/O errors under MPI-IO component `component` of this
// MPI library (empty when nothing is): Open MPI 4.x's OMPIO loses some write errors or waits
// forever (docs/reliability.md). Said by strata info and in a run's warnings.
std::string io_component_caveat(const std::string& component);
// The same, decided from the info keys of an open file (ROMIO reports romio_* keys).
std::string io_component_of(MPI_File fh);

// The communicator a Fortran handle names, or MPI_COMM_NULL when it names none. MPI_Comm_f2c does
// not check its argument and the libraries answer an unknown handle differently (Open MPI: a null
// pointer; MPICH: a handle whose first use raises MPI_ERR_COMM, fatal under the default error
// handler), so the handle is tried with MPI_Comm_size under MPI_ERRORS_RETURN on MPI_COMM_WORLD
// and MPI_COMM_SELF (where each library raises an error on no valid communicator). Local: no rank
// waits for another.
MPI_Comm comm_from_fortran(MPI_Fint handle);

}  // namespace strata
