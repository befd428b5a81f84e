// The interposed functions: each MPI-IO routine the layer sees is defined twice, as MPI_File_x
// (what C programs, HDF5 and PnetCDF call) and PMPI_File_x (what Open MPI's Fortran bindings
// call), both exported; the real one is the MPI library's PMPI_File_x (real_mpi.hpp). A call
// made from inside the layer or the engine (depth > 0) goes straight to MPI-IO.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "preload/layer.hpp"
#include "preload/real_mpi.hpp"
#include "preload/report.hpp"
#include "preload/type_map.hpp"

namespace strata::preload {
namespace {

thread_local int depth = 0;
struct Inside {
  Inside() { ++depth; }
  ~Inside() { --depth; }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
};

// STRATA_PRELOAD_TRACE=1: every interposed call on stderr, with the rank.
void trace(const char* name) {
  if (!tracing()) return;
  int rank = -1, ok = 0;
  PMPI_Initialized(&ok);
  if (ok) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "strata preload [%d]: MPI_%s\n", rank, name);
}

uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
}

// An independent access at `offset` etypes (-1: the individual pointer, -2: the shared one):
// this rank's gathered runs it could touch are written first (alone).
File* before_independent(MPI_File fh, Reason reason, MPI_Offset offset, uint64_t bytes) {
  ++counters().calls;
  count_passthrough(reason, bytes);
  File* f = find(fh);
  if (f != nullptr) {
    const int rc = before_access(*f, offset, bytes);
    if (rc != MPI_SUCCESS) report_error(fh, rc);
  }
  return f;
}

// A collective call that goes to MPI-IO. A write (`writes`): the file's gathered writes are
// flushed first (every rank is in this call), then this rank's runs on other handles of the file
// that the access could touch, alone. A read: only this rank's runs it could touch (alone): the
// data of other ranks is not for this rank to see before a sync. `reason`: count it as a
// passed-through data access; `offset` in etypes (-1: individual pointer, -2: shared pointer).
int before_collective(MPI_File fh, const Reason* reason, MPI_Offset offset, uint64_t bytes, bool writes) {
  if (reason != nullptr) {
    ++counters().calls;
    count_passthrough(*reason, bytes);
  }
  File* f = find(fh);
  if (f == nullptr) return MPI_SUCCESS;
  int rc = writes ? flush_collective(*f) : MPI_SUCCESS;
  if (reason != nullptr) {
    const int touched = before_access(*f, offset, bytes);
    if (rc == MPI_SUCCESS) rc = touched;
  }
  if (rc != MPI_SUCCESS) report_error(fh, rc);
  return rc;
}

// Before set_size or preallocate: the size changes under every handle's gathered runs, so the
// file's are flushed (collectively) and this rank's on other handles written alone.
int before_resize(MPI_File fh) {
  int flushed = before_collective(fh, nullptr, 0, 0, true);
  if (File* f = find(fh); f != nullptr && flushed == MPI_SUCCESS) flushed = flush_alone(*f);
  return flushed;
}

int collective_write(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Status* st) {
  File* f = find(fh);
  if (f != nullptr && f->ineligible < 0) {
    ++counters().calls;
    const int rc = gather_write(*f, offset, buf, count, type, st);
    return rc == MPI_SUCCESS ? rc : report_error(fh, rc);
  }
  const Reason why = f != nullptr ? static_cast<Reason>(f->ineligible) : Reason::disabled;
  before_collective(fh, &why, offset, bytes_of(count, type), true);
  return offset < 0 ? real().File_write_all(fh, buf, count, type, st)
                    : real().File_write_at_all(fh, offset, buf, count, type, st);
}

}  // namespace
}  // namespace strata::preload

using namespace strata::preload;

#define STRATA_EXPORT extern "C" __attribute__((visibility("default")))
// Defines MPI_File_x and PMPI_File_x with one body.
#define STRATA_BOTH(name, params, args)                             \
  static int impl_##name params;                                    \
  STRATA_EXPORT int MPI_##name params { return impl_##name args; }  \
  STRATA_EXPORT int PMPI_##name params { return impl_##name args; } \
  static int impl_##name params

