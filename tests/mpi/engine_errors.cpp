// Bad declarations through the engine API: each must fail on every rank with the same
// message (no hang, no rank returning success) and leave the output a good phase wrote before
// at the same path untouched (its bytes, its index and their modification times); the next
// phase must work.
// usage: mpiexec -n K engine_errors DIR     (K >= 2)
#include <mpi.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "strata/strata.h"
#include "strata/strata.hpp"

using namespace strata;

namespace {

int rank = 0, size = 1;

// The previous output: a file's bytes and modification time (rank 0), to compare after each case.
struct Snapshot {
  std::string bytes;
  long long mtime_ns = -1;
  bool operator==(const Snapshot&) const = default;
};
Snapshot snapshot(const std::string& file) {
  Snapshot s;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return s;
  s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  std::ifstream in(file, std::ios::binary);
  s.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return s;
}
std::vector<std::string> previous_files;  // the previous output and its index
std::vector<Snapshot> previous;

// Runs a case; checks it failed everywhere with `fragment` in one common message.
bool expect_failure(const std::string& name, const std::string& fragment, const std::function<void()>& body) {
  std::string message;
  int status = 0;
  try {
    body();
  } catch (const Error& e) {
    message = e.what();
    status = e.exit_status();
  }
  int mine[2] = {status, static_cast<int>(message.size())}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bool untouched = true;
  for (size_t i = 0; i < previous_files.size() && rank == 0; ++i)
    untouched &= snapshot(previous_files[i]) == previous[i];
  if (!untouched) message += " [the previous output was changed]";
  bool ok = status != 0 && lo[0] == hi[0] && lo[1] == hi[1] && message.find(fragment) != std::string::npos && untouched;
  int all_ok = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&all_ok, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s %s: %s\n", every ? "ok  " : "FAIL", name.c_str(), message.c_str());
  if (!ok)
    std::fprintf(stderr, "rank %d: case %s: status %d, message \"%s\"\n", rank, name.c_str(), status, message.c_str());
  return every == 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string dir = argc > 1 ? argv[1] : "/tmp";
  const std::string path = dir + "/engine_errors.dat";
  bool ok = true;
  {
    Engine engine(MPI_COMM_WORLD);
    std::vector<char> data(8192, 'x');
    {  // the previous output every failing case must leave alone
      std::vector<char> good(100, static_cast<char>('a' + rank % 26));
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 1, {static_cast<uint64_t>(size) * 100}, 0);
      p.add_extent(v, static_cast<uint64_t>(rank) * 100, 100, good.data());
      p.plan();
      p.write();
      p.close();
      previous_files = {path, index_path(path)};
      for (const auto& f : previous_files) previous.push_back(snapshot(f));
      if (rank == 0 && (previous[0].bytes.size() != static_cast<size_t>(size) * 100 || previous[1].bytes.empty())) {
        std::fprintf(stderr, "the good phase wrote %zu bytes and a %zu-byte index\n", previous[0].bytes.size(),
                     previous[1].bytes.size());
        ok = false;
      }
    }

    ok &= expect_failure("overlap between ranks", "overlap rank", [&] {
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 1, {100000}, 0);
      p.add_extent(v, static_cast<uint64_t>(rank) * 1000, 1500, data.data());  // each overlaps the next rank
      p.plan();
      p.write();
      p.close();
    });
    ok &= expect_failure("variable defined differently", "defined differently", [&] {
      Phase p(engine, path, PhaseMode::write);
      p.define_variable("a", rank == size - 1 ? 8 : 4, {1000}, 0);
      p.plan();
    });
    ok &= expect_failure("different variable counts", "different numbers of variables", [&] {
      Phase p(engine, path, PhaseMode::write);
      p.define_variable("a", 4, {1000}, 0);
      if (rank == 0) p.define_variable("b", 4, {1000}, 4000);
      p.plan();
    });
    ok &= expect_failure("buffer below 4 KiB", "below the 4 KiB minimum", [&] {
      Phase p(engine, path, PhaseMode::write, {{"cb_buffer_size", "1024"}});
      p.define_variable("a", 1, {10}, 0);
      p.plan();
    });
    ok &= expect_failure("N_buff < 1", "strata_buffers", [&] {
      Phase p(engine, path, PhaseMode::write, {{"strata_buffers", "0"}});
      p.define_variable("a", 1, {10}, 0);
      p.plan();
    });
    ok &= expect_failure("bad declaration on one rank only", "outside the variable", [&] {
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 1, {100}, 0);
      if (rank == 1) p.add_extent(v, 90, 20, data.data());
      p.plan();
    });
    ok &= expect_failure("unwritable target", "cannot open", [&] {
      Phase p(engine, "/proc/strata-cannot-create/x", PhaseMode::write);
      int v = p.define_variable("a", 1, {100}, 0);
      if (rank == 0) p.add_extent(v, 0, 100, data.data());
      p.plan();
      p.write();
      p.close();
    });
    ok &= expect_failure("read of a missing file", "cannot open", [&] {
      Phase p(engine, dir + "/engine_errors.missing", PhaseMode::read);
      int v = p.define_variable("a", 1, {100}, 0);
      if (rank == 0) p.add_extent(v, 0, 100, data.data());
      p.plan();
      p.read();
      p.close();
    });
    std::vector<char> big(8 << 20, 'b');
    ok &= expect_failure("overlapping direct runs", "overlap rank", [&] {
      Phase p(engine, path, PhaseMode::write, {{"striping_unit", "4096"}, {"strata_direct_threshold", "4096"}});
      int v = p.define_variable("a", 1, {16 << 20}, 0);
      p.add_extent(v, 0, 8 << 20, big.data());  // every rank the same large aligned run
      p.plan();
      p.write();
      p.close();
    });
    ok &= expect_failure("direct run over another rank's small bytes", "overlap rank", [&] {
      Phase p(engine, path, PhaseMode::write, {{"striping_unit", "4096"}, {"strata_direct_threshold", "4096"}});
      int v = p.define_variable("a", 1, {16 << 20}, 0);
      if (rank == 0) p.add_extent(v, 0, 8 << 20, big.data());
      if (rank == 1) p.add_extent(v, (4 << 20) + 100, 100, big.data());
      p.plan();
      p.write();
      p.close();
    });
    ok &= expect_failure("write after a failed plan", "plan failed", [&] {
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 1, {100000}, 0);
      p.add_extent(v, static_cast<uint64_t>(rank) * 1000, 1500, data.data());
      try {
        p.plan();
      } catch (const Error&) {}
      p.write();  // must not quietly write nothing
    });
    ok &= expect_failure("hints that differ between ranks", "different engine hints", [&] {
      Phase p(engine, path, PhaseMode::write, {{"strata_buffers", rank == 0 ? "2" : "3"}});
      p.define_variable("a", 1, {10}, 0);
      p.plan();
    });
    ok &= expect_failure("a full device: the write's error is agreed by close", "No space left", [&] {
      Phase p(engine, "/dev/full", PhaseMode::write);  // every write returns ENOSPC
      int v = p.define_variable("a", 1, {static_cast<uint64_t>(size) * 100}, 0);
      p.add_extent(v, static_cast<uint64_t>(rank) * 100, 100, data.data());
      p.plan();
      p.write();
      p.close();
    });
    ok &= expect_failure("variable defined twice", "is defined twice", [&] {
      Phase p(engine, path, PhaseMode::write);
      p.define_variable("a", 4, {1000}, 0);
      p.define_variable("a", 4, {1000}, 4000);
      p.plan();
    });
    ok &= expect_failure("element size 0", "element size 0", [&] {
      Phase p(engine, path, PhaseMode::write);
      p.define_variable("a", 0, {1000}, 0);
      p.plan();
    });
    ok &= expect_failure("subarray past a dimension on the last rank", "reaches past dimension", [&] {
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 8, {10, 10}, 0);
      std::vector<uint64_t> start = {static_cast<uint64_t>(rank), 0}, count = {1, rank == size - 1 ? 11u : 10u};
      p.add_subarray(v, start, count, data.data());
      p.plan();
    });
    ok &= expect_failure("extent of an undefined variable", "is not defined", [&] {
      Phase p(engine, path, PhaseMode::write);
      p.define_variable("a", 1, {100}, 0);
      p.add_extent(7, 0, 10, data.data());
      p.plan();
    });
    ok &= expect_failure("declared like a variable whose runs came in two calls", "not declared by one call", [&] {
      Phase p(engine, path, PhaseMode::write);
      int a = p.define_variable("a", 1, {100}, 0), b = p.define_variable("b", 1, {100}, 100);
      const uint64_t at = static_cast<uint64_t>(rank) * 10;
      p.add_extent(a, at, 2, data.data());
      p.add_extent(b, 100 + at, 2, data.data());
      p.add_extent(a, at + 4, 2, data.data());  // a's runs now lie apart
      int c = p.define_variable("c", 1, {100}, 200);
      p.add_extents_like(c, a, 0);
      p.plan();
    });
    ok &= expect_failure("declared like a larger variable, past its bytes", "fall outside the variable", [&] {
      Phase p(engine, path, PhaseMode::write);
      int a = p.define_variable("a", 1, {100}, 0), b = p.define_variable("b", 1, {10}, 100);
      const uint64_t n = 2, at = 50 + static_cast<uint64_t>(rank) * 2;
      p.add_extents(a, 1, &at, &n, data.data());
      p.add_extents_like(b, a, 0);
      p.plan();
    });
    // After all that, a good phase still works on the same engine.
    ok &= [&] {
      Phase p(engine, path, PhaseMode::write);
      int v = p.define_variable("a", 1, {static_cast<uint64_t>(size) * 100}, 0);
      p.add_extent(v, static_cast<uint64_t>(rank) * 100, 100, data.data());
      p.plan();
      p.write();
      p.close();
      return true;
    }();
  }
  // The C API reports the same way.
  strata_engine* engine = nullptr;
  strata_phase* phase = nullptr;
  int status = strata_engine_create(MPI_COMM_WORLD, &engine);
  status |= strata_phase_open(engine, path.c_str(), STRATA_WRITE, "cb_buffer_size=100", &phase);
  uint64_t dims[1] = {10};
  int var = -1;
  status |= strata_define_variable(phase, "a", 1, 1, dims, 0, &var);
  const int plan_status = strata_plan(phase);
  const std::string c_message = strata_last_error();
  const bool c_ok = status == 0 && plan_status == 2 && c_message.find("4 KiB") != std::string::npos;
  strata_phase_close(phase, nullptr);
  strata_engine_free(engine);
  if (rank == 0) std::printf("%s C API reports a bad hint: %s\n", c_ok ? "ok  " : "FAIL", c_message.c_str());
  ok &= c_ok;
  // From a Fortran communicator handle (the Fortran module's way in): a phase through it writes
  // every rank's bytes; a handle that names no communicator is a usage error.
  strata_engine* f_engine = nullptr;
  strata_phase* f_phase = nullptr;
  int f_status = strata_engine_create_f(MPI_Comm_c2f(MPI_COMM_WORLD), &f_engine);
  f_status |= strata_phase_open(f_engine, path.c_str(), STRATA_WRITE, nullptr, &f_phase);
  uint64_t f_dims[1] = {static_cast<uint64_t>(size) * 4};
  const char f_bytes[4] = {'f', 'o', 'r', static_cast<char>('0' + rank % 10)};
  f_status |= strata_define_variable(f_phase, "f", 1, 1, f_dims, 0, &var);
  f_status |= strata_add_extent(f_phase, var, static_cast<uint64_t>(rank) * 4, 4, const_cast<char*>(f_bytes));
  f_status |= strata_plan(f_phase);
  f_status |= strata_write(f_phase);
  f_status |= strata_phase_close(f_phase, nullptr);
  f_status |= strata_engine_free(f_engine);
  const Snapshot written = snapshot(path);
  const bool f_wrote = written.bytes.size() == static_cast<size_t>(size) * 4 &&
                       std::equal(f_bytes, f_bytes + 4, written.bytes.begin() + rank * 4);
  strata_engine* no_engine = nullptr;
  const int bad_handle = strata_engine_create_f(-1, &no_engine);
  const bool f_ok = f_status == 0 && f_wrote && bad_handle == 2 &&
                    std::string(strata_last_error()).find("not a communicator") != std::string::npos;
  if (rank == 0) std::printf("%s C API from a Fortran handle: writes, and rejects handle -1\n", f_ok ? "ok  " : "FAIL");
  ok &= f_ok;
  // A subarray with as many entries as its variable's dimensions is written; with fewer (on the
  // last rank only), or a problem the caller records with strata_fail, plan fails on every rank.
  auto subarray_plan = [&](int entries, const char* failure, std::string* message) {
    strata_engine* e = nullptr;
    strata_phase* ph = nullptr;
    int s = strata_engine_create(MPI_COMM_WORLD, &e);
    s |= strata_phase_open(e, path.c_str(), STRATA_WRITE, nullptr, &ph);
    uint64_t dims2[2] = {static_cast<uint64_t>(size), 4}, start2[2] = {static_cast<uint64_t>(rank), 0},
             count2[2] = {1, 4};
    int v = -1;
    s |= strata_define_variable(ph, "s", 1, 2, dims2, 0, &v);
    s |= strata_add_subarray_nd(ph, v, rank == size - 1 ? entries : 2, start2, count2, const_cast<char*>(f_bytes), 0);
    if (failure != nullptr && rank == 0) s |= strata_fail(ph, failure);
    const int planned = strata_plan(ph);
    *message = strata_last_error();
    if (planned == 0) s |= strata_write(ph);
    s |= strata_phase_close(ph, nullptr) != 0 && planned == 0 ? 1 : 0;
    s |= strata_engine_free(e);
    return s != 0 ? -1 : planned;
  };
  std::string nd_message, fail_message, good_message;
  const bool nd_ok = subarray_plan(2, nullptr, &good_message) == 0 && subarray_plan(1, nullptr, &nd_message) == 2 &&
                     nd_message.find("subarray has 1 dimensions, the variable 2") != std::string::npos &&
                     subarray_plan(2, "the caller's own check", &fail_message) == 2 &&
                     fail_message.find("the caller's own check") != std::string::npos;
  if (rank == 0)
    std::printf("%s C API: strata_add_subarray_nd checks its entries, strata_fail fails the plan: %s | %s\n",
                nd_ok ? "ok  " : "FAIL", nd_message.c_str(), fail_message.c_str());
  ok &= nd_ok;
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::remove(path.c_str());
  MPI_Finalize();
  return all == 1 ? 0 : 1;
}
