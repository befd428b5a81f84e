// "Plan once, write many" (include/strata/strata.hpp): the interface the drop-in layer needs.
//  1. strata_target=in-place: a file the caller made, with sentinel bytes around and between
//     the declared runs (runs of every rank interleaved, adjacent or apart, small and large),
//     keeps every byte no rank declared, grows only to the last declared byte, and no other
//     file appears beside it — under the aggregate, direct and hybrid strategies.
//  2. Plan reuse: a phase declaring what an earlier one declared reuses its plan (every rank
//     says plan_reused) and writes the same bytes from other memory buffers; a declaration
//     changed on one rank only, or a changed hint, is planned afresh on every rank.
//  3. Phase::repeat: the next phase of a closed one, declaring nothing, writes what its memory
//     holds now, as a fresh plan would.
//  4. A write of an earlier layout into another file, or moved by the same number of bytes on
//     every rank (the next time step), reuses the plan moved (plan_shift) and writes what a
//     fresh plan writes; ranks moved by different amounts, or a move that would unalign a
//     striped plan, are planned afresh.
// usage: mpiexec -n K engine_plan_once DIR
#include <mpi.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "engine/plan_cache.hpp"
#include "strata/strata.hpp"

using namespace strata;

namespace {

int rank = 0, size = 1;
bool all_ok = true;

void check(bool ok, const std::string& what) {
  int mine = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s %s\n", every ? "ok  " : "FAIL", what.c_str());
  if (!ok) std::fprintf(stderr, "rank %d: %s failed\n", rank, what.c_str());
  all_ok = all_ok && every == 1;
}

struct Run {
  uint64_t offset, length;
  int owner;
};

// Runs of every rank over [0, end): short and long, adjacent (no gap) or apart, owners drawn at
// random; one run of `big` bytes in the middle (a direct candidate).
std::vector<Run> draw_runs(uint64_t seed, uint64_t count, uint64_t big) {
  SeededRandom r(seed);
  std::vector<Run> runs;
  uint64_t at = 100 + r.below(4000);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t length = i == count / 2 ? big : 1 + r.below(i % 7 == 0 ? 20000 : 600);
    runs.push_back({at, length, static_cast<int>(r.below(static_cast<uint64_t>(size)))});
    at += length + (r.below(3) == 0 ? 0 : 1 + r.below(300));
  }
  return runs;
}

unsigned char value_at(uint64_t offset, uint64_t salt) {
  return static_cast<unsigned char>(splitmix64(offset + salt) | 3);
}
// Neither zero (a filled hole, a truncated tail) nor any data byte (value_at sets bits 0 and 1).
constexpr unsigned char kSentinel = 0xA5;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> folder(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// This rank's runs declared into one phase (when given): half by add_extents (packed back to back in one
// buffer), half one by one; the memory filled with the bytes expected at each offset.
struct Declared {
  std::vector<unsigned char> packed, single;
};
Declared declare(Phase* p, int v, const std::vector<Run>& runs, uint64_t salt) {
  Declared d;
  std::vector<uint64_t> offsets, lengths;
  uint64_t packed = 0, single = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].owner != rank) continue;
    (i % 2 == 0 ? packed : single) += runs[i].length;
  }
  d.packed.resize(packed);
  d.single.resize(single);
  uint64_t pa = 0, sa = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    if (r.owner != rank) continue;
    unsigned char* mem = i % 2 == 0 ? d.packed.data() + pa : d.single.data() + sa;
    for (uint64_t k = 0; k < r.length; ++k) mem[k] = value_at(r.offset + k, salt);
    if (i % 2 == 0) {
      offsets.push_back(r.offset);
      lengths.push_back(r.length);
      pa += r.length;
    } else {
      if (p != nullptr) p->add_extent(v, r.offset, r.length, mem);
      sa += r.length;
    }
  }
  if (p != nullptr) p->add_extents(v, offsets.size(), offsets.data(), lengths.data(), d.packed.data());
  return d;
}