#define PASS_IF_INSIDE(name, args)        \
  if (depth > 0) return real().name args; \
  Inside inside_;                         \
  trace(#name);

STRATA_BOTH(File_open, (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh),
            (comm, filename, amode, info, fh)) {
  PASS_IF_INSIDE(File_open, (comm, filename, amode, info, fh))
  const int rc = real().File_open(comm, filename, amode, info, fh);
  if (rc == MPI_SUCCESS) opened(comm, filename, amode, info, *fh);
  return rc;
}

STRATA_BOTH(File_close, (MPI_File * fh), (fh)) {
  PASS_IF_INSIDE(File_close, (fh))
  File* f = find(*fh);
  int flushed = MPI_SUCCESS;
  if (f != nullptr) {
    flushed = closing(*f);
    if (flushed != MPI_SUCCESS) report_error(*fh, flushed);
  }
  const int rc = real().File_close(fh);
  return flushed != MPI_SUCCESS ? flushed : rc;
}

STRATA_BOTH(File_set_view,
            (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
             MPI_Info info),
            (fh, disp, etype, filetype, datarep, info)) {
  PASS_IF_INSIDE(File_set_view, (fh, disp, etype, filetype, datarep, info))
  const int rc = real().File_set_view(fh, disp, etype, filetype, datarep, info);
  if (File* f = find(fh)) view_set(*f, rc == MPI_SUCCESS, disp, etype, filetype, datarep, info);
  return rc;
}

STRATA_BOTH(File_set_atomicity, (MPI_File fh, int flag), (fh, flag)) {
  PASS_IF_INSIDE(File_set_atomicity, (fh, flag))
  before_collective(fh, nullptr, 0, 0, true);
  const int rc = real().File_set_atomicity(fh, flag);
  if (File* f = find(fh)) atomicity_set(*f, flag);
  return rc;
}

STRATA_BOTH(File_set_info, (MPI_File fh, MPI_Info info), (fh, info)) {
  PASS_IF_INSIDE(File_set_info, (fh, info))
  const int rc = real().File_set_info(fh, info);
  if (File* f = find(fh)) info_set(*f, info);
  return rc;
}

STRATA_BOTH(File_set_size, (MPI_File fh, MPI_Offset size), (fh, size)) {
  PASS_IF_INSIDE(File_set_size, (fh, size))
  const int flushed = before_resize(fh);
  const int rc = real().File_set_size(fh, size);
  return flushed != MPI_SUCCESS ? flushed : rc;
}

STRATA_BOTH(File_preallocate, (MPI_File fh, MPI_Offset size), (fh, size)) {
  PASS_IF_INSIDE(File_preallocate, (fh, size))
  const int flushed = before_resize(fh);
  const int rc = real().File_preallocate(fh, size);
  return flushed != MPI_SUCCESS ? flushed : rc;
}

STRATA_BOTH(File_sync, (MPI_File fh), (fh)) {
  PASS_IF_INSIDE(File_sync, (fh))
  const int flushed = before_collective(fh, nullptr, 0, 0, true);
  const int rc = real().File_sync(fh);
  return flushed != MPI_SUCCESS ? flushed : rc;
}

STRATA_BOTH(File_get_size, (MPI_File fh, MPI_Offset* size), (fh, size)) {
  PASS_IF_INSIDE(File_get_size, (fh, size))
  // The size this rank's gathered writes give the file, without writing them (HDF5 asks often).
  const int rc = real().File_get_size(fh, size);
  if (File* f = find(fh); f != nullptr && rc == MPI_SUCCESS) {
    *size = std::max<MPI_Offset>(*size, static_cast<MPI_Offset>(pending_end(*f)));
  }
  return rc;
}

// ---- collective writes: gathered for the engine when the file is eligible --------------------
STRATA_BOTH(File_write_all, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st),
            (fh, buf, count, type, st)) {
  PASS_IF_INSIDE(File_write_all, (fh, buf, count, type, st))
  return collective_write(fh, -1, buf, count, type, st);
}

STRATA_BOTH(File_write_at_all,
            (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Status* st),
            (fh, offset, buf, count, type, st)) {
  PASS_IF_INSIDE(File_write_at_all, (fh, offset, buf, count, type, st))
  if (offset < 0) {  // erroneous: MPI-IO reports it
    const Reason why = Reason::independent;
    before_collective(fh, &why, -2, 0, true);
    return real().File_write_at_all(fh, offset, buf, count, type, st);
  }
  return collective_write(fh, offset, buf, count, type, st);
}

// ---- other data accesses: to MPI-IO, after the gathered data they could see -----------------
#define STRATA_INDEPENDENT(name, reason, params, args, offset, count, type) \
  STRATA_BOTH(name, params, args) {                                         \
    PASS_IF_INSIDE(name, args)                                              \
    before_independent(fh, reason, offset, bytes_of(count, type));          \
    return real().name args;                                                \
  }
#define STRATA_COLLECTIVE(name, reason, params, args, offset, count, type, writes) \
  STRATA_BOTH(name, params, args) {                                                \
    PASS_IF_INSIDE(name, args)                                                     \
    const Reason why = reason;                                                     \
    before_collective(fh, &why, offset, bytes_of(count, type), writes);            \
    return real().name args;                                                       \
  }
// The second half of a split collective: counted at its first half.
#define STRATA_END(name, params, args) \
  STRATA_BOTH(name, params, args) {    \
    PASS_IF_INSIDE(name, args)         \
    return real().name args;           \
  }

