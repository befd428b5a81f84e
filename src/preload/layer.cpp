#include "preload/layer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#include "preload/real_mpi.hpp"
#include "strata/strata.hpp"

namespace strata::preload {

namespace {

// Mode of the layer, from STRATA_PRELOAD: on (default: the cost model decides), off (everything
// to MPI-IO, counted), engine (gathered writes always through the engine), mpiio (gathered writes
// always replayed through MPI-IO: the cost model's other branch).
enum class Mode { on, off, engine, mpiio };

Mode mode() {
  static const Mode m = [] {
    const char* v = std::getenv("STRATA_PRELOAD");
    if (v == nullptr || *v == '\0' || std::strcmp(v, "on") == 0 || std::strcmp(v, "1") == 0) return Mode::on;
    if (std::strcmp(v, "mpiio") == 0) return Mode::mpiio;
    if (std::strcmp(v, "engine") == 0) return Mode::engine;
    return Mode::off;
  }();
  return m;
}

uint64_t parse_size(const char* v, uint64_t fallback) {
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  switch (end && *end ? *end : ' ') {
    case 'k':
    case 'K': x *= 1024.0; break;
    case 'm':
    case 'M': x *= 1024.0 * 1024; break;
    case 'g':
    case 'G': x *= 1024.0 * 1024 * 1024; break;
    default: break;
  }
  return x > 0 ? static_cast<uint64_t>(x) : fallback;
}

// Gathered bytes per rank before the layer flushes (agreed every kCheckEvery gathered calls);
// a rank past twice the budget between agreements writes its own runs alone.
uint64_t budget() {
  static const uint64_t b = parse_size(std::getenv("STRATA_PRELOAD_BUDGET"), uint64_t{256} << 20);
  return b;
}
constexpr uint64_t kCheckEvery = 16;

struct State {
  std::vector<std::unique_ptr<Group>> groups;
  std::vector<std::unique_ptr<File>> files;  // open files, in the order they were opened
  std::unordered_map<MPI_File, File*> by_handle;
};

State& state() {
  static auto* s = new State();  // never destroyed: MPI calls may come during exit
  return *s;
}

Group* group_for(MPI_Comm comm) {
  for (auto& g : state().groups) {
    int result = MPI_UNEQUAL;
    PMPI_Comm_compare(comm, g->comm, &result);
    if (result == MPI_IDENT || result == MPI_CONGRUENT) return g.get();
  }
  auto g = std::make_unique<Group>();
  PMPI_Comm_dup(comm, &g->comm);
  state().groups.push_back(std::move(g));
  return state().groups.back().get();
}

// "ufs:/a/b" -> "/a/b" (ROMIO's file-system prefixes), made absolute: the program may change
// its working directory before the flush.
std::string engine_path(const char* filename) {
  std::string p(filename);
  const size_t colon = p.find(':');
  if (colon != std::string::npos && colon > 1 && p.find('/') > colon) p = p.substr(colon + 1);
  if (!p.empty() && p[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) p = std::string(cwd) + "/" + p;
  }
  return p;
}

void take_hints(File& f, MPI_Info info) {
  if (info == MPI_INFO_NULL) return;
  int n = 0;
  PMPI_Info_get_nkeys(info, &n);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    PMPI_Info_get_nthkey(info, i, key);
    if (std::strncmp(key, "strata_", 7) != 0) continue;
    int len = 0, flag = 0;
    PMPI_Info_get_valuelen(info, key, &len, &flag);
    std::string value(static_cast<size_t>(len) + 1, '\0');
    PMPI_Info_get(info, key, len + 1, value.data(), &flag);
    value.resize(static_cast<size_t>(len));
    bool replaced = false;
    for (auto& [k, v] : f.hints) {
      if (k == key) {
        v = value;
        replaced = true;
      }
    }
    if (!replaced) f.hints.emplace_back(key, value);
  }
}

// STRATA_PRELOAD_HINTS="key=value,key=value": engine hints for every file.
std::vector<std::pair<std::string, std::string>> environment_hints() {
  std::vector<std::pair<std::string, std::string>> out;
  const char* v = std::getenv("STRATA_PRELOAD_HINTS");
  if (v == nullptr) return out;
  std::string s(v);
  size_t at = 0;
  while (at < s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    const std::string item = s.substr(at, comma - at);
    const size_t eq = item.find('=');
    if (eq != std::string::npos) out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    at = comma + 1;
  }
  return out;
}

// Why the file's collective writes pass through, from what every rank shares (no message); and
// why this rank alone writes its own (the view's problems other than the data representation).
void decide(File& f, int alone) {
  int why = -1;
  if (mode() == Mode::off) why = static_cast<int>(Reason::disabled);
  if ((f.amode & MPI_MODE_SEQUENTIAL) != 0) why = std::max(why, static_cast<int>(Reason::sequential));
  if (f.atomic) why = std::max(why, static_cast<int>(Reason::atomic));
  if ((f.amode & MPI_MODE_RDONLY) != 0) why = std::max(why, static_cast<int>(Reason::read_only));
  if (f.view.datarep != "native") why = std::max(why, static_cast<int>(Reason::datarep));
  f.ineligible = why;
  f.alone = alone;
}

// The view's problem that is this rank's own (a data representation is every rank's).
int own_problem(const File& f) {
  const std::string problem = f.view.problem();
  if (problem.empty()) return -1;
  const Reason r = reason_from_name(problem);
  return r == Reason::datarep ? -1 : static_cast<int>(r);
}

int error_class_of(const std::string& message, int err) {
  if (err == ENOSPC || message.find(std::strerror(ENOSPC)) != std::string::npos) return MPI_ERR_NO_SPACE;
  if (err == EDQUOT || message.find(std::strerror(EDQUOT)) != std::string::npos) return MPI_ERR_QUOTA;
  if (err == EACCES || message.find(std::strerror(EACCES)) != std::string::npos) return MPI_ERR_ACCESS;
  return MPI_ERR_IO;
}

bool same_file(const File& a, const File& b) { return a.dev == b.dev && a.ino == b.ino; }

struct Replay {};  // STRATA_PRELOAD=mpiio: straight to MPI-IO

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The gathered runs written through MPI-IO's own collective write on the program's handle
// (a byte view of the runs; the program's view and individual pointer restored after).
int replay_through_mpiio(File& f) {
  MPI_Offset position = 0;
  PMPI_File_get_position(f.fh, &position);
  MPI_Offset disp = 0;
  MPI_Datatype etype = MPI_BYTE, filetype = MPI_BYTE;
  char datarep[MPI_MAX_DATAREP_STRING + 1] = "native";
  PMPI_File_get_view(f.fh, &disp, &etype, &filetype, datarep);
  // The runs packed in file order (ROMIO 3.2's flattening does not survive a memory type of
  // absolute addresses), described by a byte file type.
  std::vector<int> lengths;
  std::vector<MPI_Aint> file_at;
  std::vector<char> packed(f.pending.bytes());
  uint64_t at = 0;
  f.pending.for_each([&](uint64_t offset, uint64_t length, const char* data) {
    std::memcpy(packed.data() + at, data, length);
    at += length;
    // Runs beyond 1 GiB in pieces (MPI counts are int).
    for (uint64_t done = 0; done < length;) {
      const uint64_t n = std::min<uint64_t>(length - done, uint64_t{1} << 30);
      lengths.push_back(static_cast<int>(n));
      file_at.push_back(static_cast<MPI_Aint>(offset + done));
      done += n;
    }
  });
  // A rank without runs keeps a byte view (ROMIO 3.2 corrupts its heap flattening an empty type).
  MPI_Datatype ftype = MPI_BYTE;
  if (!lengths.empty()) {
    PMPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), file_at.data(), MPI_BYTE, &ftype);
    PMPI_Type_commit(&ftype);
  }
  int rc = real().File_set_view(f.fh, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
  MPI_Status status;
  // One collective call on every rank; a rank's count in bytes may pass INT_MAX, so its memory
  // type is then whole 1 GiB blocks and the rest.
  if (rc == MPI_SUCCESS) {
    const uint64_t gib = uint64_t{1} << 30, bytes = packed.size();
    if (bytes > INT32_MAX) {
      MPI_Datatype block = MPI_BYTE, whole = MPI_BYTE;
      PMPI_Type_contiguous(static_cast<int>(gib), MPI_BYTE, &block);
      int counts[2] = {static_cast<int>(bytes / gib), static_cast<int>(bytes % gib)};
      MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(bytes / gib * gib)};
      MPI_Datatype types[2] = {block, MPI_BYTE};
      PMPI_Type_create_struct(2, counts, displs, types, &whole);
      PMPI_Type_commit(&whole);
      rc = real().File_write_at_all(f.fh, 0, packed.data(), 1, whole, &status);
      PMPI_Type_free(&whole);
      PMPI_Type_free(&block);
    } else {
      rc = real().File_write_at_all(f.fh, 0, packed.data(), static_cast<int>(bytes), MPI_BYTE, &status);
    }
  }
  const int restored = real().File_set_view(f.fh, disp, etype, filetype, datarep, MPI_INFO_NULL);
  PMPI_File_seek(f.fh, position, MPI_SEEK_SET);
  if (ftype != MPI_BYTE) PMPI_Type_free(&ftype);
  for (MPI_Datatype t : {etype, filetype}) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&t);
  }
  return rc != MPI_SUCCESS ? rc : restored;
}

}  // namespace

