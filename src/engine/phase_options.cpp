#include "engine/phase_options.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>

#include "common/error.hpp"
#include "common/hash.hpp"
#include "common/units.hpp"

namespace strata::engine {

const std::vector<HintSpec>& engine_hint_specs() {
  static const std::vector<HintSpec> specs = {
      {"cb_buffer_size", "4K..1G", "S_buff, bytes per round per aggregator"},
      {"cb_nodes", "count >= 1", "aggregators (as strata_aggregators)"},
      {"striping_unit", "1..1G", "partition alignment"},
      {"striping_factor", "count", "at least this many aggregators"},
      {"strata_aggregators", "count >= 1", "aggregators"},
      {"strata_buffers", "1..64", "N_buff, buffers per aggregator"},
      {"strata_direct_threshold", "size (0: never)", "aligned run size written by its owner"},
      {"strata_strategy", "auto|direct|aggregate", "owners write directly, or aggregators do"},
      {"strata_pack", "auto|true|false", "one put with a target datatype for many small runs"},
      {"strata_stage", "auto|true|false",
       "a write's runs put as each rank's bytes lie, with a list the aggregator places them by"},
      {"strata_spans", "auto|true|false", "write a round's buffer as whole spans"},
      {"strata_copy", "auto|true|false",
       "ranks of one node copy their runs into the aggregators' shared buffers (no puts)"},
      {"strata_hole_limit", "size", "a hole at least this large ends a span"},
      {"strata_subfiling", "aggregator|count", "a file per aggregator or per count partitions"},
      {"strata_fsync", "true|false", "sync the data before close"},
      {"strata_commit", "sync|nosync|in-place", "how a write becomes the output"},
      {"strata_checksum_chunk", "4K..1G", "bytes per checksum in the index"},
      {"strata_aggr_tier", "dram|hbm|tmpfs|nvr", "force the aggregation tier"},
      {"strata_persistency", "job|none", "aggregated data must persist"},
      {"strata_target", "shared|node-local|in-place",
       "write node-local files, or only the declared bytes of an existing file"},
      {"strata_drain", "PATH|true",
       "commit on node-local storage, return, then drain to PATH (true: the phase's path) in the background"},
      {"strata_cost_table", "true|false", "keep every placement candidate's cost"},
      {"strata_dry_run", "true|false", "plan and place only"},
      {"strata_compare_mpiio", "true|false", "also predict MPI-IO's own collective write (alternative \"mpi-io\")"},
  };
  return specs;
}

}  // namespace strata::engine

namespace strata {

const std::vector<HintDescription>& engine_hints() { return engine::engine_hint_specs(); }

}  // namespace strata

