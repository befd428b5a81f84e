/* A fuzzer of MPI-IO file views: from a seed, a sequence of collective writes through random views
 * (subarray, darray, hvector, indexed_block, indexed, hindexed, struct, resized tiles), random
 * etypes (byte, short, int, double, a 3-int contiguous type), random view displacements, random
 * memory types (contiguous, shuffled hindexed, resized with gaps, negative-stride vector), ranks
 * that write nothing, and every collective form (write_all, write_at_all, their split begin/end
 * forms, a write in two calls that moves the individual file pointer), with independent writes
 * (write_at, seek + write) mixed in, syncs and views set again. The preload tests run it with and
 * without libstrata_preload.so and under OMPIO and ROMIO, and compare the files byte for byte.
 *
 * The program is valid MPI by construction: every filetype is monotonic with non-negative
 * displacements, ranks own disjoint bytes of each region (a partition, or MPI's own subarray and
 * darray decompositions), regions of different writes do not overlap (except a rewrite of an
 * earlier write's region by the same owners), and a memory type's basic elements match the etype.
 * It checks what MPI-IO returns: each call's error code, the status's element count and the
 * individual file pointer after write_all.
 *
 *   view_fuzzer SEED OUTPUT [--ops N] [--scale S] [--more] [-v]
 *
 * --more adds, from a stream of its own (the other choices of a seed stay the same): a second
 * handle on the same file that some writes go through (sync, barrier, sync between the two, as MPI's
 * consistency rules ask), MPI_File_set_size cutting the file mid-run (then growing it back: the cut
 * bytes must read 0) on either handle, and MPI_File_preallocate.
 *
 * Exits 0 when every call succeeded (on every rank) and the file holds what the writes put there,
 * 1 otherwise, printing the seed. -v prints each write's description on rank 0 (-vv also each
 * rank's pieces); --settle syncs between a collective write and the independent overwrite of its
 * bytes (OMPIO 4.1.4 needs it: docs/testing.md). To narrow a failure down, the environment can
 * force one choice everywhere: VF_FORM=N (the write form), VF_MEM=N (the memory type), VF_OVER=0|1
 * (the independent overwrite), VF_AT=0|1 (write_at or seek + write), VF_NOHINTS=1 (no
 * cb_buffer_size), VF_DUMP=FILE (write the expected file there). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers: splitmix64, one stream per purpose ---------------------------------- */
typedef struct {
  uint64_t s;
} rng_t;