// 1. strata_target=in-place.
void in_place(const std::string& dir, const std::string& strategy, bool grows) {
  const std::string name = "in_place." + strategy + (grows ? ".grows" : ".longer");
  const std::string sub = dir + "/" + name;
  const std::string path = sub + "/data";
  const std::vector<Run> runs = draw_runs(7 + (grows ? 1 : 0), 400, uint64_t{3} << 20);
  const uint64_t last = runs.back().offset + runs.back().length;
  const uint64_t initial = grows ? last - 777 : last + 5000;  // the last run reaches past the file, or not
  if (rank == 0) {
    ::mkdir(sub.c_str(), 0755);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const std::string sentinel(initial, static_cast<char>(kSentinel));
    out.write(sentinel.data(), static_cast<std::streamsize>(sentinel.size()));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::vector<std::string> before = rank == 0 ? folder(sub) : std::vector<std::string>{};
  std::vector<Phase::Hint> hints = {{"strata_target", "in-place"}, {"cb_buffer_size", "65536"}};
  if (strategy == "hybrid") {
    hints.push_back({"striping_unit", "4096"});
    hints.push_back({"strata_direct_threshold", "65536"});
  } else {
    hints.push_back({"strata_strategy", strategy});
  }
  std::string error;
  try {
    Engine engine(MPI_COMM_WORLD);
    Phase p(engine, path, PhaseMode::write, hints);
    const int v = p.define_variable("bytes", 1, {last + 100000}, 0);  // the variable ends past the file
    Declared keep = declare(&p, v, runs, 11);
    p.plan();
    p.write();
    p.close();
  } catch (const Error& e) {
    error = e.what();
  }
  bool ok = error.empty();
  if (rank == 0 && ok) {
    const std::string got = read_all(path);
    const uint64_t want_size = std::max(initial, last);
    std::string expect(want_size, static_cast<char>(kSentinel));
    for (const Run& r : runs) {
      for (uint64_t k = 0; k < r.length; ++k) expect[r.offset + k] = static_cast<char>(value_at(r.offset + k, 11));
    }
    if (got.size() != want_size) {
      error = "size " + std::to_string(got.size()) + ", expected " + std::to_string(want_size);
    } else if (got != expect) {
      size_t i = 0;
      while (got[i] == expect[i]) ++i;
      error = "byte " + std::to_string(i) + " differs";
    } else if (folder(sub) != before) {
      error = "files appeared or went beside the output";
    }
    ok = error.empty();
  }
  if (!ok) std::fprintf(stderr, "rank %d: %s: %s\n", rank, name.c_str(), error.c_str());
  check(ok, name);
}

// 2. Plan reuse. One phase's declarations: `runs` of variable "bytes" (in a shuffled order,
// so the plan's sort order is exercised) and a block of rows of a 2-D variable "grid" from an
// array of structures (memory stride 16 for 8-byte elements); memory freshly allocated.
struct Buffers {
  Declared bytes;
  std::vector<double> grid;  // two doubles per element: the element, then padding
};
constexpr uint64_t kRows = 8, kCols = 50;
double grid_value(uint64_t row, uint64_t col, uint64_t salt) {
  return static_cast<double>(row * 1000 + col) + salt * 0.25;
}

PhaseStats write_phase(Engine& engine, const std::string& path, const std::vector<Run>& runs, uint64_t salt,
                       const std::vector<Phase::Hint>& hints, PhaseMode mode = PhaseMode::write,
                       bool* read_ok = nullptr) {
  Buffers b;
  Phase p(engine, path, mode, hints);
  uint64_t last = 0;
  for (const Run& r : runs) last = std::max(last, r.offset + r.length);
  const int v = p.define_variable("bytes", 1, {last + 1000}, 0);
  const int g = p.define_variable("grid", 8, {kRows * static_cast<uint64_t>(size), kCols}, last + 1000);
  b.bytes = declare(&p, v, runs, salt);
  b.grid.assign(kRows * kCols * 2, -1.0);
  for (uint64_t r = 0; r < kRows; ++r) {
    for (uint64_t c = 0; c < kCols; ++c) {
      b.grid[(r * kCols + c) * 2] =
          mode == PhaseMode::write ? grid_value(static_cast<uint64_t>(rank) * kRows + r, c, salt) : 0;
    }
  }
  p.add_subarray(g, {static_cast<uint64_t>(rank) * kRows, 0}, {kRows, kCols}, b.grid.data(), 16);
  if (mode == PhaseMode::read) {
    std::fill(b.bytes.packed.begin(), b.bytes.packed.end(), 0);
    std::fill(b.bytes.single.begin(), b.bytes.single.end(), 0);
  }
  p.plan();
  if (mode == PhaseMode::write) {
    p.write();
  } else {
    p.read();
  }
  PhaseStats max;
  PhaseStats mine = p.close(&max);
  if (read_ok != nullptr) {  // what was read is what `salt` wrote
    const Declared want = declare(nullptr, 0, runs, salt);
    bool ok = want.packed == b.bytes.packed && want.single == b.bytes.single;
    for (uint64_t r = 0; r < kRows; ++r) {
      for (uint64_t c = 0; c < kCols; ++c) {
        ok = ok && b.grid[(r * kCols + c) * 2] == grid_value(static_cast<uint64_t>(rank) * kRows + r, c, salt) &&
             b.grid[(r * kCols + c) * 2 + 1] == -1.0;
      }
    }
    *read_ok = ok;
  }
  return mine;
}

// Every rank's plan_reused, agreed: 1 all reused, 0 none, -1 mixed.
int reused_everywhere(const PhaseStats& s) {
  int mine = s.plan_reused ? 1 : 0, lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi ? lo : -1;
}

bool same_file(const std::string& a, const std::string& b) {
  int same = 0;
  if (rank == 0) {
    const std::string x = read_all(a), y = read_all(b);
    same = !x.empty() && x == y ? 1 : 0;
    if (!same)
      std::fprintf(stderr, "%s (%zu bytes) and %s (%zu bytes) differ\n", a.c_str(), x.size(), b.c_str(), y.size());
  }
  MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return same == 1;
}

void reuse(const std::string& dir, const std::string& strategy) {
  const std::string name = "reuse." + strategy;
  std::vector<Run> runs = draw_runs(31, 300, uint64_t{1} << 20);
  SeededRandom shuffle(5);
  shuffle.shuffle(runs);  // declared out of file order
  std::vector<Phase::Hint> hints = {{"cb_buffer_size", "65536"}};
  if (strategy != "auto") hints.push_back({"strata_strategy", strategy});
  const std::string reused = dir + "/" + name + ".reused", fresh = dir + "/" + name + ".fresh";
  Engine engine(MPI_COMM_WORLD);
  const PhaseStats first = write_phase(engine, reused, runs, 1, hints);
  check(reused_everywhere(first) == 0, name + ": the first phase plans");
  const PhaseStats second = write_phase(engine, reused, runs, 2, hints);  // other buffers, other values
  check(reused_everywhere(second) == 1, name + ": the same declarations reuse the plan on every rank");
  check(second.plan_signature == first.plan_signature, name + ": the reused plan is the first one");
  {
    Engine other(MPI_COMM_WORLD);
    write_phase(other, fresh, runs, 2, hints);
  }
  check(same_file(reused, fresh), name + ": a reused plan writes what a fresh plan writes");
  // One rank declares one run shorter: planned afresh on every rank, and written right.
  std::vector<Run> changed = runs;
  for (Run& r : changed) {
    if (r.owner == size - 1 && r.length > 1) {
      r.length -= 1;
      break;
    }
  }
  const PhaseStats third = write_phase(engine, reused, changed, 3, hints);
  check(reused_everywhere(third) == 0, name + ": a declaration changed on one rank is planned afresh on every rank");
  {
    Engine other(MPI_COMM_WORLD);
    write_phase(other, fresh, changed, 3, hints);
  }
  check(same_file(reused, fresh), name + ": ... and written as a fresh plan writes it");
  std::vector<Phase::Hint> other_hints = hints;
  other_hints.push_back({"strata_buffers", "3"});
  check(reused_everywhere(write_phase(engine, reused, runs, 4, other_hints)) == 0,
        name + ": a changed hint is planned afresh");
  // The first declarations again: their plan is still kept (the cache holds several).
  check(reused_everywhere(write_phase(engine, reused, runs, 5, hints)) == 1, name + ": an earlier plan is found again");
  {
    Engine other(MPI_COMM_WORLD);
    write_phase(other, fresh, runs, 5, hints);
  }
  check(same_file(reused, fresh), name + ": ... and writes what a fresh plan writes");
  // Reads: the second read of the same selection reuses the first read's plan.
  bool ok1 = false, ok2 = false;
  const PhaseStats r1 = write_phase(engine, reused, runs, 5, hints, PhaseMode::read, &ok1);
  const PhaseStats r2 = write_phase(engine, reused, runs, 5, hints, PhaseMode::read, &ok2);
  check(ok1 && ok2 && reused_everywhere(r1) == 0 && reused_everywhere(r2) == 1,
        name + ": a read reuses its plan and reads right");
  // A new write of the output changes its index: the next read plans afresh.
  write_phase(engine, reused, runs, 6, hints);
  bool ok3 = false;
  const PhaseStats r3 = write_phase(engine, reused, runs, 6, hints, PhaseMode::read, &ok3);
  check(ok3 && reused_everywhere(r3) == 0, name + ": a read after the output changed plans afresh");
}

constexpr uint64_t PlanCacheSize = engine::PlanCache::kMaxPlans;

// Phase::repeat: the next phase of a closed one declares nothing, finds the plan, and writes the
// bytes its memory holds now; a repeated phase refuses further declarations on every rank.
void repeat(const std::string& dir) {
  std::vector<Run> runs = draw_runs(37, 200, uint64_t{1} << 18);
  SeededRandom shuffle(9);
  shuffle.shuffle(runs);
  const std::vector<Phase::Hint> hints = {{"cb_buffer_size", "65536"}};
  const std::string path = dir + "/repeat.out", fresh = dir + "/repeat.fresh";
  Engine engine(MPI_COMM_WORLD);
  Buffers b;
  Phase p(engine, path, PhaseMode::write, hints);
  uint64_t last = 0;
  for (const Run& r : runs) last = std::max(last, r.offset + r.length);
  const int v = p.define_variable("bytes", 1, {last + 1000}, 0);
  const int g = p.define_variable("grid", 8, {kRows * static_cast<uint64_t>(size), kCols}, last + 1000);
  auto fill = [&](uint64_t salt) {  // new values into the same memory
    const Declared d = declare(nullptr, 0, runs, salt);
    std::copy(d.packed.begin(), d.packed.end(), b.bytes.packed.begin());
    std::copy(d.single.begin(), d.single.end(), b.bytes.single.begin());
    for (uint64_t r = 0; r < kRows; ++r) {
      for (uint64_t c = 0; c < kCols; ++c)
        b.grid[(r * kCols + c) * 2] = grid_value(static_cast<uint64_t>(rank) * kRows + r, c, salt);
    }
  };
  b.bytes = declare(&p, v, runs, 1);
  b.grid.assign(kRows * kCols * 2, -1.0);
  fill(1);
  p.add_subarray(g, {static_cast<uint64_t>(rank) * kRows, 0}, {kRows, kCols}, b.grid.data(), 16);
  p.write();
  p.close();
  for (uint64_t salt : {7, 8}) {
    // Before salt 8, other phases push the plan out of the engine's cache: planned afresh.
    if (salt == 8) {
      for (uint64_t seed = 100; seed < 100 + PlanCacheSize; ++seed) {
        write_phase(engine, dir + "/repeat.other", draw_runs(seed, 20, 100), 1, hints);
      }
    }
    fill(salt);
    Phase q = Phase::repeat(std::move(p));
    q.write();
    PhaseStats mine = q.close();
    check(reused_everywhere(mine) == (salt == 7 ? 1 : 0),
          "repeat: salt " + std::to_string(salt) + (salt == 7 ? " reuses the plan" : " plans afresh once evicted"));
    {
      Engine other(MPI_COMM_WORLD);
      write_phase(other, fresh, runs, salt, hints);
    }
    check(same_file(path, fresh), "repeat: salt " + std::to_string(salt) + " writes what a fresh plan writes");
    p = std::move(q);
  }
  Phase more = Phase::repeat(std::move(p));
  more.add_extent(0, 0, 1, b.grid.data());
  bool refused = false;
  try {
    more.plan();
  } catch (const Error& e) {
    refused = std::string(e.what()).find("declares nothing more") != std::string::npos;
  }
  check(refused, "repeat: a repeated phase refuses another declaration on every rank");
  bool consumed = false;
  try {
    Phase again = Phase::repeat(std::move(more));  // failed: nothing to repeat
  } catch (const Error& e) {
    consumed = std::string(e.what()).find("closed without error") != std::string::npos;
  }
  check(consumed, "repeat: a phase that failed cannot be repeated");
}

// Phase::repeat of a copied write (contiguous memory only, so its runs are copied from the
// caller's memory: found as they are copied at the first write, kept as a copy program by the
// first repeat, copied by it at the second), plain or staged: new values in the same memory each
// time, written byte for byte as a fresh engine writes them.
void repeat_copied(const std::string& dir, const char* stage) {
  std::vector<Run> runs = draw_runs(41, 300, uint64_t{1} << 18);
  SeededRandom shuffle(11);
  shuffle.shuffle(runs);
  const std::vector<Phase::Hint> hints = {
      {"cb_buffer_size", "65536"}, {"strata_strategy", "aggregate"}, {"strata_copy", "true"}, {"strata_stage", stage}};
  const std::string what = std::string("repeat, copied (strata_stage=") + stage + "): ";
  const std::string path = dir + "/repeat-copied.out", fresh = dir + "/repeat-copied.fresh";
  uint64_t last = 0;
  for (const Run& r : runs) last = std::max(last, r.offset + r.length);
  Engine engine(MPI_COMM_WORLD);
  Phase p(engine, path, PhaseMode::write, hints);
  Declared memory = declare(&p, p.define_variable("bytes", 1, {last + 1000}, 0), runs, 1);
  p.write();
  PhaseStats first = p.close();
  check(first.strategy.find(std::string(stage) == "true" ? "staged copied" : "copied") != std::string::npos,
        what + "the strategy is " + first.strategy);
  for (uint64_t salt : {5, 6}) {
    const Declared values = declare(nullptr, 0, runs, salt);  // new values into the same memory
    std::copy(values.packed.begin(), values.packed.end(), memory.packed.begin());
    std::copy(values.single.begin(), values.single.end(), memory.single.begin());
    Phase q = Phase::repeat(std::move(p));
    q.write();
    PhaseStats mine = q.close();
    check(reused_everywhere(mine) == 1, what + "salt " + std::to_string(salt) + " reuses the plan");
    {
      Engine other(MPI_COMM_WORLD);
      Phase f(other, fresh, PhaseMode::write, hints);
      const Declared d = declare(&f, f.define_variable("bytes", 1, {last + 1000}, 0), runs, salt);
      f.write();
      f.close();
    }
    check(same_file(path, fresh), what + "salt " + std::to_string(salt) + " writes what a fresh engine writes");
    p = std::move(q);
  }
}

// 4. Shifted reuse. In-place writes into one large variable (as the drop-in layer declares a
// program's MPI-IO file): `runs` moved by shift(owner) bytes.
std::vector<Run> moved_runs(const std::vector<Run>& runs, const std::vector<int64_t>& shift) {
  std::vector<Run> moved = runs;
  for (Run& r : moved) r.offset += static_cast<uint64_t>(shift[static_cast<size_t>(r.owner)]);
  return moved;
}

// `target`: "in-place" (the caller's file), "commit" (a committed output) or "subfiles" (one
// subfile per aggregator, committed).
std::vector<Phase::Hint> target_hints(const std::vector<Phase::Hint>& hints, const std::string& target) {
  std::vector<Phase::Hint> all = hints;
  if (target == "in-place") all.push_back({"strata_target", "in-place"});
  if (target == "subfiles") all.push_back({"strata_subfiling", "aggregator"});
  return all;
}

PhaseStats moved_phase(Engine& engine, const std::string& path, const std::vector<Run>& runs,
                       const std::vector<int64_t>& shift, uint64_t salt, const std::vector<Phase::Hint>& hints,
                       const std::string& target = "in-place") {
  if (rank == 0 && target == "in-place") std::fclose(std::fopen(path.c_str(), "wb"));  // the caller's file, empty
  MPI_Barrier(MPI_COMM_WORLD);
  Phase p(engine, path, PhaseMode::write, target_hints(hints, target));
  const int v = p.define_variable("file", 1, {uint64_t{1} << 40}, 0);
  const Declared d = declare(&p, v, moved_runs(runs, shift), salt);
  p.write();
  return p.close();
}

// A committed output read back by a fresh engine: every rank's moved runs hold what `salt` wrote.
bool moved_read_back(const std::string& path, const std::vector<Run>& runs, const std::vector<int64_t>& shift,
                     uint64_t salt, const std::vector<Phase::Hint>& hints, const std::string& target) {
  Engine engine(MPI_COMM_WORLD);
  const std::vector<Run> moved = moved_runs(runs, shift);
  Phase p(engine, path, PhaseMode::read, target_hints(hints, target));
  const int v = p.define_variable("file", 1, {uint64_t{1} << 40}, 0);
  Declared got = declare(&p, v, moved, salt);
  std::fill(got.packed.begin(), got.packed.end(), 0);
  std::fill(got.single.begin(), got.single.end(), 0);
  p.read();
  p.close();
  const Declared want = declare(nullptr, 0, moved, salt);
  return got.packed == want.packed && got.single == want.single;
}

int64_t shift_everywhere(const PhaseStats& s) {
  int64_t lo = 0, hi = 0;
  MPI_Allreduce(&s.plan_shift, &lo, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&s.plan_shift, &hi, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi ? lo : -1;
}

void shifted(const std::string& dir) {
  const std::vector<Phase::Hint> hints = {{"cb_buffer_size", "65536"}};
  const std::string fresh = dir + "/shifted.fresh";
  auto fresh_write = [&](const std::vector<Run>& runs, const std::vector<int64_t>& shift, uint64_t salt,
                         const std::vector<Phase::Hint>& h) {
    Engine other(MPI_COMM_WORLD);
    moved_phase(other, fresh, runs, shift, salt, h);
  };
  auto uniform = [](int64_t d) { return std::vector<int64_t>(static_cast<size_t>(size), d); };
  for (const char* strategy : {"aggregate", "direct", "auto"}) {
    const std::string name = std::string("shifted.") + strategy;
    std::vector<Phase::Hint> h = hints;
    if (std::string(strategy) != "auto") h.push_back({"strata_strategy", strategy});
    std::vector<Run> runs = draw_runs(43, 300, uint64_t{1} << 20);
    SeededRandom shuffle(11);
    shuffle.shuffle(runs);
    Engine engine(MPI_COMM_WORLD);
    const std::string a = dir + "/" + name + ".a", b = dir + "/" + name + ".b";
    check(reused_everywhere(moved_phase(engine, a, runs, uniform(0), 1, h)) == 0, name + ": the first write plans");
    // Another file, the same layout 12 345 bytes further on (no multiple of any block).
    const PhaseStats s2 = moved_phase(engine, b, runs, uniform(12345), 2, h);
    check(reused_everywhere(s2) == 1 && shift_everywhere(s2) == 12345,
          name + ": the layout moved by 12345 bytes into another file reuses the plan moved");
    fresh_write(runs, uniform(12345), 2, h);
    check(same_file(b, fresh), name + ": ... and writes what a fresh plan writes");
    // The same file again, moved back and then further.
    for (int64_t d : {int64_t{0}, int64_t{3} << 20}) {
      const PhaseStats s = moved_phase(engine, a, runs, uniform(d), 3, h);
      check(reused_everywhere(s) == 1 && shift_everywhere(s) == d,
            name + ": moved by " + std::to_string(d) + " bytes, reused");
      fresh_write(runs, uniform(d), 3, h);
      check(same_file(a, fresh), name + ": ... and written as a fresh plan writes it");
    }
  }
  // Committed outputs, one file or a subfile per aggregator: the plan moves, its files are
  // named for the new output, and a fresh engine reads the moved runs back.
  for (const char* target : {"commit", "subfiles"}) {
    const std::string name = std::string("shifted.") + target;
    std::vector<Run> runs = draw_runs(53, 200, uint64_t{1} << 19);
    Engine engine(MPI_COMM_WORLD);
    moved_phase(engine, dir + "/" + name + ".a", runs, uniform(0), 1, hints, target);
    const PhaseStats s = moved_phase(engine, dir + "/" + name + ".b", runs, uniform(777777), 2, hints, target);
    check(reused_everywhere(s) == 1 && shift_everywhere(s) == 777777,
          name + ": a committed write of the layout moved into another output reuses the plan moved");
    check(moved_read_back(dir + "/" + name + ".b", runs, uniform(777777), 2, hints, target),
          name + ": ... and a fresh engine reads every moved run back");
  }
  // Each rank's runs in a region of its own, rank 0 without any: rank 0 does not vote, and
  // the last rank moved one byte more than the others changes the layout: planned afresh.
  std::vector<Run> regions;
  for (int r = 1; r < size; ++r) {
    SeededRandom g(static_cast<uint64_t>(r));
    uint64_t at = static_cast<uint64_t>(r) << 20;
    for (int i = 0; i < 40; ++i) {
      const uint64_t length = 1 + g.below(3000);
      regions.push_back({at, length, r});
      at += length + g.below(200);
    }
  }
  if (size > 1) {
    Engine engine(MPI_COMM_WORLD);
    const std::string path = dir + "/shifted.regions";
    moved_phase(engine, path, regions, uniform(0), 1, hints);
    const PhaseStats same = moved_phase(engine, path, regions, uniform(5000), 2, hints);
    check(reused_everywhere(same) == 1 && shift_everywhere(same) == 5000,
          "shifted: a rank without runs does not stop a moved plan's reuse");
  }
  if (size > 2) {  // (with two ranks, the one rank with runs moving is the whole layout moving)
    Engine engine(MPI_COMM_WORLD);
    const std::string path = dir + "/shifted.regions";
    moved_phase(engine, path, regions, uniform(0), 1, hints);
    std::vector<int64_t> apart = uniform(5000);
    apart.back() = 5001;
    const PhaseStats differ = moved_phase(engine, path, regions, apart, 3, hints);
    check(reused_everywhere(differ) == 0, "shifted: ranks moved by different amounts plan afresh");
    fresh_write(regions, apart, 3, hints);
    check(same_file(path, fresh), "shifted: ... and write what a fresh plan writes");
  }
  // Aligned plans (hint striping_unit, or a striped file system) move only by whole units.
  {
    std::vector<Phase::Hint> h = hints;
    h.push_back({"striping_unit", "65536"});
    std::vector<Run> runs = draw_runs(47, 200, uint64_t{1} << 18);
    Engine engine(MPI_COMM_WORLD);
    const std::string path = dir + "/shifted.aligned";
    moved_phase(engine, path, runs, uniform(0), 1, h);
    check(reused_everywhere(moved_phase(engine, path, runs, uniform(12345), 2, h)) == 0,
          "shifted: an aligned plan is not moved by a part of its unit");
    const PhaseStats whole = moved_phase(engine, path, runs, uniform(131072), 3, h);
    check(reused_everywhere(whole) == 1 && shift_everywhere(whole) == 131072,
          "shifted: an aligned plan is moved by whole units");
    fresh_write(runs, uniform(131072), 3, h);
    check(same_file(path, fresh), "shifted: ... and written as a fresh plan writes it");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  for (const char* strategy : {"aggregate", "direct", "hybrid"}) {
    for (bool grows : {true, false}) in_place(dir, strategy, grows);
  }
  for (const char* strategy : {"aggregate", "direct", "auto"}) reuse(dir, strategy);
  repeat(dir);
  for (const char* stage : {"false", "true"}) repeat_copied(dir, stage);
  shifted(dir);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
