// The backend interface: one Decomposition, many ways of writing and reading it.
//
// The driver calls open → transfer → close for each repetition, each step on every rank and
// followed by a collective agreement, so a failure anywhere is reported everywhere.
#pragma once

#include <mpi.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arch/node_map.hpp"
#include "backends/collective_calls.hpp"
#include "common/error.hpp"
#include "common/hints.hpp"
#include "decomp/decomposition.hpp"
#include "fs/access.hpp"
#include "fs/io_options.hpp"

namespace strata {

enum class Layout {
  shared,            // one file, the raw layout (variables one after another, row-major)
  file_per_process,  // rank r writes PATH.<r, 8 digits>: its buffer as it is
  file_per_node,     // the ranks of node k write PATH.node<k, 5 digits>: their buffers in rank order
};
std::string layout_name(Layout l);

struct Target {
  std::string path;  // the shared file, or the prefix of per-process / per-node files
  Layout layout = Layout::shared;
  bool node_local = false;  // files go to node_local_dir(node)/<file name of PATH>
};

// The file a rank uses and who shares it.
struct FileGroup {
  std::string path;
  MPI_Comm comm = MPI_COMM_WORLD;  // ranks sharing the file (not owned)
  bool raw_layout = true;          // offsets from the raw layout; otherwise base + memory offset
  uint64_t base = 0;               // this rank's first byte in a per-process or per-node file
  uint64_t bytes_needed = 0;       // a file shorter than this cannot hold this rank's data
  uint64_t file_bytes = 0;         // the whole file's extent: every byte of every rank sharing it,
                                   // trailing holes (elements no rank owns) included
  bool creator = true;             // this rank creates and removes the file
  int files = 1;                   // how many files the whole target has
};

// Resolves `target` for this rank: its file, communicator, base offset. Collective over
// `comm` (an exclusive scan inside each node for per-node files); creates node-local
// directories. Throws a usage Error for a node-local shared file.
FileGroup file_group(MPI_Comm comm, const NodeMap& nodes, const Target& target, const Decomposition& d);

struct BackendContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  FileGroup file;            // the file this rank reads or writes
  Hints hints;               // MPI-IO hints asked for (--hints and STRATA_HINTS)
  std::string io_component;  // "ompio" or "romio"
  IoOptions io;
};

// The steps of one access, as the run driver times them.
enum class BackendStep { open, transfer, close };

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
  // True when the step agrees on its own outcome: every rank returns, or every rank throws the
  // same error (a step that cannot fail, or one ending in a collective agreement, as the
  // engine's close). The driver then adds no agreement of its own to that step, which would
  // carry nothing new. Default: false, the driver agrees every step.
  virtual bool agrees_on(BackendStep /*step*/) const { return false; }
  // File requests issued by this rank in the last transfer (calls into the I/O library).
  virtual uint64_t requests() const { return 0; }
  // Bytes this rank moved in the last transfer, of the `asked` it was given: all of them unless
  // a deadline stopped it early (--deadline, posix).
  virtual uint64_t moved_bytes(uint64_t asked) const { return asked; }
  // Backend-specific statistics of the last access (the engine's time breakdown), or null.
  virtual nlohmann::json details() const { return nullptr; }
  // The last transfer's collective calls, rounds and time split (collective_calls.hpp), given
  // its duration on this rank. Collective over the backend's communicator; call on every rank
  // after the transfer and close succeeded (end_collective_timing() right after the transfer). Not valid for backends
  // without collective calls.
  virtual CollectiveStats collective_calls(double /*transfer_s*/) { return {}; }
};

// A step's error kept for close (Backend::agrees_on): the first error of open or transfer is
// held, the rank makes every later call of the access as the others do (a library's collective
// calls included), and close raises it, where the driver's one agreement reports it on every rank.
class KeptError {
 public:
  template <class F>
  void run(F&& fn) {
    if (!error_) error_ = caught(std::forward<F>(fn));
  }
  bool failed() const { return error_.has_value(); }
  // Takes the kept error (and forgets it).
  std::optional<Error> take() {
    std::optional<Error> e = std::move(error_);
    error_.reset();
    return e;
  }

 private:
  std::optional<Error> error_;
};

// The hints a backend understands.
enum class HintFamily {
  none,    // posix: no library to pass them to
  mpi_io,  // handed to MPI_File_open (directly or through HDF5 / PnetCDF): the MPI library's keys
  engine,  // the engine's (engine::engine_hint_specs(): strata_* and the MPI-IO keys it reads)
};
std::string hint_family_name(HintFamily h);

