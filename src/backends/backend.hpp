// The backend interface: one Decomposition, many ways of writing and reading it.
//
// The driver calls open → transfer → close for each repetition, each step on every rank and
// followed by a collective agreement, so a failure anywhere is reported everywhere.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/hints.hpp"
#include "decomp/decomposition.hpp"

namespace strata {

enum class Access { write, read };

struct Target {
  std::string path;               // the shared file, or the prefix of per-process files
  bool file_per_process = false;  // rank r uses path.<r, 8 digits>
};

// Path of the file rank `rank` uses for `t`.
std::string file_path_for_rank(const Target& t, int rank);

struct BackendContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  Hints hints;                // MPI-IO hints asked for (--hints and STRATA_HINTS)
  bool fsync = false;         // sync data to storage before close completes
  std::string io_component;   // "ompio" or "romio"
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Opens (creating on write) the target. Local part of a collective step.
  virtual void open(Access access) = 0;
  // Moves the rank's buffer (Decomposition::local_bytes()) to or from the target.
  virtual void transfer(Access access, std::byte* buffer) = 0;
  // Syncs (if asked, on write) and closes.
  virtual void close() = 0;
  // Hints in effect as the I/O library reports them after open (empty for posix).
  virtual Hints hints_in_effect() const { return {}; }
  // File requests issued by this rank in the last transfer (calls into the I/O library).
  virtual uint64_t requests() const { return 0; }
};

struct BackendInfo {
  std::string name;
  std::string summary;
};

std::vector<BackendInfo> backend_list();
// Throws a usage Error naming the available backends when `name` is not one of them.
void check_backend_name(const std::string& name);
// Creates a backend. Throws a usage Error for an unknown name or a layout the backend cannot
// express (the same answer on every rank: it depends only on arguments and the decomposition).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendContext& ctx, const Decomposition& d,
                                      const Target& target);

// Removes the output of `target` (rank 0 for a shared file, each rank its own otherwise).
// Missing files are not an error. Local part of a collective step.
void remove_output(const BackendContext& ctx, const Target& target);

}  // namespace strata
