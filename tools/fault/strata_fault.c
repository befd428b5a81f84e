// libstrata_fault.so: makes chosen file-system calls fail, for testing how Strata (and any
// I/O library under it: OMPIO, ROMIO, HDF5, PnetCDF) handles failures. Preload it and describe
// the fault in STRATA_FAULT:
//
//   export LD_PRELOAD=build/lib/libstrata_fault.so
//   export STRATA_FAULT="op=write,nth=3,errno=ENOSPC,rank=1,path=out.dat"
//   mpirun -x LD_PRELOAD -x STRATA_FAULT ...
//
//   op=write|sync|open    which calls: write, pwrite, writev, pwritev, aio_write (and 64-bit variants);
//                         fsync, fdatasync; open, openat, creat (and 64-bit variants)
//   nth=N                 fail the N-th matching call (default 1) ...
//   count=K               ... and the K-1 after it (default 1; 0: every call from the N-th on)
//   errno=NAME|NUMBER     the error returned (ENOSPC, EIO, EACCES, EDQUOT, EROFS, EFBIG, ENOENT,
//                         EMFILE or a number; default EIO)
//   action=fail|kill|hang fail the call with errno (default), SIGKILL the process at that call, or
//                         never return from it (a hung file system)
//   rank=R                only on MPI rank R (from OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or
//                         SLURM_PROCID); default every rank
//   path=SUBSTRING        only files whose path contains SUBSTRING (default: any path outside
//                         /dev, /proc and /sys); write and sync calls count on descriptors opened
//                         with such a path
//
// Each triggered fault prints one line on stderr ("strata-fault: ..."), so a test can tell that
// the fault really fired.
#define _GNU_SOURCE
#include <aio.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum op { OP_NONE, OP_WRITE, OP_SYNC, OP_OPEN };

static struct {
  int ready;
  enum op op;
  long nth, count;
  int err;
  int kill;
  int hang;
  char path[512];
} cfg;

static atomic_long calls;
// Descriptors opened on a matching path (write and sync faults count only on those).
#define MAX_FD 65536
static atomic_char watched[MAX_FD];

static int errno_named(const char* s) {
  static const struct {
    const char* name;
    int value;
  } names[] = {{"ENOSPC", ENOSPC}, {"EIO", EIO},       {"EACCES", EACCES}, {"EDQUOT", EDQUOT}, {"EROFS", EROFS},
               {"EFBIG", EFBIG},   {"ENOENT", ENOENT}, {"EMFILE", EMFILE}, {"EPERM", EPERM},   {"EINTR", EINTR}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (strcmp(s, names[i].name) == 0) return names[i].value;
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (end != s && *end == '\0' && v > 0) return (int)v;
  return -1;
}

static long my_rank(void) {
  const char* vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
    const char* v = getenv(vars[i]);
    if (v != NULL) return strtol(v, NULL, 10);
  }
  return 0;
}

static void bad_spec(const char* spec, const char* why) {
  fprintf(stderr, "strata-fault: bad STRATA_FAULT \"%s\": %s\n", spec, why);
  _exit(2);
}

__attribute__((constructor)) static void configure(void) {
  const char* spec = getenv("STRATA_FAULT");
  if (spec == NULL || *spec == '\0') return;
  cfg.nth = 1;
  cfg.count = 1;
  cfg.err = EIO;
  long rank = -1;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    char* eq = strchr(item, '=');
    if (eq == NULL) bad_spec(spec, "items are key=value");
    *eq = '\0';
    const char *key = item, *value = eq + 1;
    if (strcmp(key, "op") == 0) {
      if (strcmp(value, "write") == 0) cfg.op = OP_WRITE;
      else if (strcmp(value, "sync") == 0) cfg.op = OP_SYNC;
      else if (strcmp(value, "open") == 0) cfg.op = OP_OPEN;
      else bad_spec(spec, "op is write, sync or open");
    } else if (strcmp(key, "nth") == 0) {
      cfg.nth = strtol(value, NULL, 10);
      if (cfg.nth < 1) bad_spec(spec, "nth counts from 1");
    } else if (strcmp(key, "count") == 0) {
      cfg.count = strtol(value, NULL, 10);
      if (cfg.count < 0) bad_spec(spec, "count is 0 (every call) or more");
    } else if (strcmp(key, "errno") == 0) {
      cfg.err = errno_named(value);
      if (cfg.err < 0) bad_spec(spec, "unknown errno");
    } else if (strcmp(key, "action") == 0) {
      if (strcmp(value, "kill") == 0) cfg.kill = 1;
      else if (strcmp(value, "hang") == 0) cfg.hang = 1;
      else if (strcmp(value, "fail") != 0) bad_spec(spec, "action is fail, kill or hang");
    } else if (strcmp(key, "rank") == 0) {
      rank = strtol(value, NULL, 10);
    } else if (strcmp(key, "path") == 0) {
      snprintf(cfg.path, sizeof cfg.path, "%s", value);
    } else {
      bad_spec(spec, "unknown key (op, nth, count, errno, action, rank, path)");
    }
  }
  if (cfg.op == OP_NONE) bad_spec(spec, "op= is required");
  if (rank >= 0 && rank != my_rank()) return;
  cfg.ready = 1;
}