Group::Group() = default;
Group::~Group() = default;

bool enabled() { return mode() != Mode::off; }

bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("STRATA_PRELOAD_TRACE");
    return v != nullptr && *v != '\0' && *v != '0';
  }();
  return on;
}

File* find(MPI_File fh) {
  auto& m = state().by_handle;
  auto it = m.find(fh);
  return it == m.end() ? nullptr : it->second;
}

void opened(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File fh) {
  auto f = std::make_unique<File>();
  f->fh = fh;
  f->path = engine_path(filename);
  f->amode = amode;
  f->group = group_for(comm);
  struct stat st {};
  if (::stat(f->path.c_str(), &st) == 0) {
    f->dev = st.st_dev;
    f->ino = st.st_ino;
  }
  f->hints = environment_hints();
  take_hints(*f, info);
  ++counters().files_opened;
  // amode is the same on every rank (MPI requires it): no agreement needed yet.
  f->ineligible = mode() == Mode::off                  ? static_cast<int>(Reason::disabled)
                  : (amode & MPI_MODE_SEQUENTIAL) != 0 ? static_cast<int>(Reason::sequential)
                  : (amode & MPI_MODE_RDONLY) != 0     ? static_cast<int>(Reason::read_only)
                                                       : -1;
  state().by_handle[fh] = f.get();
  state().files.push_back(std::move(f));
}