#define WPARAMS (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st)
#define WATPARAMS (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Status* st)
#define RPARAMS (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* st)
#define RATPARAMS (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Status* st)
#define IWPARAMS (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* rq)
#define IWATPARAMS (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Request* rq)
#define IRPARAMS (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* rq)
#define IRATPARAMS (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Request* rq)
#define ARGS (fh, buf, count, type, st)
#define ATARGS (fh, offset, buf, count, type, st)
#define IARGS (fh, buf, count, type, rq)
#define IATARGS (fh, offset, buf, count, type, rq)

STRATA_INDEPENDENT(File_write, Reason::independent, WPARAMS, ARGS, -1, count, type)
STRATA_INDEPENDENT(File_write_at, Reason::independent, WATPARAMS, ATARGS, offset, count, type)
STRATA_INDEPENDENT(File_iwrite, Reason::independent, IWPARAMS, IARGS, -1, count, type)
STRATA_INDEPENDENT(File_iwrite_at, Reason::independent, IWATPARAMS, IATARGS, offset, count, type)
STRATA_INDEPENDENT(File_write_shared, Reason::shared_pointer, WPARAMS, ARGS, -2, count, type)
STRATA_INDEPENDENT(File_iwrite_shared, Reason::shared_pointer, IWPARAMS, IARGS, -2, count, type)
STRATA_INDEPENDENT(File_read, Reason::read, RPARAMS, ARGS, -1, count, type)
STRATA_INDEPENDENT(File_read_at, Reason::read, RATPARAMS, ATARGS, offset, count, type)
STRATA_INDEPENDENT(File_iread, Reason::read, IRPARAMS, IARGS, -1, count, type)
STRATA_INDEPENDENT(File_iread_at, Reason::read, IRATPARAMS, IATARGS, offset, count, type)
STRATA_INDEPENDENT(File_read_shared, Reason::shared_pointer, RPARAMS, ARGS, -2, count, type)
STRATA_INDEPENDENT(File_iread_shared, Reason::shared_pointer, IRPARAMS, IARGS, -2, count, type)

STRATA_COLLECTIVE(File_write_ordered, Reason::shared_pointer, WPARAMS, ARGS, -2, count, type, true)
STRATA_COLLECTIVE(File_read_ordered, Reason::shared_pointer, RPARAMS, ARGS, -2, count, type, false)
STRATA_COLLECTIVE(File_read_all, Reason::read, RPARAMS, ARGS, -1, count, type, false)
STRATA_COLLECTIVE(File_read_at_all, Reason::read, RATPARAMS, ATARGS, offset, count, type, false)
STRATA_COLLECTIVE(File_iwrite_all, Reason::nonblocking, IWPARAMS, IARGS, -1, count, type, true)
STRATA_COLLECTIVE(File_iwrite_at_all, Reason::nonblocking, IWATPARAMS, IATARGS, offset, count, type, true)
STRATA_COLLECTIVE(File_iread_all, Reason::read, IRPARAMS, IARGS, -1, count, type, false)
STRATA_COLLECTIVE(File_iread_at_all, Reason::read, IRATPARAMS, IATARGS, offset, count, type, false)
STRATA_COLLECTIVE(File_write_all_begin, Reason::split, (MPI_File fh, const void* buf, int count, MPI_Datatype type),
                  (fh, buf, count, type), -1, count, type, true)
STRATA_COLLECTIVE(File_write_at_all_begin, Reason::split,
                  (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type),
                  (fh, offset, buf, count, type), offset, count, type, true)
STRATA_COLLECTIVE(File_write_ordered_begin, Reason::shared_pointer,
                  (MPI_File fh, const void* buf, int count, MPI_Datatype type), (fh, buf, count, type), -2, count, type,
                  true)
STRATA_COLLECTIVE(File_read_all_begin, Reason::read, (MPI_File fh, void* buf, int count, MPI_Datatype type),
                  (fh, buf, count, type), -1, count, type, false)
STRATA_COLLECTIVE(File_read_at_all_begin, Reason::read,
                  (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type),
                  (fh, offset, buf, count, type), offset, count, type, false)
STRATA_COLLECTIVE(File_read_ordered_begin, Reason::shared_pointer,
                  (MPI_File fh, void* buf, int count, MPI_Datatype type), (fh, buf, count, type), -2, count, type,
                  false)

STRATA_END(File_write_all_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))
STRATA_END(File_write_at_all_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))
STRATA_END(File_write_ordered_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))
STRATA_END(File_read_all_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))
STRATA_END(File_read_at_all_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))
STRATA_END(File_read_ordered_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))

// ---- datatypes and the end ----------------------------------------------------------------
STRATA_BOTH(Type_free, (MPI_Datatype * type), (type)) {
  if (type != nullptr) forget(*type);
  return real().Type_free(type);
}

STRATA_BOTH(Finalize, (void), ()) {
  {
    Inside inside_;
    finalize();
  }
  return real().Finalize();
}