static int path_matches(const char* path) {
  if (path == NULL) return 0;
  if (cfg.path[0] != '\0') return strstr(path, cfg.path) != NULL;
  return strncmp(path, "/dev/", 5) != 0 && strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0;
}

static int fd_watched(int fd) { return fd >= 0 && fd < MAX_FD && atomic_load(&watched[fd]); }

// Counts a matching call; true when this one must fail (or the process dies here).
static int trigger(const char* what) {
  long n = atomic_fetch_add(&calls, 1) + 1;
  if (n < cfg.nth || (cfg.count > 0 && n >= cfg.nth + cfg.count)) return 0;
  fprintf(stderr, "strata-fault: rank %ld: %s call %ld: %s\n", my_rank(), what, n,
          cfg.kill   ? "SIGKILL"
          : cfg.hang ? "hanging"
                     : strerror(cfg.err));
  if (cfg.kill) raise(SIGKILL);
  while (cfg.hang) pause();
  return 1;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

#define WRITE_CALL(ret, name, params, args, fd)                                \
  ret name params {                                                            \
    if (cfg.ready && cfg.op == OP_WRITE && fd_watched(fd) && trigger(#name)) { \
      errno = cfg.err;                                                         \
      return -1;                                                               \
    }                                                                          \
    return REAL(name) args;                                                    \
  }

WRITE_CALL(ssize_t, write, (int fd, const void* b, size_t n), (fd, b, n), fd)
WRITE_CALL(ssize_t, pwrite, (int fd, const void* b, size_t n, off_t o), (fd, b, n, o), fd)
WRITE_CALL(ssize_t, pwrite64, (int fd, const void* b, size_t n, off64_t o), (fd, b, n, o), fd)
WRITE_CALL(ssize_t, writev, (int fd, const struct iovec* v, int n), (fd, v, n), fd)
WRITE_CALL(ssize_t, pwritev, (int fd, const struct iovec* v, int n, off_t o), (fd, v, n, o), fd)
WRITE_CALL(ssize_t, pwritev64, (int fd, const struct iovec* v, int n, off64_t o), (fd, v, n, o), fd)

// Asynchronous writes (OMPIO's collective writes use them): the submission fails.
#define AIO_CALL(name, cb)                                                                  \
  int name(cb* req) {                                                                       \
    if (cfg.ready && cfg.op == OP_WRITE && fd_watched(req->aio_fildes) && trigger(#name)) { \
      errno = cfg.err;                                                                      \
      return -1;                                                                            \
    }                                                                                       \
    return REAL(name)(req);                                                                 \
  }
AIO_CALL(aio_write, struct aiocb)
AIO_CALL(aio_write64, struct aiocb64)

#define SYNC_CALL(name)                                                       \
  int name(int fd) {                                                          \
    if (cfg.ready && cfg.op == OP_SYNC && fd_watched(fd) && trigger(#name)) { \
      errno = cfg.err;                                                        \
      return -1;                                                              \
    }                                                                         \
    return REAL(name)(fd);                                                    \
  }
SYNC_CALL(fsync)
SYNC_CALL(fdatasync)

// Opens: fail when asked, else remember whether the descriptor is on a watched path.
static int after_open(int fd, const char* path) {
  if (fd >= 0 && fd < MAX_FD) atomic_store(&watched[fd], (char)path_matches(path));
  return fd;
}

static int open_fails(const char* name, const char* path) {
  if (!(cfg.ready && cfg.op == OP_OPEN && path_matches(path) && trigger(name))) return 0;
  errno = cfg.err;
  return 1;
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_CALL(name)                                     \
  int name(const char* path, int flags, ...) {              \
    va_list ap;                                             \
    va_start(ap, flags);                                    \
    mode_t mode = mode_arg(flags, ap);                      \
    va_end(ap);                                             \
    if (cfg.ready && open_fails(#name, path)) return -1;    \
    return after_open(REAL(name)(path, flags, mode), path); \
  }
OPEN_CALL(open)
OPEN_CALL(open64)

#define OPENAT_CALL(name)                                        \
  int name(int dir, const char* path, int flags, ...) {          \
    va_list ap;                                                  \
    va_start(ap, flags);                                         \
    mode_t mode = mode_arg(flags, ap);                           \
    va_end(ap);                                                  \
    if (cfg.ready && open_fails(#name, path)) return -1;         \
    return after_open(REAL(name)(dir, path, flags, mode), path); \
  }
OPENAT_CALL(openat)
OPENAT_CALL(openat64)

int creat(const char* path, mode_t mode) {
  if (cfg.ready && open_fails("creat", path)) return -1;
  return after_open(REAL(creat)(path, mode), path);
}

int close(int fd) {
  if (fd >= 0 && fd < MAX_FD) atomic_store(&watched[fd], 0);
  return REAL(close)(fd);
}