void view_set(File& f, bool ok, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char* datarep,
              MPI_Info info) {
  if (!ok) {  // MPI-IO refused this rank the view: its calls stay MPI-IO's
    decide(f, static_cast<int>(Reason::view_not_decoded));
    return;
  }
  const double t0 = now();
  FileView v;
  v.disp = static_cast<uint64_t>(disp);
  int esize = 1;
  PMPI_Type_size(etype, &esize);
  v.etype_size = static_cast<uint64_t>(esize > 0 ? esize : 1);
  v.datarep = datarep ? datarep : "native";
  for (char& c : v.datarep) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto map = type_map(filetype);
  if (!map->contiguous() || map->lb != 0) v.filetype = map;
  f.view = std::move(v);
  counters().view_s += now() - t0;
  take_hints(f, info);
  decide(f, own_problem(f));
}

void atomicity_set(File& f, int flag) {
  f.atomic = flag != 0;  // the same on every rank (MPI requires it)
  decide(f, f.alone);
}

void info_set(File& f, MPI_Info info) { take_hints(f, info); }

int report_error(MPI_File fh, int code) {
  if (code != MPI_SUCCESS) {
    ++counters().errors;
    PMPI_File_call_errhandler(fh, code);
  }
  return code;
}

int flush_alone(File& f, bool whole_file) {
  int rc = MPI_SUCCESS;
  for (auto& other : state().files) {
    File& o = *other;
    if (o.pending.empty() || (&o != &f && (!whole_file || !same_file(o, f)))) continue;
    if (o.fd < 0) o.fd = ::open(o.path.c_str(), O_WRONLY | O_CLOEXEC);
    int err = o.fd < 0 ? errno : 0;
    o.pending.for_each([&](uint64_t offset, uint64_t length, const char* data) {
      for (uint64_t done = 0; err == 0 && done < length;) {
        const ssize_t n = ::pwrite(o.fd, data + done, length - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) err = n < 0 ? errno : ENOSPC;
        else done += static_cast<uint64_t>(n);
      }
    });
    counters().alone_bytes += o.pending.bytes();
    o.pending.clear();
    if (err != 0 && rc == MPI_SUCCESS) rc = error_class_of("", err);
  }
  return rc;
}