namespace strata::engine {

namespace {

std::string valid_keys() {
  std::string s;
  for (const HintSpec& h : engine_hint_specs()) {
    if (std::string(h.name).rfind("strata_", 0) != 0) continue;
    s += (s.empty() ? "" : ", ") + std::string(h.name);
  }
  return s;
}

bool parse_flag(const std::string& key, const std::string& v) {
  if (v == "true" || v == "1" || v == "enable") return true;
  if (v == "false" || v == "0" || v == "disable") return false;
  throw_usage("hint " + key + "=" + v + " must be true or false");
}

PhaseOptions::Choice parse_choice(const std::string& key, const std::string& v) {
  if (v == "auto") return PhaseOptions::Choice::automatic;
  return parse_flag(key, v) ? PhaseOptions::Choice::on : PhaseOptions::Choice::off;
}

uint64_t parse_buffer_size(const std::string& key, const std::string& v) {
  const uint64_t n = parse_size(v, "hint " + key);
  if (n < kMinBuffer) throw_usage("hint " + key + "=" + v + " is below the 4 KiB minimum");
  if (n > kMaxBuffer) throw_usage("hint " + key + "=" + v + " is above the 1 GiB maximum");
  return n;
}

}  // namespace

PhaseOptions PhaseOptions::from_hints(const std::vector<std::pair<std::string, std::string>>& hints) {
  PhaseOptions o;
  std::optional<Commit> commit;
  for (const auto& [k, v] : hints) {
    if (k == "cb_buffer_size") {
      o.buffer_bytes = parse_buffer_size(k, v);
    } else if (k == "strata_buffers") {
      const uint64_t n = parse_count(v, "hint strata_buffers");
      if (n < 1 || n > 64) throw_usage("hint strata_buffers=" + v + " must be between 1 and 64 (N_buff)");
      o.buffers = static_cast<int>(n);
    } else if (k == "cb_nodes" || k == "strata_aggregators") {
      const uint64_t n = parse_count(v, "hint " + k);
      if (n < 1) throw_usage("hint " + k + "=" + v + " must be at least 1");
      o.aggregators = static_cast<int>(std::min<uint64_t>(n, 1 << 20));
    } else if (k == "striping_unit") {
      o.align = parse_size(v, "hint striping_unit");
      if (*o.align == 0 || *o.align > kMaxBuffer) throw_usage("hint striping_unit must be between 1 byte and 1 GiB");
    } else if (k == "strata_direct_threshold") {
      o.direct_threshold = parse_size(v, "hint strata_direct_threshold");
    } else if (k == "striping_factor") {
      o.stripe_count = static_cast<int>(std::min<uint64_t>(parse_count(v, "hint striping_factor"), 1 << 20));
    } else if (k == "strata_subfiling") {
      if (v == "aggregator") {
        o.subfile_group = 1;
      } else {
        o.subfile_group = parse_count(v, "hint strata_subfiling");
        if (o.subfile_group == 0) throw_usage("hint strata_subfiling must be \"aggregator\" or a count of at least 1");
      }
    } else if (k == "strata_fsync") {
      o.fsync = parse_flag(k, v);
    } else if (k == "strata_checksum_chunk") {
      o.checksum_chunk = parse_size(v, "hint strata_checksum_chunk");
      if (o.checksum_chunk < kMinBuffer || o.checksum_chunk > kMaxBuffer) {
        throw_usage("hint strata_checksum_chunk=" + v + " must be between 4 KiB and 1 GiB");
      }
    } else if (k == "strata_commit") {
      if (v == "sync") {
        commit = Commit::sync;
      } else if (v == "nosync") {
        commit = Commit::nosync;
      } else if (v == "in-place") {
        commit = Commit::in_place;
      } else {
        throw_usage("hint strata_commit=" + v + " must be sync, nosync or in-place");
      }
    } else if (k == "strata_strategy") {
      if (v == "auto") {
        o.strategy = Strategy::automatic;
      } else if (v == "direct") {
        o.strategy = Strategy::direct;
      } else if (v == "aggregate") {
        o.strategy = Strategy::aggregate;
      } else {
        throw_usage("hint strata_strategy=" + v + " must be auto, direct or aggregate");
      }
    } else if (k == "strata_pack") {
      o.pack = parse_choice(k, v);
    } else if (k == "strata_stage") {
      o.stage = parse_choice(k, v);
    } else if (k == "strata_spans") {
      o.spans = parse_choice(k, v);
    } else if (k == "strata_copy") {
      o.copy = parse_choice(k, v);
    } else if (k == "strata_compare_mpiio") {
      o.compare_mpiio = parse_flag(k, v);
    } else if (k == "strata_hole_limit") {
      o.hole_limit = parse_size(v, "hint strata_hole_limit");
    } else if (k.rfind("strata_", 0) == 0) {
      const bool tier_hint = k == "strata_aggr_tier" || k == "strata_persistency" || k == "strata_target" ||
                             k == "strata_drain" || k == "strata_cost_table" || k == "strata_dry_run";
      if (!tier_hint) throw_usage("unknown engine hint \"" + k + "\" (the engine knows " + valid_keys() + ")");
    }
  }
  o.tiers = parse_tier_hints(hints);
  if (o.strategy == Strategy::direct && (o.subfile_group > 0 || o.tiers.node_local)) {
    throw_usage(
        "hint strata_strategy=direct cannot write subfiles or node-local files: their aggregators own "
        "whole partitions (drop strata_subfiling / strata_target, or use strata_strategy=aggregate)");
  }
  if (o.tiers.in_place && o.subfile_group > 0) {
    throw_usage(
        "hint strata_target=in-place writes the caller's one file: it cannot be combined with strata_subfiling");
  }
  if (o.compare_mpiio) {
    // The MPI-IO this process's collective writes go through: Open MPI picks OMPIO unless
    // told io=romio*; MPICH has only ROMIO.
#ifdef OPEN_MPI
    const char* io = std::getenv("OMPI_MCA_io");
    o.mpiio_romio = io != nullptr && std::string(io).find("romio") != std::string::npos;
#else
    o.mpiio_romio = true;
#endif
    if (const char* b = std::getenv("OMPI_MCA_io_ompio_bytes_per_agg")) {
      o.ompio_bytes_per_agg = parse_size(b, "OMPI_MCA_io_ompio_bytes_per_agg");
    }
  }
  o.commit = commit.value_or(Commit::nosync);
  // Durability asked with strata_fsync makes the default commit sync (the data is synced anyway).
  if (o.fsync && !commit) o.commit = Commit::sync;
  return o;
}

uint64_t PhaseOptions::hash() const {
  const uint64_t v[19] = {buffer_bytes.value_or(0) + (buffer_bytes ? 1 : 0),
                          static_cast<uint64_t>(buffers.value_or(0)),
                          static_cast<uint64_t>(aggregators.value_or(0)),
                          align.value_or(0),
                          direct_threshold.value_or(UINT64_MAX),
                          static_cast<uint64_t>(stripe_count),
                          subfile_group,
                          fsync ? 1u : 0u,
                          static_cast<uint64_t>(commit),
                          checksum_chunk,
                          static_cast<uint64_t>(strategy),
                          static_cast<uint64_t>(pack),
                          static_cast<uint64_t>(spans),
                          hole_limit.value_or(UINT64_MAX),
                          tiers.hash(),
                          (compare_mpiio ? 1u : 0u) | (mpiio_romio ? 2u : 0u),
                          ompio_bytes_per_agg.value_or(0),
                          static_cast<uint64_t>(stage),
                          static_cast<uint64_t>(copy)};
  return fnv1a(v, sizeof v);
}

}  // namespace strata::engine
