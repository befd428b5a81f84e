// The C API: each call converts strata::Error into a status and a message.
#include <string>

#include "common/error.hpp"
#include "common/hints.hpp"
#include "common/mpi_env.hpp"
#include "strata/strata.h"
#include "strata/strata.hpp"

struct strata_engine {
  strata::Engine engine;
  explicit strata_engine(MPI_Comm comm) : engine(comm) {}
};

struct strata_phase {
  strata::Phase phase;
};

namespace {

thread_local std::string last_error;

template <class F>
int guarded(F&& fn) {
  try {
    fn();
    last_error.clear();
    return 0;
  } catch (const strata::Error& e) {
    last_error = e.what();
    return e.exit_status();
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}

}  // namespace

extern "C" {

int strata_engine_create(MPI_Comm comm, strata_engine** engine) {
  return guarded([&] { *engine = new strata_engine(comm); });
}

int strata_engine_create_f(MPI_Fint comm, strata_engine** engine) {
  return guarded([&] {
    const MPI_Comm c = strata::comm_from_fortran(comm);  // each MPI's answer to an unknown handle
    if (c == MPI_COMM_NULL) {
      strata::throw_usage("strata_engine_create_f: Fortran handle " + std::to_string(comm) + " is not a communicator");
    }
    *engine = new strata_engine(c);
  });
}

int strata_engine_free(strata_engine* engine) {
  return guarded([&] { delete engine; });
}

int strata_phase_open(strata_engine* engine, const char* path, strata_mode mode, const char* hints,
                      strata_phase** phase) {
  return guarded([&] {
    if (engine == nullptr || path == nullptr || phase == nullptr) {
      strata::throw_usage("strata_phase_open: engine, path and phase are required");
    }
    strata::Hints h = hints != nullptr && *hints != '\0' ? strata::parse_hint_list(hints) : strata::Hints{};
    *phase = new strata_phase{strata::Phase(
        engine->engine, path, mode == STRATA_READ ? strata::PhaseMode::read : strata::PhaseMode::write, h)};
  });
}

int strata_define_variable(strata_phase* ph, const char* name, size_t element_size, int ndims,
                           const uint64_t* global_dims, uint64_t file_offset, int* var) {
  return guarded([&] {
    std::vector<uint64_t> dims(global_dims, global_dims + (ndims > 0 ? ndims : 0));
    *var = ph->phase.define_variable(name != nullptr ? name : "", element_size, dims, file_offset);
  });
}

int strata_add_extent(strata_phase* ph, int var, uint64_t file_offset, uint64_t length, void* memory) {
  return guarded([&] { ph->phase.add_extent(var, file_offset, length, memory); });
}

int strata_add_subarray(strata_phase* ph, int var, const uint64_t* start, const uint64_t* count, void* memory,
                        size_t memory_stride) {
  return guarded([&] {
    if (start == nullptr || count == nullptr) strata::throw_usage("strata_add_subarray: start and count are required");
    ph->phase.add_subarray(var, start, count, memory, memory_stride);
  });
}

int strata_add_subarray_nd(strata_phase* ph, int var, int ndims, const uint64_t* start, const uint64_t* count,
                           void* memory, size_t memory_stride) {
  return guarded([&] {
    const size_t n = ndims > 0 ? static_cast<size_t>(ndims) : 0;
    if (n > 0 && (start == nullptr || count == nullptr)) {
      strata::throw_usage("strata_add_subarray_nd: start and count are required");
    }
    ph->phase.add_subarray(var, std::vector<uint64_t>(start, start + n), std::vector<uint64_t>(count, count + n),
                           memory, memory_stride);
  });
}

int strata_fail(strata_phase* ph, const char* message) {
  return guarded([&] { ph->phase.fail(message != nullptr ? message : "strata_fail"); });
}

int strata_plan(strata_phase* ph) {
  return guarded([&] { ph->phase.plan(); });
}
int strata_write(strata_phase* ph) {
  return guarded([&] { ph->phase.write(); });
}
int strata_read(strata_phase* ph) {
  return guarded([&] { ph->phase.read(); });
}

int strata_phase_close(strata_phase* ph, strata_stats* out) {
  int status = guarded([&] {
    strata::PhaseStats max;
    ph->phase.close(&max);
    if (out != nullptr) {
      *out = {max.plan_s, max.aggregation_s, max.io_s,        max.wait_s,       max.close_s, max.rounds,
              max.bytes,  max.aggregators,   max.fs_requests, max.buffer_bytes, max.buffers, max.aggregator ? 1 : 0};
    }
  });
  delete ph;
  return status;
}

int strata_wait_drain(strata_engine* engine, const char* path, strata_drain_stats* out) {
  return guarded([&] {
    if (engine == nullptr || path == nullptr) strata::throw_usage("strata_wait_drain: engine and path are required");
    const strata::DrainStats s = engine->engine.wait_drain(path);
    if (out != nullptr) *out = {s.drained ? 1 : 0, s.fallback ? 1 : 0, s.return_s, s.durable_s, s.copy_s, s.bytes};
  });
}

const char* strata_last_error(void) { return last_error.c_str(); }

}  // extern "C"