// What a backend can do: the backend table's columns besides name, summary and factory. Help,
// option checks, the advisor, the catalogue (strata info --catalogue) and the tests read them.
struct BackendCapabilities {
  std::string file_extension = ".dat";             // of the default output, strata-KERNEL<extension>
  std::vector<Layout> layouts = {Layout::shared};  // the layouts it can write
  bool mpi_io = false;                             // goes through MPI-IO, so MPI-IO hints (and the advisor's) apply
  bool call_per_variable = false;                  // one collective call per variable (per-dataset I/O), not one in all
  bool sizes_own_buffers = false;  // plans its own aggregation (the engine): no collective-buffering advice
  bool collective = false;         // its transfers are collective calls (the multi-dataset strategies)
  // Its file holds the decomposition's bytes at their offsets and nothing else (the raw layout, or
  // the rank buffers of per-process and per-node files): after a write it is at least
  // FileGroup::file_bytes long. False for containers (HDF5, netCDF), whose size is the library's.
  bool raw_file = true;
  std::vector<std::string> options;  // the backend-specific run options it takes (per-block, ...)
  // Backend-specific run options it cannot take, each with the reason (said instead of the list
  // of backends that take the option).
  std::vector<std::pair<std::string, std::string>> refuses;
  HintFamily hints = HintFamily::none;
  bool supports(Layout l) const;
  bool takes(const std::string& option) const;
};

// Creates the backend. Throws a usage Error for options it cannot combine (the same answer on
// every rank: it depends only on arguments and the decomposition).
using BackendFactory = std::unique_ptr<Backend> (*)(const BackendContext& ctx, const Decomposition& d,
                                                    const Target& target);

// A way the MPI tests run a backend: each kernel's tests (kernels/kernel_test.hpp) choose among
// the variants by layout, launcher and options (src/run/test_matrix.cpp).
struct BackendTestVariant {
  std::string name;  // in the tests' names: the backend's, or with its layout, launcher or options
  Layout layout = Layout::shared;
  bool romio = false;                     // launched with the MPI's ROMIO flags (none where ROMIO is its only MPI-IO)
  std::vector<std::string> options = {};  // backend options it adds ("--per-block"): a strategy of its own
};

// A row of the backend table.
struct BackendRow {
  std::string name;
  std::string summary;  // one line for help and the catalogue
  BackendFactory make = nullptr;
  BackendCapabilities can;
  std::vector<BackendTestVariant> test_variants;  // none: the backend itself, writing a shared file
};

// Every backend built in, in the order help lists them (src/backends/backend_table.cpp).
const std::vector<BackendRow>& backend_table();
// The row of backend `name`; a usage Error naming the available backends otherwise.
const BackendRow& backend_row(const std::string& name);
// The backends whose row satisfies `pred`, as "a, b or c" (for messages).
std::string backends_that(const std::function<bool(const BackendRow&)>& pred,
                          const std::string& none = "none built in");
// Creates a backend: checks the layout against the row, then calls its factory. Throws a usage
// Error for an unknown name or a layout the backend cannot express.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendContext& ctx, const Decomposition& d,
                                      const Target& target);

// Removes the output (each file by its creator). Missing files are not an error. Local part of
// a collective step.
void remove_output(const BackendContext& ctx);

// A raw file's creator extends it to FileGroup::file_bytes when the writes left it shorter (the
// decomposition's last elements belong to no rank): a reader sizes it by the decomposition. To
// call once every rank's data is written (a backend's close); never shortens a file.
void extend_to_extent(const FileGroup& f);

// The post-condition of a write, before anything is reported: the file exists and is at least
// FileGroup::file_bytes long (a container too: it holds the data besides its metadata). A runtime Error naming the file
// and what was expected otherwise. `indexed`: the backend commits an index beside its output (the engine), which may
// stand for the file (a subfiled output: the index lists the subfiles it sized). The creator checks; local part of a
// collective step.
void check_written(const FileGroup& f, bool raw_file, bool indexed);
// The precondition of a read, the same measure: the file exists and is long enough (a truncated
// file is an error that says so, not a verification failure or zeros read past its end).
void check_readable(const FileGroup& f, bool raw_file, bool indexed);

// Byte offset in the rank's file of extent `e` (raw layout, or base + memory offset).
uint64_t file_offset(const FileGroup& f, const Decomposition& d, int var, uint64_t elem_begin, uint64_t mem_offset);

}  // namespace strata
