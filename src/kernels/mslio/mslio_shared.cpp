// MSLIO's single-file versions: the paper's MPI-IO shared file (each original file a contiguous
// chunk, independent writes from the threads) and the proposed next step, the same file through
// Strata's engine with every chunk aligned to the stripe size.
#include <algorithm>
#include <vector>

#include "common/error.hpp"
#include "fs/mpiio_file.hpp"
#include "kernels/mslio/mslio_io.hpp"
#include "kernels/mslio/mslio_text.hpp"
#include "kernels/mslio/mslio_volume.hpp"

namespace strata::mslio {

namespace {

// Threads may call MPI only one at a time unless the library gives MPI_THREAD_MULTIPLE.
struct ThreadLevel {
  int threads = 1;
  bool serialize = true;
};
ThreadLevel thread_level(const Setup& s) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  ThreadLevel t;
  t.threads = provided >= MPI_THREAD_SERIALIZED ? s.threads : 1;
  t.serialize = provided < MPI_THREAD_MULTIPLE;
  return t;
}

int mpi_call(bool serialize, int (*call)(MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*), MPI_File fh,
             MPI_Offset offset, void* buf, int count) {
  int rc = MPI_SUCCESS;
  if (serialize) {
#pragma omp critical(mslio_mpi)
    rc = call(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE);
  } else {
    rc = call(fh, offset, buf, count, MPI_BYTE, MPI_STATUS_IGNORE);
  }
  return rc;
}

int write_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype type, MPI_Status* status) {
  return MPI_File_write_at(fh, offset, buf, count, type, status);
}

std::vector<Phase::Hint> engine_hints(const Setup& s, const Hints& hints, bool fsync) {
  std::vector<Phase::Hint> out(hints.begin(), hints.end());
  const bool has_unit =
      std::any_of(hints.begin(), hints.end(), [](const auto& h) { return h.first == "striping_unit"; });
  if (!has_unit) out.emplace_back("striping_unit", std::to_string(s.align));
  if (fsync) out.emplace_back("strata_fsync", "true");
  return out;
}

nlohmann::json stats_json(const PhaseStats& s) {
  return {{"plan_s", s.plan_s},
          {"aggregation_s", s.aggregation_s},
          {"io_s", s.io_s},
          {"wait_s", s.wait_s},
          {"close_s", s.close_s},
          {"rounds", s.rounds},
          {"aggregators", s.aggregators},
          {"buffer_bytes", s.buffer_bytes},
          {"buffers", s.buffers},
          {"fs_requests", s.fs_requests},
          {"bytes", s.bytes},
          {"direct_bytes", s.direct_bytes}};
}

// Checks every local problem's text held in `text` (the rank's chunks one after another).
void check_chunks(const Setup& s, const std::vector<char>& text, const double* memory, CallTotals& total,
                  std::optional<std::string>& mismatch) {
  FirstError differs;
  const double t0 = now_s();
#pragma omp parallel for schedule(static) num_threads(s.threads)
  for (uint64_t k = s.first; k < s.first + s.count; ++k) {
    auto bad = check_file(text.data() + (k - s.first) * s.file_bytes(), s.file_bytes(), problem_memory(s, memory, k),
                          s.points, s.dims, k);
    if (bad) differs.set(*bad);
  }
  total.format_s += now_s() - t0;
  if (differs.any()) mismatch = "\"" + s.shared_path() + "\": " + differs.message();
}

// Closes `file` on every rank whatever happened, so nobody waits alone in the collective
// close; timed into `total`, a failure joins `error`.
void close_timed(MpiioFile& file, bool fsync, FirstError& error, CallTotals& total) {
  const double t = now_s();
  try {
    file.close(fsync);
  } catch (const Error& e) {
    error.set(e.what());
  }
  total.close_s = now_s() - t;
  total.closes = 1;
}

}  // namespace

CallTotals write_shared(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints,
                        const std::string& io_component, bool fsync, Hints& in_effect) {
  CallTotals total;
  MpiioFile file;
  const double t0 = now_s();
  file.open(comm, s.shared_path(), Access::write, hints_for_open(hints, io_component), io_component);
  total.open_s = now_s() - t0;
  total.opens = 1;
  in_effect = file.hints_in_effect();
  const ThreadLevel level = thread_level(s);
  const uint64_t capacity = std::max<uint64_t>(s.buffer_bytes, kValueBytes);
  FirstError error;
#pragma omp parallel num_threads(level.threads)
  {
    CallTotals t;
    std::vector<char> buffer(capacity);
#pragma omp for schedule(static)
    for (uint64_t k = s.first; k < s.first + s.count; ++k) {
      if (error.any()) continue;
      const double t1 = now_s();
      const double* mem = problem_memory(s, memory, k);
      MPI_Offset offset = static_cast<MPI_Offset>(k * s.chunk_stride());
      uint64_t used = 0;
      auto flush = [&] {
        if (used == 0) return true;
        const int rc = mpi_call(level.serialize, write_at, file.get(), offset, buffer.data(), static_cast<int>(used));
        ++t.writes;
        if (rc != MPI_SUCCESS) {
          error.set("MPI_File_write_at of \"" + s.shared_path() + "\" failed (MPI error " + std::to_string(rc) + ")");
          return false;
        }
        offset += static_cast<MPI_Offset>(used);
        used = 0;
        return true;
      };
      bool ok = true;
      for (unsigned d = 0; d < s.dims && ok; ++d) {
        for (uint64_t p = 0; p < s.points && ok; ++p) {
          if (used + kValueBytes > capacity) ok = flush();
          if (ok && !format_value(mem[p * s.dims + d], buffer.data() + used)) {
            error.set("a solution value does not fit 14 characters");
            ok = false;
          }
          used += kValueBytes;
        }
      }
      if (ok) flush();
      t.write_s += now_s() - t1;
      t.bytes += s.file_bytes();
    }
#pragma omp critical(mslio_totals)
    total += t;
  }
  close_timed(file, fsync, error, total);
  error.raise();
  return total;
}

