// The backend interface: one Decomposition, many ways of writing and reading it.
//
// The driver calls open → transfer → close for each repetition, each step on every rank and
// followed by a collective agreement, so a failure anywhere is reported everywhere.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "arch/node_map.hpp"
#include "backends/collective_calls.hpp"
#include "common/hints.hpp"
#include "decomp/decomposition.hpp"
#include "fs/access.hpp"

namespace strata {

enum class Layout {
  shared,            // one file, the raw layout (variables one after another, row-major)
  file_per_process,  // rank r writes PATH.<r, 8 digits>: its buffer as it is
  file_per_node,     // the ranks of node k write PATH.node<k, 5 digits>: their buffers in rank order
};
std::string layout_name(Layout l);

struct Target {
  std::string path;              // the shared file, or the prefix of per-process / per-node files
  Layout layout = Layout::shared;
  bool node_local = false;       // files go to node_local_dir(node)/<file name of PATH>
};

// The file a rank uses and who shares it.
struct FileGroup {
  std::string path;
  MPI_Comm comm = MPI_COMM_WORLD;  // ranks sharing the file (not owned)
  bool raw_layout = true;          // offsets from the raw layout; otherwise base + memory offset
  uint64_t base = 0;               // this rank's first byte in a per-process or per-node file
  uint64_t bytes_needed = 0;       // a file shorter than this cannot hold this rank's data
  bool creator = true;             // this rank creates and removes the file
  int files = 1;                   // how many files the whole target has
};

// Resolves `target` for this rank: its file, communicator, base offset. Collective over
// `comm` (an exclusive scan inside each node for per-node files); creates node-local
// directories. Throws a usage Error for a node-local shared file.
FileGroup file_group(MPI_Comm comm, const NodeMap& nodes, const Target& target, const Decomposition& d);

// Strategy switches of some backends (the multi-dataset comparison): `strata run --help`.
struct BackendOptions {
  bool per_block = false;        // hdf5: one collective H5Dwrite per block (per dataset, max over ranks)
  bool per_variable = false;     // mpiio-coll: one MPI_File_write_at_all per variable
  std::string container = "raw"; // strata: raw or hdf5
};

struct BackendContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  FileGroup file;             // the file this rank reads or writes
  Hints hints;                // MPI-IO hints asked for (--hints and STRATA_HINTS)
  bool fsync = false;         // sync data to storage before close completes
  std::string io_component;   // "ompio" or "romio"
  BackendOptions options;
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
  // True when a write replaces the previous output only once complete (the engine's commit,
  // src/engine/commit.hpp): the previous output is then not removed before the write.
  virtual bool commits_output() const { return false; }
  // File requests issued by this rank in the last transfer (calls into the I/O library).
  virtual uint64_t requests() const { return 0; }
  // Backend-specific statistics of the last access (the engine's time breakdown), or null.
  virtual nlohmann::json details() const { return nullptr; }
  // The last transfer's collective calls, rounds and time split (collective_calls.hpp), given
  // its duration on this rank. Collective over the backend's communicator; call on every rank
  // after the transfer and close succeeded (end_collective_timing() right after the transfer). Not valid for backends without collective calls.
  virtual CollectiveStats collective_calls(double /*transfer_s*/) { return {}; }
};

struct BackendInfo {
  std::string name;
  std::string summary;
};

std::vector<BackendInfo> backend_list();
// Throws a usage Error naming the available backends when `name` is not one of them.
void check_backend_name(const std::string& name);
// Checks that --per-block, --per-variable and --container fit backend `name` (usage Error).
void check_backend_options(const std::string& name, const BackendOptions& options);
// Creates a backend. Throws a usage Error for an unknown name or a layout the backend cannot
// express (the same answer on every rank: it depends only on arguments and the decomposition).
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendContext& ctx, const Decomposition& d,
                                      const Target& target);

// Removes the output (each file by its creator). Missing files are not an error. Local part of
// a collective step.
void remove_output(const BackendContext& ctx);

// Byte offset in the rank's file of extent `e` (raw layout, or base + memory offset).
uint64_t file_offset(const FileGroup& f, const Decomposition& d, int var, uint64_t elem_begin, uint64_t mem_offset);

}  // namespace strata