int before_access(File& f, MPI_Offset offset, uint64_t bytes) {
  bool touches = offset < -1 || !f.view.problem().empty();
  if (!touches) {
    bool any = false;
    for (const auto& o : state().files) any = any || ((o.get() == &f || same_file(*o, f)) && !o->pending.empty());
    if (!any) return MPI_SUCCESS;
    MPI_Offset position = offset;
    if (offset < 0) PMPI_File_get_position(f.fh, &position);
    std::vector<FileRun> runs;
    f.view.file_runs(static_cast<uint64_t>(position) * f.view.etype_size, bytes, runs);
    for (const auto& o : state().files) {
      if (o.get() != &f && !same_file(*o, f)) continue;
      for (const FileRun& r : runs) touches = touches || o->pending.overlaps(r.offset, r.length);
    }
  }
  return touches ? flush_alone(f) : MPI_SUCCESS;
}

uint64_t pending_end(const File& f) {
  uint64_t end = 0;
  for (const auto& o : state().files) {
    if (o.get() == &f || same_file(*o, f)) end = std::max(end, o->pending.end());
  }
  return end;
}

namespace {

constexpr uint64_t kFileBound = uint64_t{1} << 62;  // bytes: beyond any MPI_Offset a file reaches

// The gathered writes of f alone through one engine phase (collective over f's group).
int flush_one(File& f) {
  int rc = MPI_SUCCESS;
  if (!f.dirty) return rc;
  f.dirty = false;
  f.since_check = 0;
  Counters& c = counters();
  uint64_t mine[2] = {f.pending.end(), f.pending.held()}, all[2] = {0, 0};
  PMPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, f.group->comm);
  const uint64_t calls = f.pending_calls;
  f.pending_calls = 0;
  if (all[1] == 0) {  // nothing left to write (every rank wrote its runs alone, or empty writes)
    c.passthrough_calls += calls;
    c.reasons[static_cast<size_t>(Reason::alone)] += calls;
    f.pending.clear();
    return rc;
  }
  const double t0 = now();
  double steps[5] = {t0, t0, t0, t0, t0};  // engine made, declared, planned, written, closed
  const size_t runs = f.pending.runs();
  int code = MPI_SUCCESS;
  bool to_mpiio = mode() == Mode::mpiio;
  double last_engine_s = 0, last_mpiio_s = -1;
  int rank = 0;
  PMPI_Comm_rank(f.group->comm, &rank);
  try {
    if (to_mpiio) throw Replay();
    if (!f.group->engine) f.group->engine = std::make_unique<strata::Engine>(f.group->comm);
    steps[0] = now();
    // Exactly the declared bytes into the program's own file; MPI-IO's own time predicted too.
    std::vector<strata::Phase::Hint> hints = {{"strata_target", "in-place"}, {"strata_compare_mpiio", "true"}};
    for (const auto& h : f.hints) hints.push_back(h);
    strata::Phase phase(*f.group->engine, f.path, strata::PhaseMode::write, hints);
    // One variable as large as any file (its size only bounds the runs: in place, nothing is
    // sized), the same at every flush, so that a flush of the layout of an earlier one further
    // on in the file (the next time step) reuses its plan moved (PhaseStats::plan_shift).
    const int v = phase.define_variable("mpi-io", 1, {kFileBound}, 0);
    // Runs whose bytes lie back to back in the gathered copy go in one add_extents call.
    std::vector<uint64_t> offsets, lengths;
    const char* first = nullptr;
    const char* next = nullptr;
    auto declare = [&] {
      if (!offsets.empty())
        phase.add_extents(v, offsets.size(), offsets.data(), lengths.data(), const_cast<char*>(first));
      offsets.clear();
      lengths.clear();
    };
    f.pending.for_each([&](uint64_t offset, uint64_t length, const char* data) {
      if (data != next) {
        declare();
        first = data;
      }
      offsets.push_back(offset);
      lengths.push_back(length);
      next = data + length;
    });
    declare();
    steps[1] = now();
    phase.plan();
    steps[2] = now();
    double& engine_s = last_engine_s;
    double& mpiio_s = last_mpiio_s;
    for (const auto& s : phase.placement().strategies) {
      if (s.name == "mpi-io") mpiio_s = s.predicted_s;
      else if (s.chosen) engine_s = s.predicted_s;
    }
    c.engine_predicted_s += engine_s;
    if (mpiio_s >= 0) c.mpiio_predicted_s += mpiio_s;
    if (mode() == Mode::on && mpiio_s >= 0 && mpiio_s < engine_s) to_mpiio = true;
    if (!to_mpiio) phase.write();
    steps[3] = now();
    const strata::PhaseStats stats = phase.close();
    steps[4] = now();
    if (!to_mpiio) {
      ++c.engine_phases;
      if (stats.plan_reused) ++c.plans_reused;
      c.engine_calls += calls;
      c.engine_bytes += f.pending.bytes();
    }
  } catch (const Replay&) {
  } catch (const strata::Error& e) {
    code = error_class_of(e.what(), 0);
    c.reasons[static_cast<size_t>(Reason::error)] += calls;
    c.passthrough_calls += calls;
    if (rank == 0)
      std::fprintf(stderr, "libstrata_preload: the engine failed on \"%s\": %s\n", f.path.c_str(), e.what());
  }
  if (to_mpiio && code == MPI_SUCCESS) {
    ++c.cost_passthroughs;
    c.passthrough_calls += calls;
    c.passthrough_bytes += f.pending.bytes();
    c.reasons[static_cast<size_t>(Reason::cost)] += calls;
    code = replay_through_mpiio(f);
  }
  c.engine_s += now() - t0;
  if (tracing() && rank == 0) {
    std::fprintf(stderr,
                 "strata preload [0]: flush of \"%s\": %llu calls, %zu runs here, up to byte %llu, engine "
                 "predicted %.6f s, MPI-IO %.6f s: %s, %.6f s (engine made %.3f, declared %.3f, planned %.3f, "
                 "written %.3f, closed %.3f s; gathering so far %.3f s, decoding views %.3f s)\n",
                 f.path.c_str(), static_cast<unsigned long long>(calls), runs, static_cast<unsigned long long>(all[0]),
                 last_engine_s, last_mpiio_s,
                 code != MPI_SUCCESS ? "failed"
                 : to_mpiio          ? "MPI-IO"
                                     : "engine",
                 now() - t0, steps[0] - t0, steps[1] - steps[0], steps[2] - steps[1], steps[3] - steps[2],
                 steps[4] - steps[3], c.gather_s, c.view_s);
  }
  f.pending.clear();
  return rc != MPI_SUCCESS ? rc : code;
}

}  // namespace