CallTotals read_shared(const Setup& s, const double* memory, MPI_Comm comm, const Hints& hints,
                       const std::string& io_component, bool compare, std::optional<std::string>& mismatch) {
  CallTotals total;
  MpiioFile file;
  const double t0 = now_s();
  file.open(comm, s.shared_path(), Access::read, hints_for_open(hints, io_component), io_component);
  total.open_s = now_s() - t0;
  total.opens = 1;
  const ThreadLevel level = thread_level(s);
  std::vector<char> text(s.count * s.file_bytes());
  FirstError error;
#pragma omp parallel num_threads(level.threads)
  {
    CallTotals t;
#pragma omp for schedule(static)
    for (uint64_t k = s.first; k < s.first + s.count; ++k) {
      const double t1 = now_s();
      MPI_Status status;
      int rc = MPI_SUCCESS, got = 0;
      char* at = text.data() + (k - s.first) * s.file_bytes();
      if (level.serialize) {
#pragma omp critical(mslio_mpi)
        {
          rc = MPI_File_read_at(file.get(), static_cast<MPI_Offset>(k * s.chunk_stride()), at,
                                static_cast<int>(s.file_bytes()), MPI_BYTE, &status);
          if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &got);
        }
      } else {
        rc = MPI_File_read_at(file.get(), static_cast<MPI_Offset>(k * s.chunk_stride()), at,
                              static_cast<int>(s.file_bytes()), MPI_BYTE, &status);
        if (rc == MPI_SUCCESS) MPI_Get_count(&status, MPI_BYTE, &got);
      }
      ++t.writes;
      if (rc != MPI_SUCCESS) {
        error.set("MPI_File_read_at of \"" + s.shared_path() + "\" failed (MPI error " + std::to_string(rc) + ")");
      } else if (static_cast<uint64_t>(got) != s.file_bytes()) {
        error.set("\"" + s.shared_path() + "\" is too short: local problem " + std::to_string(k) + " has " +
                  std::to_string(got) + " of its " + std::to_string(s.file_bytes()) + " bytes");
      }
      t.write_s += now_s() - t1;
      t.bytes += static_cast<uint64_t>(got);
    }
#pragma omp critical(mslio_totals)
    total += t;
  }
  close_timed(file, false, error, total);
  error.raise();
  if (compare) check_chunks(s, text, memory, total, mismatch);
  return total;
}

// One engine phase over every chunk of this rank's problems (each original file a contiguous
// chunk of the shared file): open (declare and plan), write or read, close, timed into `total`.
static void run_engine_phase(const Setup& s, Engine& engine, PhaseMode mode, std::vector<Phase::Hint> hints,
                             std::vector<char>& text, CallTotals& total, nlohmann::json& engine_stats) {
  const double t1 = now_s();
  Phase phase(engine, s.shared_path(), mode, std::move(hints));
  const int var = phase.define_variable("solutions", 1, {s.problems * s.chunk_stride()}, 0);
  for (uint64_t k = s.first; k < s.first + s.count; ++k) {
    phase.add_extent(var, k * s.chunk_stride(), s.file_bytes(), text.data() + (k - s.first) * s.file_bytes());
  }
  phase.plan();
  const double t2 = now_s();
  if (mode == PhaseMode::write) {
    phase.write();
  } else {
    phase.read();
  }
  const double t3 = now_s();
  PhaseStats max;
  const PhaseStats mine = phase.close(&max);
  total.open_s = t2 - t1;
  total.write_s = t3 - t2;
  total.close_s = now_s() - t3;
  total.opens = total.closes = 1;
  total.writes = mine.fs_requests;
  total.bytes = s.count * s.file_bytes();
  engine_stats = stats_json(max);
}

CallTotals write_engine(const Setup& s, const double* memory, Engine& engine, const Hints& hints, bool fsync,
                        nlohmann::json& engine_stats) {
  CallTotals total;
  std::vector<char> text(s.count * s.file_bytes());
  FirstError error;
  const double t0 = now_s();
#pragma omp parallel for schedule(static) num_threads(s.threads)
  for (uint64_t k = s.first; k < s.first + s.count; ++k) {
    if (!format_file(problem_memory(s, memory, k), s.points, s.dims, text.data() + (k - s.first) * s.file_bytes())) {
      error.set("a solution value does not fit 14 characters");
    }
  }
  total.format_s = (now_s() - t0) * s.threads;          // every thread busy formatting: cumulative
  collectively(engine.comm(), [&] { error.raise(); });  // before the collective phase
  run_engine_phase(s, engine, PhaseMode::write, engine_hints(s, hints, fsync), text, total, engine_stats);
  return total;
}

CallTotals read_engine(const Setup& s, const double* memory, Engine& engine, const Hints& hints, bool compare,
                       std::optional<std::string>& mismatch, nlohmann::json& engine_stats) {
  CallTotals total;
  std::vector<char> text(s.count * s.file_bytes());
  run_engine_phase(s, engine, PhaseMode::read, engine_hints(s, hints, false), text, total, engine_stats);
  if (compare) check_chunks(s, text, memory, total, mismatch);
  return total;
}

}  // namespace strata::mslio
