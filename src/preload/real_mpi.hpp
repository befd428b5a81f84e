// The real MPI-IO functions the drop-in layer stands in front of: each found once with
// dlsym(RTLD_NEXT, "PMPI_...") (the MPI library's own entry, never another wrapper's MPI_ name),
// so a call the layer passes through reaches MPI-IO exactly as the program made it.
#pragma once

#include <mpi.h>

namespace strata::preload {

// X(name, return, parameters, arguments): every function the layer interposes.
#define STRATA_PRELOAD_FILE_CALLS(X)                                                                                   \
  X(File_open, (MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh),                          \
    (comm, filename, amode, info, fh))                                                                                 \
  X(File_close, (MPI_File * fh), (fh))                                                                                 \
  X(File_set_view,                                                                                                     \
    (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep, MPI_Info info),     \
    (fh, disp, etype, filetype, datarep, info))                                                                        \
  X(File_set_atomicity, (MPI_File fh, int flag), (fh, flag))                                                           \
  X(File_set_size, (MPI_File fh, MPI_Offset size), (fh, size))                                                         \
  X(File_preallocate, (MPI_File fh, MPI_Offset size), (fh, size))                                                      \
  X(File_get_size, (MPI_File fh, MPI_Offset * size), (fh, size))                                                       \
  X(File_sync, (MPI_File fh), (fh))                                                                                    \
  X(File_set_info, (MPI_File fh, MPI_Info info), (fh, info))                                                           \
  X(File_write_all, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st),                      \
    (fh, buf, count, type, st))                                                                                        \
  X(File_write_at_all,                                                                                                 \
    (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Status* st),                   \
    (fh, offset, buf, count, type, st))                                                                                \
  X(File_write, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st),                          \
    (fh, buf, count, type, st))                                                                                        \
  X(File_write_at, (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Status* st),    \
    (fh, offset, buf, count, type, st))                                                                                \
  X(File_write_shared, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st),                   \
    (fh, buf, count, type, st))                                                                                        \
  X(File_write_ordered, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Status* st),                  \
    (fh, buf, count, type, st))                                                                                        \
  X(File_iwrite, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* rq),                        \
    (fh, buf, count, type, rq))                                                                                        \
  X(File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Request* rq),  \
    (fh, offset, buf, count, type, rq))                                                                                \
  X(File_iwrite_all, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* rq),                    \
    (fh, buf, count, type, rq))                                                                                        \
  X(File_iwrite_at_all,                                                                                                \
    (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type, MPI_Request* rq),                  \
    (fh, offset, buf, count, type, rq))                                                                                \
  X(File_iwrite_shared, (MPI_File fh, const void* buf, int count, MPI_Datatype type, MPI_Request* rq),                 \
    (fh, buf, count, type, rq))                                                                                        \
  X(File_write_all_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype type), (fh, buf, count, type))        \
  X(File_write_all_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))                                 \
  X(File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type),          \
    (fh, offset, buf, count, type))                                                                                    \
  X(File_write_at_all_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))                              \
  X(File_write_ordered_begin, (MPI_File fh, const void* buf, int count, MPI_Datatype type), (fh, buf, count, type))    \
  X(File_write_ordered_end, (MPI_File fh, const void* buf, MPI_Status* st), (fh, buf, st))                             \
  X(File_read_all, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* st), (fh, buf, count, type, st)) \
  X(File_read_at_all, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Status* st),       \
    (fh, offset, buf, count, type, st))                                                                                \
  X(File_read, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* st), (fh, buf, count, type, st))     \
  X(File_read_at, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Status* st),           \
    (fh, offset, buf, count, type, st))                                                                                \
  X(File_read_shared, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* st),                          \
    (fh, buf, count, type, st))                                                                                        \
  X(File_read_ordered, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Status* st),                         \
    (fh, buf, count, type, st))                                                                                        \
  X(File_iread, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* rq), (fh, buf, count, type, rq))   \
  X(File_iread_at, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Request* rq),         \
    (fh, offset, buf, count, type, rq))                                                                                \
  X(File_iread_all, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* rq),                           \
    (fh, buf, count, type, rq))                                                                                        \
  X(File_iread_at_all, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Request* rq),     \
    (fh, offset, buf, count, type, rq))                                                                                \
  X(File_iread_shared, (MPI_File fh, void* buf, int count, MPI_Datatype type, MPI_Request* rq),                        \
    (fh, buf, count, type, rq))                                                                                        \
  X(File_read_all_begin, (MPI_File fh, void* buf, int count, MPI_Datatype type), (fh, buf, count, type))               \
  X(File_read_all_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))                                        \
  X(File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type),                 \
    (fh, offset, buf, count, type))                                                                                    \
  X(File_read_at_all_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))                                     \
  X(File_read_ordered_begin, (MPI_File fh, void* buf, int count, MPI_Datatype type), (fh, buf, count, type))           \
  X(File_read_ordered_end, (MPI_File fh, void* buf, MPI_Status* st), (fh, buf, st))                                    \
  X(Type_free, (MPI_Datatype * type), (type))                                                                          \
  X(Finalize, (void), ())

struct RealMpi {
#define STRATA_PRELOAD_POINTER(name, params, args) int(*name) params = nullptr;
  STRATA_PRELOAD_FILE_CALLS(STRATA_PRELOAD_POINTER)
#undef STRATA_PRELOAD_POINTER
};

// The MPI library's functions (resolved on first use; a missing one aborts with its name).
const RealMpi& real();

}  // namespace strata::preload