int flush_collective(File& f) { return flush_one(f); }

namespace {

// After each collective write call on an eligible file, gathered or written alone (the same
// count on every rank): the memory budget, agreed every kCheckEvery calls.
int after_collective_write(File& f, int rc) {
  f.dirty = true;
  if (++f.since_check >= kCheckEvery) {
    f.since_check = 0;
    uint64_t mine = f.pending.held(), most = 0;
    PMPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, f.group->comm);
    if (most >= budget()) {
      ++counters().budget_flushes;
      const int flushed = flush_collective(f);
      if (rc == MPI_SUCCESS) rc = flushed;
    }
  } else if (f.pending.held() >= 2 * budget()) {
    const int flushed = flush_alone(f);
    if (rc == MPI_SUCCESS) rc = flushed;
  }
  return rc;
}

// A collective write this rank cannot gather (f.alone): its independent write, after its own
// gathered runs of the file (so its writes keep their order); the other ranks gather theirs.
int write_alone(File& f, MPI_Offset explicit_offset, const void* buf, int count, MPI_Datatype type,
                MPI_Status* status) {
  int rc = flush_alone(f, true);
  int size = 0;
  PMPI_Type_size(type, &size);
  count_passthrough(static_cast<Reason>(f.alone), static_cast<uint64_t>(count > 0 ? count : 0) * size);
  const int written = explicit_offset < 0 ? real().File_write(f.fh, buf, count, type, status)
                                          : real().File_write_at(f.fh, explicit_offset, buf, count, type, status);
  if (rc == MPI_SUCCESS) rc = written;
  return after_collective_write(f, rc);
}

}  // namespace

