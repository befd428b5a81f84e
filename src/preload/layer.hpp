// The drop-in layer's state: every file the program opened, its view, hints and gathered
// writes, and one strata::Engine per communicator group. The interposed MPI_File_* functions
// (interpose.cpp) call these; everything collective here is called from a collective MPI-IO call
// of the program, so every rank of the file's group reaches it, and every decision that changes
// which collectives run (eligible, flush, passthrough) is the same on every rank.
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "preload/file_view.hpp"
#include "preload/pending.hpp"
#include "preload/report.hpp"

namespace strata {
class Engine;
}

namespace strata::preload {

// The ranks of a communicator (its own duplicate) and the engine made for them on first use.
struct Group {
  MPI_Comm comm = MPI_COMM_NULL;
  std::unique_ptr<strata::Engine> engine;
  Group();
  ~Group();
};

struct File {
  MPI_File fh = MPI_FILE_NULL;
  std::string path;  // as the engine opens it (an MPI-IO prefix such as "ufs:" removed)
  int amode = 0;
  Group* group = nullptr;
  dev_t dev = 0;
  ino_t ino = 0;
  FileView view;
  bool atomic = false;
  std::vector<std::pair<std::string, std::string>> hints;  // strata_* keys for the engine
  // Why this file's collective writes go to MPI-IO (none: eligible). Every rank decides alike
  // without a message: the mode, the access mode, atomicity and the data representation are the
  // same on every rank (MPI requires it).
  int ineligible = -1;
  // Why this rank alone cannot gather its collective writes: a file type it cannot decode, or a
  // view MPI-IO refused it (-1: none). Such a write is this rank's independent write, which MPI
  // defines as equivalent; the other ranks go on gathering, and no agreement is needed.
  int alone = -1;
  PendingRuns pending;
  uint64_t pending_calls = 0;  // gathered calls not flushed yet
  bool dirty = false;          // gathered calls since the last collective flush (same on every rank)
  uint64_t since_check = 0;    // gathered calls since the last budget agreement
  int fd = -1;                 // for a rank's lone flush
};

// Lookup; nullptr for a handle the layer did not see opened.
File* find(MPI_File fh);

// After the real open succeeded (collective).
void opened(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File fh);
// Before the real close (collective): flushes; returns an MPI error code or MPI_SUCCESS.
int closing(File& f);
// After the real set_view (collective; `ok`: it succeeded): records the view, agrees eligibility.
void view_set(File& f, bool ok, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
              MPI_Info info);
void atomicity_set(File& f, int flag);
void info_set(File& f, MPI_Info info);

// Writes the gathered data of `f` through the engine (collective over f's group; a no-op on
// every rank when nothing was gathered since the last flush). Returns an MPI error code.
int flush_collective(File& f);
// Writes this rank's gathered data alone (independent): of every handle on f's file, or of f only.
int flush_alone(File& f, bool whole_file = true);

// Before an independent access of `bytes` bytes at `offset` etypes of f's view (-1: at the
// individual pointer; -2: unknown, the shared pointer): this rank's gathered runs on the file
// that the access could touch are written first, alone (all of them when the range is unknown).
// Runs it cannot touch stay gathered (HDF5 writes its metadata independently between raw-data
// collectives). Returns an MPI error code.
int before_access(File& f, MPI_Offset offset, uint64_t bytes);

// One past the last byte this rank has gathered for f's file on any handle (0: none): the
// file's size as this rank's own writes make it, without writing them.
uint64_t pending_end(const File& f);

// The collective write the engine takes: gathered, status filled, individual pointer advanced
// (`explicit_offset` < 0: at the individual pointer). Returns an MPI error code.
int gather_write(File& f, MPI_Offset explicit_offset, const void* buf, int count, MPI_Datatype type,
                 MPI_Status* status);

// Reports an error code through the file's error handler; returns it.
int report_error(MPI_File fh, int code);

// At MPI_Finalize, before the real one: flushes open files, destroys engines, writes the report.
void finalize();

bool enabled();
// STRATA_PRELOAD_TRACE: every interposed call and every flush on stderr.
bool tracing();

}  // namespace strata::preload
