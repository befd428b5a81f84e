// A run as a library call, as IOR's core is: strata::run(options, comm) builds the kernel's data,
// writes (and/or reads) it `repetitions` times through a backend — or, for an application kernel,
// through the kernel's own output phase — times and verifies every phase, and returns the record.
// The strata program only turns argv into RunOptions (run_options.hpp) and prints the record.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "common/process_memory.hpp"
#include "run/run_options.hpp"
#include "run/run_record.hpp"

namespace strata {

// What the record says about the program around the run.
struct RunEnvironment {
  std::vector<std::string> mpi_workarounds;  // settings applied before MPI_Init (common/mpi_env.hpp)
  AllocatorSettings allocator;               // the program's malloc settings (common/process_memory.hpp)
  std::string git_rev = "unknown";           // the revision the program was built from
};

// Collective over `comm`. `options` come from RunOptions::parse, or are set field by field (the
// kernel's own options then take their defaults). Bad options, a layout the backend cannot express and I/O errors throw
// a strata::Error on every rank alike; a verification mismatch does not: the record's `failure`
// says it (every rank holds the same record).
RunRecord run(const RunOptions& options, MPI_Comm comm, const RunEnvironment& env = {});

}  // namespace strata