int gather_write(File& f, MPI_Offset explicit_offset, const void* buf, int count, MPI_Datatype type,
                 MPI_Status* status) {
  if (f.alone >= 0) return write_alone(f, explicit_offset, buf, count, type, status);
  const double t0 = now();
  int rc = MPI_SUCCESS;
  auto mem = type_map(type);
  const uint64_t bytes = static_cast<uint64_t>(count > 0 ? count : 0) * mem->size;
  MPI_Offset position = explicit_offset;
  if (explicit_offset < 0) PMPI_File_get_position(f.fh, &position);
  std::vector<char> packed;
  const char* data = static_cast<const char*>(buf);
  if (bytes > 0 && !(mem->ok && mem->contiguous())) {
    packed.resize(bytes);
    if (mem->ok) {
      pack(*mem, buf, static_cast<uint64_t>(count), packed.data());
    } else {
      int at = 0;
      PMPI_Pack(buf, count, type, packed.data(), static_cast<int>(bytes), &at, MPI_COMM_SELF);
    }
    data = packed.data();
  } else if (bytes > 0) {
    data += mem->lb;
  }
  std::vector<FileRun> runs;
  f.view.file_runs(static_cast<uint64_t>(position) * f.view.etype_size, bytes, runs);
  // This write wins over what other handles on the file gathered for the same bytes: those
  // runs go first, written by this rank alone (PnetCDF's two handles never overlap so).
  for (auto& o : state().files) {
    if (o.get() == &f || !same_file(*o, f) || o->pending.empty()) continue;
    bool touches = false;
    for (const FileRun& r : runs) touches = touches || o->pending.overlaps(r.offset, r.length);
    if (touches && rc == MPI_SUCCESS) rc = flush_alone(*o, false);
  }
  uint64_t at = 0;
  for (const FileRun& r : runs) {
    f.pending.insert(r.offset, r.length, data + at);
    at += r.length;
  }
  ++f.pending_calls;
  counters().gather_s += now() - t0;
  if (status != MPI_STATUS_IGNORE) {
    // In bytes: MPI_Get_elements_x and MPI_Get_count then derive the caller's counts. With the
    // caller's derived type, MPICH 4.0 reads the count as instances, Open MPI as basic elements.
    PMPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(bytes));
    PMPI_Status_set_cancelled(status, 0);
  }
  if (explicit_offset < 0) {
    PMPI_File_seek(f.fh, position + static_cast<MPI_Offset>(bytes / f.view.etype_size), MPI_SEEK_SET);
  }
  return after_collective_write(f, rc);
}

int closing(File& f) {
  const int rc = flush_collective(f);
  if (f.fd >= 0) ::close(f.fd);
  auto& s = state();
  s.by_handle.erase(f.fh);
  for (auto it = s.files.begin(); it != s.files.end(); ++it) {
    if (it->get() == &f) {
      s.files.erase(it);
      break;
    }
  }
  return rc;
}

void finalize() {
  auto& s = state();
  while (!s.files.empty()) {
    File& f = *s.files.front();
    const int rc = flush_collective(f);
    if (rc != MPI_SUCCESS) ++counters().errors;
    if (f.fd >= 0) ::close(f.fd);
    s.by_handle.erase(f.fh);
    s.files.erase(s.files.begin());
  }
  for (auto& g : s.groups) {
    try {
      g->engine.reset();
    } catch (...) {}
    PMPI_Comm_free(&g->comm);
  }
  s.groups.clear();
  if (const char* path = std::getenv("STRATA_PRELOAD_REPORT"); path != nullptr && *path != '\0') write_report(path);
}

}  // namespace strata::preload