static uint64_t next_u64(rng_t* r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static int rnd(rng_t* r, int lo, int hi) { return lo + (int)(next_u64(r) % (uint64_t)(hi - lo + 1)); }
static int scaled(int hi);
static rng_t stream(uint64_t seed, uint64_t a, uint64_t b) {
  rng_t r = {seed * 0x100000001B3ULL ^ (a << 32) ^ b};
  next_u64(&r);
  return r;
}

/* ---- what the program was given ----------------------------------------------------------- */
static uint64_t g_seed;
static double g_scale = 1.0; /* multiplies every size bound */
static int g_rank, g_nprocs, g_verbose, g_failed, g_settle, g_more;

static void fail(const char* what, const char* detail) {
  fprintf(stderr, "view_fuzzer seed %llu rank %d: %s: %s\n", (unsigned long long)g_seed, g_rank, what, detail);
  g_failed = 1;
}
static void check(int err, const char* what) {
  if (err != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(err, msg, &len);
    fail(what, msg);
  }
}

static int scaled(int hi) {
  double v = hi * g_scale;
  return v < 1 ? 1 : v > 1e8 ? 100000000 : (int)v;
}

/* ---- etypes --------------------------------------------------------------------------------- */
typedef struct {
  const char* name;
  MPI_Datatype basic; /* the element a memory type is built of */
  int basics;         /* basic elements per etype */
  int basic_size;
  MPI_Datatype type;
} etype_t;
static etype_t g_etypes[5];
enum { N_ETYPES = 5 };

static void make_etypes(void) {
  etype_t e[N_ETYPES] = {{"byte", MPI_BYTE, 1, 1, MPI_BYTE},
                         {"short", MPI_SHORT, 1, 2, MPI_SHORT},
                         {"int", MPI_INT, 1, 4, MPI_INT},
                         {"double", MPI_DOUBLE, 1, 8, MPI_DOUBLE},
                         {"3int", MPI_INT, 3, 4, MPI_DATATYPE_NULL}};
  MPI_Type_contiguous(3, MPI_INT, &e[4].type);
  MPI_Type_commit(&e[4].type);
  memcpy(g_etypes, e, sizeof e);
}

/* ---- one collective write's description (the same on every rank) --------------------------- */
enum kind { K_SUBARRAY, K_DARRAY, K_HVECTOR, K_INDEXED_BLOCK, K_INDEXED, K_HINDEXED, K_STRUCT, N_KINDS };
static const char* kind_names[] = {"subarray", "darray", "hvector", "indexed_block", "indexed", "hindexed", "struct"};
enum form {
  F_WRITE_ALL,
  F_WRITE_ALL_TWICE,
  F_WRITE_AT_ALL,
  F_WRITE_AT_ALL_REVERSED,
  F_WRITE_ALL_SPLIT,
  F_WRITE_AT_ALL_SPLIT,
  F_COLLECTIVE_THEN_INDEPENDENT,
  N_FORMS
};
static const char* form_names[] = {
    "write_all",           "write_all x2",           "write_at_all",           "write_at_all reversed",
    "write_all_begin/end", "write_at_all_begin/end", "write_at_all + write_at"};

typedef struct {
  int kind, etype, reps, form, resize, rewrite_of;
  uint64_t layout_seed; /* the ownership and the per-rank choices derive from it */
  MPI_Offset base;      /* the region's first byte */
  MPI_Offset bytes;     /* one tile of the region */
  int overwrite;        /* an independent overwrite of part of each rank's data after the write */
  int sync_after, view_again;
  /* --more: the handle the op writes through (0 or a second handle on the same file); after it, a
   * cut (set_size to `cut`, then back to the planned size, on handle `resize_handle`: the bytes
   * from `cut` on read 0) and a preallocate of the planned size (-1 / 0: none) */
  int handle, resize_handle, preallocate;
  MPI_Offset cut;
} op_t;

/* This rank's view for an op: disp, filetype, number of etypes per tile. */
typedef struct {
  MPI_Offset disp;
  MPI_Datatype filetype;
  long elems; /* etypes this rank writes per tile */
} view_t;

static MPI_Datatype resized_to(MPI_Datatype t, MPI_Aint extent) {
  MPI_Datatype r;
  MPI_Type_create_resized(t, 0, extent, &r);
  MPI_Type_free(&t);
  return r;
}

/* Pieces of a region: [start, start+len) in etypes, owned by `owner` (-1: a hole). */
typedef struct {
  long start, len;
  int owner;
} piece_t;

/* Picks the ranks that write nothing in this op (never all of them). */
static void silent_ranks(rng_t* r, int* silent) {
  int n = 0;
  for (int i = 0; i < g_nprocs; ++i) {
    silent[i] = g_nprocs > 1 && rnd(r, 0, 5) == 0;
    n += silent[i];
  }
  if (n == g_nprocs) silent[rnd(r, 0, g_nprocs - 1)] = 0;
}

/* Builds this rank's view for op `op` and returns the region's tile size in bytes (the same on
 * every rank: it comes from the shared layout seed). */
static MPI_Offset build_view(const op_t* op, view_t* v) {
  rng_t r = stream(op->layout_seed, 1, 0);
  const etype_t* et = &g_etypes[op->etype];
  const int es = et->basic_size * et->basics;
  int silent[1024];
  v->disp = op->base;
  v->elems = 0;
  v->filetype = MPI_DATATYPE_NULL;
  MPI_Offset tile = 0;

  if (op->kind == K_SUBARRAY || op->kind == K_DARRAY) {
    int nd = rnd(&r, 1, 3), sizes[3], psizes[3] = {0, 0, 0};
    int order = rnd(&r, 0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int distribs[3], dargs[3];
    for (int d = 0; d < nd; ++d) sizes[d] = rnd(&r, 1, nd == 1 ? scaled(300) : nd == 2 ? scaled(40) : scaled(14));
    if (op->kind == K_DARRAY) {
      int spread = 0;
      for (int d = 0; d < nd; ++d) {
        int c = rnd(&r, 0, 3);
        distribs[d] = c == 0 ? MPI_DISTRIBUTE_NONE : c == 1 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
        dargs[d] = c == 3 ? rnd(&r, 1, 3) : MPI_DISTRIBUTE_DFLT_DARG;
        if (distribs[d] == MPI_DISTRIBUTE_NONE) psizes[d] = 1;
        else spread = 1;
      }
      if (!spread) {
        distribs[0] = MPI_DISTRIBUTE_CYCLIC;
        dargs[0] = MPI_DISTRIBUTE_DFLT_DARG;
        psizes[0] = 0;
      }
    }
    MPI_Dims_create(g_nprocs, nd, psizes);
    tile = es;
    for (int d = 0; d < nd; ++d) tile *= sizes[d];
    MPI_Datatype t;
    if (op->kind == K_DARRAY) {
      MPI_Type_create_darray(g_nprocs, g_rank, nd, sizes, distribs, dargs, psizes, order, et->type, &t);
    } else {
      /* uneven blocks over the process grid; a rank whose block is empty writes nothing */
      int coords[3], subs[3], starts[3], rest = g_rank, empty = 0;
      for (int d = nd - 1; d >= 0; --d) {
        coords[d] = rest % psizes[d];
        rest /= psizes[d];
      }
      for (int d = 0; d < nd; ++d) {
        int q = sizes[d] / psizes[d], m = sizes[d] % psizes[d];
        subs[d] = q + (coords[d] < m);
        starts[d] = coords[d] * q + (coords[d] < m ? coords[d] : m);
        empty |= subs[d] == 0;
      }
      if (empty) {
        MPI_Type_contiguous(1, et->type, &t);
      } else {
        MPI_Type_create_subarray(nd, sizes, subs, starts, order, et->type, &t);
      }
      if (empty) {
        v->filetype = t;
        MPI_Type_commit(&v->filetype);
        v->elems = 0;
        return tile;
      }
    }
    int size;
    MPI_Type_size(t, &size);
    v->elems = size / es;
    if (size == 0) { /* an empty darray block: the etype as the view, nothing written */
      MPI_Type_free(&t);
      MPI_Type_contiguous(1, et->type, &t);
    }
    v->filetype = t;
    MPI_Type_commit(&v->filetype);
    return tile;
  }

  silent_ranks(&r, silent);
  if (op->kind == K_HVECTOR) {
    /* regular interleaving of the ranks that write, in blocks of bl etypes */
    int bl = rnd(&r, 1, scaled(16)), cells = rnd(&r, 1, scaled(120)), active = 0, mine = -1;
    for (int i = 0; i < g_nprocs; ++i) {
      if (!silent[i]) {
        if (i == g_rank) mine = active;
        ++active;
      }
    }
    tile = (MPI_Offset)cells * bl * es;
    int count = mine < 0 || mine >= cells ? 0 : (cells - mine + active - 1) / active;
    int shift_in_type = rnd(&r, 0, 1); /* the block offset in the view's disp, or in the type */
    if (count == 0) {
      MPI_Type_contiguous(1, et->type, &v->filetype);
    } else {
      MPI_Datatype hv;
      MPI_Type_create_hvector(count, bl, (MPI_Aint)active * bl * es, et->type, &hv);
      MPI_Aint off = (MPI_Aint)mine * bl * es;
      if (shift_in_type) {
        int one = 1;
        MPI_Type_create_struct(1, &one, &off, &hv, &v->filetype);
        MPI_Type_free(&hv);
      } else {
        v->filetype = hv;
        v->disp += off; /* the tile stays the region's: a resize below keeps the period */
      }
      v->elems = (long)count * bl;
    }
  } else {
    /* a partition of the region into pieces, each owned by a rank or a hole */
    int npieces = rnd(&r, 1, scaled(90)), fixed = op->kind == K_INDEXED_BLOCK ? rnd(&r, 1, scaled(12)) : 0;
    piece_t* p = malloc(npieces * sizeof *p);
    long at = 0;
    for (int i = 0; i < npieces; ++i) {
      p[i].start = at;
      p[i].len = fixed ? fixed : rnd(&r, 1, scaled(40));
      int o = rnd(&r, -1, g_nprocs - 1);
      p[i].owner = o >= 0 && silent[o] ? -1 : o;
      at += p[i].len;
    }
    tile = at * es;
    int n = 0;
    for (int i = 0; i < npieces; ++i) n += p[i].owner == g_rank;
    if (n == 0) {
      MPI_Type_contiguous(1, et->type, &v->filetype);
    } else {
      int *lens = malloc(n * sizeof(int)), *idx = malloc(n * sizeof(int));
      MPI_Aint* bytes = malloc(n * sizeof(MPI_Aint));
      MPI_Datatype* types = malloc(n * sizeof(MPI_Datatype));
      MPI_Datatype pair;
      MPI_Type_contiguous(2, et->type, &pair);
      int k = 0;
      for (int i = 0; i < npieces; ++i) {
        if (p[i].owner != g_rank) continue;
        lens[k] = (int)p[i].len;
        idx[k] = (int)p[i].start;
        bytes[k] = (MPI_Aint)p[i].start * es;
        types[k] = et->type;
        if (op->kind == K_STRUCT && lens[k] % 2 == 0 && rnd(&r, 0, 1)) {
          types[k] = pair;
          lens[k] /= 2;
        }
        v->elems += p[i].len;
        if (g_verbose > 1) printf("  rank %d owns etypes [%ld, %ld)\n", g_rank, p[i].start, p[i].start + p[i].len);
        ++k;
      }
      if (op->kind == K_INDEXED_BLOCK) {
        if (rnd(&r, 0, 1)) MPI_Type_create_indexed_block(n, fixed, idx, et->type, &v->filetype);
        else MPI_Type_create_hindexed_block(n, fixed, bytes, et->type, &v->filetype);
      } else if (op->kind == K_INDEXED) {
        MPI_Type_indexed(n, lens, idx, et->type, &v->filetype);
      } else if (op->kind == K_HINDEXED) {
        MPI_Type_create_hindexed(n, lens, bytes, et->type, &v->filetype);
      } else {
        MPI_Type_create_struct(n, lens, bytes, types, &v->filetype);
      }
      MPI_Type_free(&pair);
      free(lens);
      free(idx);
      free(bytes);
      free(types);
    }
    free(p);
  }
  /* Several tiles need a common period: the region's size. */
  if (op->reps > 1 || op->resize) v->filetype = resized_to(v->filetype, (MPI_Aint)tile);
  MPI_Type_commit(&v->filetype);
  return tile;
}

/* ---- memory: the data of elements [e0, e1) (etypes) of this rank's stream, in a random memory
 * type whose type map yields exactly those bytes in order ---------------------------------------- */
typedef struct {
  char* alloc;         /* what to free */
  const void* buf;     /* what to pass */
  MPI_Datatype type;   /* committed; MPI_DATATYPE_NULL for predefined ones */
  MPI_Datatype passed; /* what to pass */
  int count;
  long basics;
} memory_t;

/* The bytes of basic element `basic` of this rank's data in write `version`: never 0, so a byte
 * that a write lost shows against the holes. */
static void put_basic(char* dst, uint64_t version, long basic, int bs) {
  rng_t r = stream(g_seed ^ version, (uint64_t)g_rank + 1, (uint64_t)basic);
  uint64_t v = next_u64(&r);
  for (int b = 0; b < bs; ++b) dst[b] = (char)((v >> (8 * b)) | 1);
}

static memory_t make_memory(const etype_t* et, long e0, long e1, uint64_t version, rng_t* r) {
  memory_t m = {0};
  const int bs = et->basic_size;
  long n = (e1 - e0) * et->basics, first = e0 * et->basics;
  m.basics = n;
  m.type = MPI_DATATYPE_NULL;
  int how = n == 0 ? 0 : rnd(r, 0, 4);
  if (getenv("VF_MEM") && n) how = atoi(getenv("VF_MEM"));
  if (how == 0 || how == 1) { /* contiguous basics, or the etype itself */
    m.alloc = malloc(n * bs + 1);
    for (long i = 0; i < n; ++i) put_basic(m.alloc + i * bs, version, first + i, bs);
    m.buf = m.alloc;
    if (how == 1 && et->basics > 1) {
      m.passed = et->type;
      m.count = (int)(n / et->basics);
    } else {
      m.passed = et->basic;
      m.count = (int)n;
    }
  } else if (how == 2) { /* shuffled pieces with gaps: a non-monotonic hindexed memory type */
    int np = 0;
    long *plen = malloc(n * sizeof(long)), *pstart = malloc(n * sizeof(long));
    for (long at = 0; at < n; ++np) {
      pstart[np] = at;
      plen[np] = rnd(r, 1, 17);
      if (at + plen[np] > n) plen[np] = n - at;
      at += plen[np];
    }
    int* perm = malloc(np * sizeof(int));
    for (int i = 0; i < np; ++i) perm[i] = i;
    for (int i = np - 1; i > 0; --i) {
      int j = rnd(r, 0, i), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    MPI_Aint* where = malloc(np * sizeof(MPI_Aint));
    int* lens = malloc(np * sizeof(int));
    long pos = 0;
    for (int i = 0; i < np; ++i) { /* memory order: perm; pieces get their place in that order */
      int p = perm[i];
      pos += rnd(r, 0, 3);
      where[p] = (MPI_Aint)pos * bs;
      pos += plen[p];
    }
    m.alloc = malloc(pos * bs + 1);
    memset(m.alloc, 0xEE, pos * bs + 1);
    for (int p = 0; p < np; ++p) {
      lens[p] = (int)plen[p];
      for (long i = 0; i < plen[p]; ++i) put_basic(m.alloc + where[p] + i * bs, version, first + pstart[p] + i, bs);
    }
    MPI_Type_create_hindexed(np, lens, where, et->basic, &m.type);
    MPI_Type_commit(&m.type);
    m.buf = m.alloc;
    m.passed = m.type;
    m.count = 1;
    free(plen);
    free(pstart);
    free(perm);
    free(where);
    free(lens);
  } else { /* blocks of k basics with gaps: resized contiguous, or a negative-stride vector */
    int k = 1;
    for (int c = 5; c >= 1; --c)
      if (n % c == 0 && rnd(r, 0, 1)) {
        k = c;
        break;
      }
    long blocks = n / k;
    int gap = rnd(r, 0, 3);
    /* Open MPI 4.1's datatype engine packs vector(n, 1, -1) of MPI_BYTE as if contiguous:
     * a negative stride of one element is left out */
    if (how == 4 && k + gap == 1) gap = 1;
    long period = k + gap;
    m.alloc = malloc(blocks * period * bs + 1);
    memset(m.alloc, 0xEE, blocks * period * bs + 1);
    if (how == 3) {
      MPI_Datatype c;
      MPI_Type_contiguous(k, et->basic, &c);
      MPI_Type_create_resized(c, 0, (MPI_Aint)period * bs, &m.type);
      MPI_Type_free(&c);
      for (long j = 0; j < blocks; ++j)
        for (int i = 0; i < k; ++i) put_basic(m.alloc + (j * period + i) * bs, version, first + j * k + i, bs);
      m.buf = m.alloc;
      m.count = (int)blocks;
    } else {
      /* block j at -j*period from the buffer pointer, which points at the last block in memory */
      MPI_Type_vector((int)blocks, k, -(int)period, et->basic, &m.type);
      char* top = m.alloc + (blocks - 1) * period * bs;
      for (long j = 0; j < blocks; ++j)
        for (int i = 0; i < k; ++i) put_basic(top - j * period * bs + i * bs, version, first + j * k + i, bs);
      m.buf = top;
      m.count = 1;
    }
    MPI_Type_commit(&m.type);
    m.passed = m.type;
  }
  return m;
}

/* The memory type must give the intended bytes through MPI's datatype engine (MPI_Pack, not
 * MPI-IO): else the fuzzer, not the I/O, is wrong. */
static void check_memory(const memory_t* m, const etype_t* et, long first, uint64_t version, const char* what) {
  if (m->basics == 0) return;
  const int bs = et->basic_size;
  int size, pos = 0;
  MPI_Pack_size(m->count, m->passed, MPI_COMM_SELF, &size);
  char *packed = malloc(size), *want = malloc(m->basics * bs);
  MPI_Pack(m->buf, m->count, m->passed, packed, size, &pos, MPI_COMM_SELF);
  for (long b = 0; b < m->basics; ++b) put_basic(want + b * bs, version, first + b, bs);
  if (pos != m->basics * bs || memcmp(packed, want, pos) != 0)
    fail(what, "MPI_Pack of the memory type differs from its data");
  free(packed);
  free(want);
}

static void free_memory(memory_t* m) {
  if (m->type != MPI_DATATYPE_NULL) MPI_Type_free(&m->type);
  free(m->alloc);
}

/* The status must count what was written. */
static void check_status(const MPI_Status* st, const etype_t* et, const memory_t* m, const char* what) {
  MPI_Count got;
  MPI_Get_elements_x(st, et->basic, &got);
  if (got != m->basics) {
    char d[160];
    snprintf(d, sizeof d, "the status counts %lld basic elements, %ld were written", (long long)got, m->basics);
    fail(what, d);
  }
}

static void check_position(MPI_File fh, long expected, const char* what) {
  MPI_Offset pos;
  check(MPI_File_get_position(fh, &pos), "MPI_File_get_position");
  if (pos != expected) {
    char d[160];
    snprintf(d, sizeof d, "the individual file pointer is at %lld etypes, expected %ld", (long long)pos, expected);
    fail(what, d);
  }
}

/* ---- the writes -------------------------------------------------------------------------------- */
static void write_range(MPI_File fh, const op_t* op, int collective, int split, int at, long e0, long e1,
                        uint64_t version, rng_t* r, const char* what) {
  const etype_t* et = &g_etypes[op->etype];
  memory_t m = make_memory(et, e0, e1, version, r);
  check_memory(&m, et, e0 * et->basics, version, what);
  MPI_Status st;
  int err;
  /* ROMIO leaves the status alone when nothing is written: start from an empty one */
  MPI_Status_set_elements_x(&st, MPI_BYTE, 0);
  if (collective && split) {
    err = at ? MPI_File_write_at_all_begin(fh, e0, m.buf, m.count, m.passed)
             : MPI_File_write_all_begin(fh, m.buf, m.count, m.passed);
    check(err, what);
    err = at ? MPI_File_write_at_all_end(fh, m.buf, &st) : MPI_File_write_all_end(fh, m.buf, &st);
  } else if (collective) {
    err = at ? MPI_File_write_at_all(fh, e0, m.buf, m.count, m.passed, &st)
             : MPI_File_write_all(fh, m.buf, m.count, m.passed, &st);
  } else if (at) {
    err = MPI_File_write_at(fh, e0, m.buf, m.count, m.passed, &st);
  } else {
    check(MPI_File_seek(fh, e0, MPI_SEEK_SET), "MPI_File_seek");
    err = MPI_File_write(fh, m.buf, m.count, m.passed, &st);
  }
  check(err, what);
  /* ROMIO leaves the status of a zero-count split collective unset: only counts > 0 are checked */
  if (err == MPI_SUCCESS && m.basics > 0) check_status(&st, et, &m, what);
  free_memory(&m);
}

/* What this rank's writes of one op leave in the file, worked out with MPI's datatype engine on
 * memory (MPI_Unpack through the filetype), not with MPI-IO: the stream of its elements (the
 * write's data, then the independent overwrite's) placed at disp + the filetype's displacements. */
static void expect(unsigned char* image, MPI_Offset image_size, const op_t* op, const view_t* v, uint64_t version,
                   long x, long y) {
  const etype_t* et = &g_etypes[op->etype];
  const int bs = et->basic_size, k = et->basics;
  long n = v->elems * op->reps;
  if (n == 0) return;
  char* data = malloc(n * k * bs);
  for (long b = 0; b < n * k; ++b) put_basic(data + b * bs, b >= x * k && b < y * k ? version + 1 : version, b, bs);
  MPI_Aint lb, extent, tlb, textent;
  MPI_Type_get_extent(v->filetype, &lb, &extent);
  MPI_Type_get_true_extent(v->filetype, &tlb, &textent);
  MPI_Offset last = v->disp + (MPI_Offset)(op->reps - 1) * extent + tlb + textent;
  if (v->disp + tlb < 0 || last > image_size) {
    fail("expect", "the view reaches beyond the planned file (a fuzzer bug)");
  } else {
    int pos = 0;
    MPI_Unpack(data, (int)(n * k * bs), &pos, image + v->disp, op->reps, v->filetype, MPI_COMM_SELF);
  }
  free(data);
}

static void run_op(MPI_File fh, const op_t* op, int index, const view_t* v, unsigned char* image,
                   MPI_Offset image_size) {
  rng_t r = stream(op->layout_seed, 2, (uint64_t)g_rank); /* this rank's own choices */
  const etype_t* et = &g_etypes[op->etype];
  long n = v->elems * op->reps;
  long a = n ? rnd(&r, 0, (int)n) : 0;
  uint64_t version = (uint64_t)index * 7919;
  char what[96];
  snprintf(what, sizeof what, "write %d (%s, %s)", index, kind_names[op->kind], form_names[op->form]);
  check(MPI_File_set_view(fh, v->disp, et->type, v->filetype, "native", MPI_INFO_NULL), "MPI_File_set_view");
  switch (op->form) {
    case F_WRITE_ALL:
      write_range(fh, op, 1, 0, 0, 0, n, version, &r, what);
      check_position(fh, n, what);
      break;
    case F_WRITE_ALL_TWICE:
      write_range(fh, op, 1, 0, 0, 0, a, version, &r, what);
      check_position(fh, a, what);
      write_range(fh, op, 1, 0, 0, a, n, version, &r, what);
      check_position(fh, n, what);
      break;
    case F_WRITE_AT_ALL: write_range(fh, op, 1, 0, 1, 0, n, version, &r, what); break;
    case F_WRITE_AT_ALL_REVERSED:
      write_range(fh, op, 1, 0, 1, a, n, version, &r, what);
      write_range(fh, op, 1, 0, 1, 0, a, version, &r, what);
      break;
    case F_WRITE_ALL_SPLIT:
      write_range(fh, op, 1, 1, 0, 0, n, version, &r, what);
      check_position(fh, n, what);
      break;
    case F_WRITE_AT_ALL_SPLIT:
      write_range(fh, op, 1, 1, 1, a, n, version, &r, what);
      write_range(fh, op, 1, 0, 1, 0, a, version, &r, what);
      break;
    default: /* a collective part, then this rank's rest independently */
      write_range(fh, op, 1, 0, 1, 0, a, version, &r, what);
      write_range(fh, op, 0, 0, rnd(&r, 0, 1), a, n, version, &r, what);
      break;
  }
  long x = 0, y = 0;
  /* --settle: a sync (collective: every rank) between the write and the overwrite; OMPIO 4.1.4
   * needs it (docs/testing.md) */
  if (op->overwrite && g_settle) check(MPI_File_sync(fh), "MPI_File_sync (--settle)");
  if (op->overwrite && n > 0) { /* an independent write over part of this rank's own data */
    x = rnd(&r, 0, (int)n - 1);
    y = rnd(&r, (int)x, (int)n);
    int at = rnd(&r, 0, 1);
    if (getenv("VF_AT")) at = atoi(getenv("VF_AT"));
    write_range(fh, op, 0, 0, at, x, y, version + 1, &r, what);
  }
  expect(image, image_size, op, v, version, x, y);
  if (op->view_again)
    check(MPI_File_set_view(fh, v->disp, et->type, v->filetype, "native", MPI_INFO_NULL), "MPI_File_set_view");
  if (op->sync_after) check(MPI_File_sync(fh), "MPI_File_sync");
}

/* Writes through one handle made visible to another: sync, barrier, sync (MPI's consistency rule). */
static void switch_handle(MPI_File* fhs, int from, int to) {
  check(MPI_File_sync(fhs[from]), "MPI_File_sync (switching handles)");
  MPI_Barrier(MPI_COMM_WORLD);
  check(MPI_File_sync(fhs[to]), "MPI_File_sync (switching handles)");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nprocs);
  int nops = 10;
  const char* path = NULL;
  int have_seed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--ops") && i + 1 < argc) nops = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--scale") && i + 1 < argc) g_scale = atof(argv[++i]);
    else if (!strcmp(argv[i], "-v")) g_verbose = 1;
    else if (!strcmp(argv[i], "-vv")) g_verbose = 2;
    else if (!strcmp(argv[i], "--settle")) g_settle = 1;
    else if (!strcmp(argv[i], "--more")) g_more = 1;
    else if (!have_seed) {
      g_seed = strtoull(argv[i], NULL, 10);
      have_seed = 1;
    } else path = argv[i];
  }
  if (!path || g_nprocs > 1024 || nops < 1) {
    if (g_rank == 0)
      fprintf(stderr, "usage: view_fuzzer SEED OUTPUT [--ops N] [--scale S] [-v] (at most 1024 ranks)\n");
    MPI_Finalize();
    return 2;
  }
  make_etypes();

  rng_t g = stream(g_seed, 0, 0); /* the shared plan: the same on every rank */
  MPI_Info info;
  MPI_Info_create(&info);
  const char* buffers[] = {NULL, "4096", "65536", "1048576"};
  const char* buffer = buffers[rnd(&g, 0, 3)];
  if (getenv("VF_NOHINTS")) buffer = NULL;
  if (buffer) MPI_Info_set(info, "cb_buffer_size", buffer);
  char nodes[16];
  if (rnd(&g, 0, 1)) {
    snprintf(nodes, sizeof nodes, "%d", rnd(&g, 1, g_nprocs));
    MPI_Info_set(info, "cb_nodes", nodes);
  }
  MPI_Info_set(info, "cb_config_list", "*:*");
  /* ROMIO 3.2.1's data-sieving independent write (ADIOI_GEN_WriteStrided) overruns its buffer on
   * some of these views (AddressSanitizer: heap-buffer-overflow in a memcpy): not what is tested */
  MPI_Info_set(info, "romio_ds_write", "disable");

  op_t* ops = calloc(nops, sizeof *ops);
  MPI_Offset end = 0;
  rng_t more = stream(g_seed, 0, 9); /* --more's choices, apart from the others */
  for (int i = 0; i < nops; ++i) {
    op_t* op = &ops[i];
    if (i > 0 && rnd(&g, 0, 6) == 0) { /* a rewrite of an earlier write's region by its owners */
      *op = ops[rnd(&g, 0, i - 1)];
      op->rewrite_of = 1;
    } else {
      op->kind = rnd(&g, 0, N_KINDS - 1);
      op->etype = rnd(&g, 0, N_ETYPES - 1);
      op->layout_seed = next_u64(&g);
      op->reps = rnd(&g, 0, 2) ? 1 : rnd(&g, 2, 3);
      op->resize = rnd(&g, 0, 3) == 0;
      op->rewrite_of = 0;
      op->base = end + (rnd(&g, 0, 1) ? rnd(&g, 0, 5000) : 0);
    }
    op->form = rnd(&g, 0, N_FORMS - 1);
    if (getenv("VF_FORM")) op->form = atoi(getenv("VF_FORM"));
    op->overwrite = rnd(&g, 0, 3) == 0;
    if (getenv("VF_OVER")) op->overwrite = atoi(getenv("VF_OVER"));
    op->sync_after = rnd(&g, 0, 3) == 0;
    op->view_again = rnd(&g, 0, 4) == 0;
    if (!op->rewrite_of) {
      view_t v;
      op->bytes = build_view(op, &v); /* the tile size, agreed (it is derived from the shared seed) */
      MPI_Type_free(&v.filetype);
      end = op->base + op->bytes * op->reps;
    }
    op->handle = op->resize_handle = op->preallocate = 0;
    op->cut = -1;
    if (g_more) {
      op->handle = rnd(&more, 0, 3) == 0;
      if (rnd(&more, 0, 4) == 0) {
        op->cut = (MPI_Offset)((double)end * rnd(&more, 0, 1000) / 1000.0);
        op->resize_handle = rnd(&more, 0, 1);
      }
      op->preallocate = rnd(&more, 0, 6) == 0;
    }
    if (g_verbose && g_rank == 0)
      printf("write %d: %s%s, etype %s, base %lld, tile %lld bytes x %d%s, %s%s%s%s\n", i, kind_names[op->kind],
             op->rewrite_of ? " (rewrite)" : "", g_etypes[op->etype].name, (long long)op->base, (long long)op->bytes,
             op->reps, op->resize ? " resized" : "", form_names[op->form],
             op->overwrite ? ", independent overwrite" : "", op->sync_after ? ", sync" : "",
             op->view_again ? ", view set again" : "");
    if (g_verbose && g_rank == 0 && g_more)
      printf("  through handle %d%s\n", op->handle, op->preallocate ? ", then preallocate" : "");
    if (g_verbose && g_rank == 0 && op->cut >= 0)
      printf("  cut at %lld on handle %d\n", (long long)op->cut, op->resize_handle);
  }

  MPI_Offset image_size = end + 1;
  unsigned char* image = calloc(image_size, 1);
  MPI_File fh;
  if (g_rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  /* (--more: read-write, as MPI_File_preallocate needs) */
  const int access = g_more ? MPI_MODE_RDWR : MPI_MODE_WRONLY;
  int err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | access, info, &fh);
  check(err, "MPI_File_open");
  if (err == MPI_SUCCESS) {
    /* The file's full size first: ROMIO's read-modify-write of a hole beyond the end of the file
     * writes back whatever its buffer held (0xff here), so without this its holes are garbage. */
    check(MPI_File_set_size(fh, image_size), "MPI_File_set_size");
    MPI_File fhs[2] = {fh, MPI_FILE_NULL};
    if (g_more) check(MPI_File_open(MPI_COMM_WORLD, path, access, info, &fhs[1]), "MPI_File_open (second)");
    int current = 0;
    for (int i = 0; i < nops; ++i) {
      view_t v;
      build_view(&ops[i], &v);
      if (ops[i].handle != current) {
        switch_handle(fhs, current, ops[i].handle);
        current = ops[i].handle;
      }
      run_op(fhs[current], &ops[i], i, &v, image, image_size);
      MPI_Type_free(&v.filetype);
      if (ops[i].cut >= 0) {
        if (ops[i].resize_handle != current) {
          switch_handle(fhs, current, ops[i].resize_handle);
          current = ops[i].resize_handle;
        }
        check(MPI_File_set_size(fhs[current], ops[i].cut), "MPI_File_set_size (cut)");
        check(MPI_File_set_size(fhs[current], image_size), "MPI_File_set_size (back)");
        memset(image + ops[i].cut, 0, (size_t)(image_size - ops[i].cut));
      }
      if (ops[i].preallocate) check(MPI_File_preallocate(fhs[current], image_size), "MPI_File_preallocate");
    }
    if (fhs[1] != MPI_FILE_NULL) check(MPI_File_close(&fhs[1]), "MPI_File_close (second)");
    check(MPI_File_close(&fhs[0]), "MPI_File_close");
  }
  /* The file must hold what the writes put there, worked out apart from MPI-IO: each rank's bytes
   * (disjoint across ranks; holes are 0 and written bytes never are), read back on rank 0. */
  int ok_so_far;
  MPI_Allreduce(&g_failed, &ok_so_far, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!ok_so_far) {
    unsigned char* all = g_rank == 0 ? calloc(image_size + 1, 1) : NULL;
    for (MPI_Offset at = 0; at < image_size; at += 1 << 30) {
      int len = image_size - at < (1 << 30) ? (int)(image_size - at) : 1 << 30;
      MPI_Reduce(image + at, g_rank == 0 ? all + at : NULL, len, MPI_UNSIGNED_CHAR, MPI_BOR, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) {
      MPI_Offset size = image_size;
      if (getenv("VF_DUMP")) {
        FILE* d = fopen(getenv("VF_DUMP"), "wb");
        fwrite(all, 1, size, d);
        fclose(d);
      }
      FILE* f = fopen(path, "rb");
      unsigned char* got = malloc(image_size + 1);
      size_t n = f ? fread(got, 1, image_size + 1, f) : 0;
      if (!f) {
        fail("read-back", "cannot open the output");
      } else if ((MPI_Offset)n != size) {
        char d[128];
        snprintf(d, sizeof d, "the file has %zu bytes, the writes end at %lld", n, (long long)size);
        fail("read-back", d);
      }
      for (MPI_Offset i = 0; f && i < size && i < (MPI_Offset)n; ++i)
        if (got[i] != all[i]) {
          char d[160];
          snprintf(d, sizeof d, "byte %lld is %d, the writes put %d there (write regions: -v)", (long long)i, got[i],
                   all[i]);
          fail("read-back", d);
          break;
        }
      if (f) fclose(f);
      free(got);
      free(all);
    }
  }
  free(image);
  MPI_Info_free(&info);
  free(ops);
  int any;
  MPI_Allreduce(&g_failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any && g_rank == 0)
    fprintf(stderr, "view_fuzzer: FAILED with seed %llu on %d ranks\n", (unsigned long long)g_seed, g_nprocs);
  MPI_Type_free(&g_etypes[4].type);
  MPI_Finalize();
  return any ? 1 : 0;
}
