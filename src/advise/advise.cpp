// The advisor: validates the input, applies every rule in order and records why.
#include <algorithm>
#include <sstream>

#include "advise/advice.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace strata::advise {

namespace {

// ROMIO's default collective buffer (docs/backends.md): the starting point where no stripe sets it.
constexpr uint64_t romio_default_buffer = 16 * MiB;
constexpr uint64_t lock_ahead_min_block = 4 * MiB;
constexpr int64_t lock_ahead_min_cores = 3072;

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "1M", "192K": the size suffixes lfs setstripe -S and beegfs-ctl --chunksize accept.
std::string size_arg(uint64_t bytes, bool lower) {
  std::string n, unit;
  if (bytes % MiB == 0) {
    n = std::to_string(bytes / MiB);
    unit = "M";
  } else {
    n = std::to_string(bytes / KiB);
    unit = "K";
  }
  if (lower) unit[0] = static_cast<char>(unit[0] - 'A' + 'a');
  return n + unit;
}

std::string why_not_striped(const std::string& fs) {
  if (fs == "gpfs") {
    return "GPFS spreads every file over all its disks by itself in blocks of the file-system block size; "
           "users choose neither a stripe count nor a stripe size";
  }
  if (fs == "nfs") return "NFS serves each file from one server: there are no storage targets to stripe over";
  if (fs == "tmpfs" || fs == "ramfs") {
    return fs + " keeps files in the memory of this node: there are no storage targets to stripe over";
  }
  if (fs == "ext4" || fs == "xfs" || fs == "btrfs" || fs == "zfs") {
    return fs +
           " is a local file system: a file lives on this node's own device(s), with no storage "
           "targets to stripe over";
  }
  return fs +
         " is not a striped parallel file system the advisor knows (only Lustre and BeeGFS let users "
         "set striping)";
}

// Records why: the rule, its reasoning with the numbers, the source.
void say(Advice& a, const std::string& rule, const std::string& text, const std::string& src) {
  a.reasons.push_back({rule, text, src});
}

// Striping (count and size) where the file system stripes, else why not. Returns the number of
// aggregators the strategy rule divides the size among: the stripes, or one per node (every rank on
// one node), as ROMIO and GPFS do.
int64_t striping_rules(const AdviceInput& in, Advice& a) {
  const int64_t ranks = in.nodes * in.ranks_per_node;
  std::ostringstream t;
  const uint64_t step = in.stripe_step_bytes;
  const std::string k_text = in.stripe_divisor == 1 ? "1" : "1/" + std::to_string(in.stripe_divisor);
  int64_t aggregators = 0;
  if (is_striped(in.fs_type)) {
    a.striping_applies = true;
    a.striping_via_hints = in.fs_type == "lustre";

    // Stripe count.
    a.stripe_count = in.rule ? stripe_count_for_nodes(in.nodes, in.targets, *in.rule)
                             : stripe_count_for_nodes(in.nodes, in.targets, in.fit);
    const int64_t uncapped =
        in.rule ? stripe_count_for_nodes(in.nodes, 0, *in.rule) : stripe_count_for_nodes(in.nodes, 0, in.fit);
    t.str("");
    if (in.rule) {
      t << "round(" << in.rule->text << ") = " << uncapped << " for N = " << in.nodes
        << " node(s): the rule calibrated on your file system, instead of the paper's 5.6N + 4.9";
    } else if (in.fit == StripeCountFit::hazel_hen) {
      t << "round(5.6 x " << in.nodes << " + 4.9) = " << uncapped << " for " << in.nodes << " node(s)";
    } else {
      t << "5 x " << in.nodes << " + 3 = " << uncapped << " for " << in.nodes
        << " node(s) (the predecessor system's fit; it predicts fewer OSTs than 5.6N + 4.9)";
    }
    if (in.targets > 0 && uncapped > in.targets) {
      t << ", capped at the " << in.targets << " OSTs there are (the fit holds up to the node count where it "
        << "reaches them; beyond, use them all)";
    } else if (in.targets > 0) {
      t << " (of " << in.targets << " OSTs)";
    } else {
      t << "; the OST count is unknown, so not capped: give --osts";
    }
    if (in.fs_type == "beegfs") t << "; the fit was measured on Lustre, not on BeeGFS: treat it as a starting point";
    if (ranks == 1) t << "; the fits were measured on files shared by whole nodes, not on a file with one writer";
    if (in.rule) {
      say(a, "stripe count", t.str(), in.rule->source);
    } else {
      say(a, "stripe count", t.str(), source::stripe_count);
    }

    // Stripe size from the block size.
    const uint64_t by_block = stripe_size_for_block(in.block_bytes, in.stripe_divisor, step, in.max_stripe_bytes);
    a.stripe_size_bytes = by_block;
    t.str("");
    t << "k x block = " << k_text << " x " << format_size(in.block_bytes) << ", to the nearest multiple of "
      << format_size(step) << " (at least " << format_size(step) << ") = " << format_size(by_block)
      << ": stripe-sized writes were the fastest";
    say(a, "stripe size", t.str(), source::stripe_size);
    aggregators = a.stripe_count;
  } else {
    a.striping_applies = false;
    t.str("");
    t << "striping does not apply: " << why_not_striped(in.fs_type)
      << ", so no stripe count, stripe size, striping_factor/striping_unit or lfs setstripe is advised";
    if (in.targets > 0) t << " (--osts " << in.targets << " ignored)";
    t << "; the collective-buffering settings below still apply";
    say(a, "striping", t.str(), source::lustre_osts);
    // Aggregators: one per node, as ROMIO and GPFS do; on one node, every rank (see cb_config_list).
    aggregators = in.nodes == 1 ? ranks : in.nodes;
  }

  return aggregators;
}

// The size both strategy rules bound: the stripe size on striped file systems, the collective
// buffer (which plays its part, IV-B2) elsewhere. Returns it.
uint64_t strategy_rule(const AdviceInput& in, Advice& a, int64_t aggregators) {
  std::ostringstream t;
  const uint64_t dataset = dataset_size(in);
  const uint64_t total = dataset * static_cast<uint64_t>(in.variables);
  const uint64_t step = in.stripe_step_bytes;
  const bool per_dataset = in.strategy == Strategy::per_dataset;
  const std::string what = a.striping_applies ? "stripe size" : "collective buffer";
  const std::string among =
      std::to_string(aggregators) + (a.striping_applies ? " stripe" : " aggregator") + (aggregators == 1 ? "" : "s");
  uint64_t unit = a.striping_applies ? a.stripe_size_bytes : romio_default_buffer;
  t.str("");
  if (per_dataset) {
    const uint64_t cap = per_dataset_stripe_cap(dataset, aggregators, step);
    t << "per-dataset I/O: " << what << " at most dataset / " << among << " = " << format_size(dataset) << " / "
      << aggregators << " -> " << format_size(cap) << " (rounded down to " << format_size(step)
      << ") so that no aggregator idles";
    if (unit > cap) {
      t << "; " << format_size(unit) << " lowered to " << format_size(cap);
      unit = cap;
    } else {
      t << "; " << format_size(unit) << " is within it";
    }
    say(a, "per-dataset bound", t.str(), source::per_dataset);
  } else {
    const uint64_t big = multi_dataset_stripe(total, aggregators, in.memory_budget_bytes, step);
    t << "multi-dataset I/O: a larger " << what << " cuts two-phase rounds; one round covers " << format_size(total)
      << " / " << among << " -> " << format_size(big) << " (bounded by the " << format_size(in.memory_budget_bytes)
      << " memory budget per aggregator)";
    if (a.striping_applies && big > unit) {
      t << "; " << format_size(unit) << " raised to " << format_size(big);
      unit = big;
    } else if (a.striping_applies) {
      t << "; " << format_size(unit) << " kept";
    } else {
      unit = big;
    }
    say(a, "multi-dataset size", t.str(), source::multi_dataset);
  }
  if (a.striping_applies) a.stripe_size_bytes = unit;

  return unit;
}

// The collective buffer and the aggregators.
void buffer_rules(const AdviceInput& in, Advice& a, uint64_t unit) {
  const int64_t ranks = in.nodes * in.ranks_per_node;
  std::ostringstream t;
  // Collective buffer = stripe size.
  a.cb_buffer_size_bytes = unit;
  t.str("");
  if (a.striping_applies) {
    t << "cb_buffer_size = stripe size = " << format_size(unit)
      << ": a 1:1 buffer-to-stripe ratio beat 2:1 and 1:2 (1.57 against 1.08 and 0.91 GB/s)";
    say(a, "collective buffer", t.str(), source::buffer_ratio);
  } else {
    t << "cb_buffer_size = " << format_size(unit) << ": without stripes the collective buffer takes the stripe "
      << "size's part (the bound above); ROMIO's default is " << format_size(romio_default_buffer)
      << ", OMPIO's 32 MiB";
    say(a, "collective buffer", t.str(), source::per_dataset);
  }

  // Aggregators.
  t.str("");
  if (a.striping_applies) {
    a.cb_nodes = std::min<int64_t>(a.stripe_count, ranks);
    t << "cb_nodes = " << a.cb_nodes << ": at least one aggregator per stripe (OST), so each OST has a writer "
      << "and none is shared, which avoids lock contention";
    if (ranks < a.stripe_count) t << " (only " << ranks << " ranks for " << a.stripe_count << " stripes)";
    say(a, "aggregators", t.str(), source::aggregators);
  } else if (in.nodes > 1) {
    a.cb_nodes = in.nodes;
    t << "cb_nodes = " << in.nodes << ": one aggregator per node, the number of aggregators taking the stripe "
      << "count's part where nothing is striped";
    say(a, "aggregators", t.str(), source::per_dataset);
  } else {
    t << "cb_nodes left to the library (ROMIO: every rank once cb_config_list allows it)";
    say(a, "aggregators", t.str(), source::aggregators);
  }
  t.str("");
  if (in.nodes == 1) {
    a.cb_config_list = "*:*";
    t << "cb_config_list = *:* (ROMIO): on one node ROMIO's default *:1 allows a single aggregator whatever "
      << "cb_nodes says";
    say(a, "cb_config_list", t.str(), source::romio_notes);
  } else if (a.cb_nodes > in.nodes) {
    const int64_t per_node = (a.cb_nodes + in.nodes - 1) / in.nodes;
    a.cb_config_list = "*:" + std::to_string(per_node);
    t << "cb_config_list = *:" << per_node << " (ROMIO): its default *:1 would allow only " << in.nodes
      << " aggregators for cb_nodes = " << a.cb_nodes;
    say(a, "cb_config_list", t.str(), source::romio_notes);
  }
  say(a, "collective buffering",
      "romio_cb_write = enable (ROMIO): the stripe and buffer rules assume two-phase writes by aggregators, which "
      "ROMIO's automatic mode skips when each rank's data is contiguous; under OMPIO the collective_buffering "
      "key is not set, because Open MPI 4.1.4 reads it inverted",
      source::romio_notes);
}

void lock_ahead_rule(const AdviceInput& in, Advice& a) {
  const int64_t ranks = in.nodes * in.ranks_per_node;
  std::ostringstream t;
  const int64_t cores = ranks;
  t.str("");
  if (in.fs_type != "lustre") {
    t << "no advice: lock-ahead is a Cray Lustre feature";
  } else if ((a.lock_ahead_multiplier = lock_ahead_multiplier(in.block_bytes, cores)) > 0) {
    t << "Cray MPI on Lustre: cray_cb_write_lock_mode=2, cray_cb_nodes_multiplier=32 (32 aggregators per OST): "
      << "blocks of " << format_size(in.block_bytes) << " >= 4 MiB and " << cores
      << " cores >= 3072 gained a further factor 2-8";
    if (in.targets > 0 && a.stripe_count < in.targets) {
      t << "; use every OST before raising the multiplier (" << a.stripe_count << " of " << in.targets << " here)";
    }
    a.cray_hints = {{"cray_cb_write_lock_mode", "2"}, {"cray_cb_nodes_multiplier", "32"}};
  } else {
    t << "no advice: the multiplier needs blocks >= 4 MiB and >= 3072 cores (here " << format_size(in.block_bytes)
      << " and " << cores << "); below that the best multiplier varied with the core count";
  }
  say(a, "lock-ahead", t.str(), source::lock_ahead);
}

void layout_rules(const AdviceInput& in, Advice& a) {
  std::ostringstream t;
  a.layout = choose_layout(in.fs_type, in.files);
  t.str("");
  const std::string files = in.files > 0 ? std::to_string(in.files) + " files" : "the file count (--files) not given";
  if (a.layout == LayoutChoice::file_per_process) {
    t << "file per process: on BeeGFS a shared file was slower in every case measured and file per process is "
         "reported faster";
  } else if (a.layout == LayoutChoice::shared_file) {
    t << "a shared file: " << files << " per step load Lustre's metadata server; replacing tens of thousands of "
      << "files by one cut I/O time by up to ~90 %";
  } else if (in.fs_type == "lustre" && in.files == 0) {
    t << "either: give --files; on Lustre a shared file pays off once files number in the tens of thousands";
  } else if (in.fs_type == "lustre") {
    t << "either: " << files << " is below the tens of thousands of files where Lustre's metadata cost made a "
      << "shared file pay off";
  } else {
    t << "either: the papers measured no file-per-process rule for " << in.fs_type;
  }
  say(a, "layout", t.str(), source::layout);
  say(a, "layout caution",
      "the same change (one shared file instead of many) helped on Lustre and hurt on BeeGFS: many files load "
      "the metadata server, a shared file brings lock contention when writes are not stripe-aligned; measure "
      "both on your system (strata run with and without --file-per-process)",
      source::layout_caution);
}

// The advice in each library's terms: ROMIO's and OMPIO's hints, OMPIO's MCA parameters, the
// striping command and Cray's MPICH_MPIIO_HINTS.
void library_hints(const AdviceInput& in, Advice& a) {
  const std::string cb = std::to_string(a.cb_buffer_size_bytes);
  a.romio_hints.emplace_back("romio_cb_write", "enable");
  a.romio_hints.emplace_back("cb_buffer_size", cb);
  if (a.cb_nodes > 0) a.romio_hints.emplace_back("cb_nodes", std::to_string(a.cb_nodes));
  if (!a.cb_config_list.empty()) a.romio_hints.emplace_back("cb_config_list", a.cb_config_list);
  a.ompio_hints.emplace_back("cb_buffer_size", cb);
  a.ompio_mca.emplace_back("io_ompio_bytes_per_agg", cb);
  if (a.cb_nodes > 0) {
    a.ompio_hints.emplace_back("cb_nodes", std::to_string(a.cb_nodes));
    a.ompio_mca.emplace_back("io_ompio_num_aggregators", std::to_string(a.cb_nodes));
  }
  if (a.striping_via_hints) {
    const std::string count = std::to_string(a.stripe_count), size = std::to_string(a.stripe_size_bytes);
    a.romio_hints.emplace_back("striping_factor", count);
    a.romio_hints.emplace_back("striping_unit", size);
    // OMPIO's Lustre component reads stripe_width (the stripe count) and stripe_size.
    a.ompio_hints.emplace_back("stripe_size", size);
    a.ompio_hints.emplace_back("stripe_width", count);
    a.ompio_mca.emplace_back("fs_lustre_stripe_size", size);
    a.ompio_mca.emplace_back("fs_lustre_stripe_width", count);
  }
  if (a.striping_applies) {
    if (in.fs_type == "lustre") {
      a.stripe_command =
          "lfs setstripe -c " + std::to_string(a.stripe_count) + " -S " + size_arg(a.stripe_size_bytes, false) + " DIR";
    } else {
      a.stripe_command = "beegfs-ctl --setpattern --numtargets=" + std::to_string(a.stripe_count) +
                         " --chunksize=" + size_arg(a.stripe_size_bytes, true) + " DIR";
    }
  }
  // Cray: ROMIO's keys minus cb_config_list (its ':' is MPICH_MPIIO_HINTS's separator) and, on
  // Lustre, cb_nodes (Cray MPI-IO sets aggregators = stripe count x multiplier itself, sec. 3.2).
  std::string cray = "*";
  for (const auto& [k, v] : a.romio_hints) {
    if (k == "cb_config_list" || (k == "cb_nodes" && in.fs_type == "lustre")) continue;
    cray += ":" + k + "=" + v;
  }
  for (const auto& [k, v] : a.cray_hints) cray += ":" + k + "=" + v;
  a.mpich_mpiio_hints = cray;
}

}  // namespace

Hints Advice::hints_for(const std::string& io_component) const {
  if (io_component == "romio") return romio_hints;
  if (io_component == "ompio") return ompio_hints;
  return all_hints();
}

Hints Advice::all_hints() const { return merge_hints(romio_hints, ompio_hints); }

int lock_ahead_multiplier(uint64_t block_bytes, int64_t cores) {
  return block_bytes >= lock_ahead_min_block && cores >= lock_ahead_min_cores ? 32 : 0;
}

void validate(const AdviceInput& in) {
  const auto& known = known_file_systems();
  if (std::find(known.begin(), known.end(), in.fs_type) == known.end()) {
    throw_usage("unknown file system \"" + in.fs_type + "\" (known: " + join(known, ", ") + ")");
  }
  if (in.nodes < 1) throw_usage("--nodes must be at least 1 (got " + std::to_string(in.nodes) + ")");
  if (in.ranks_per_node < 1) {
    throw_usage("--ppn (ranks per node) must be at least 1 (got " + std::to_string(in.ranks_per_node) + ")");
  }
  if (in.block_bytes == 0) throw_usage("--block-size must be more than 0 bytes (the bytes one rank writes per call)");
  if (in.targets < 0) {
    throw_usage("--osts must not be negative (got " + std::to_string(in.targets) + "; 0 means unknown)");
  }
  if (in.stripe_divisor != 1 && in.stripe_divisor != 2 && in.stripe_divisor != 4) {
    throw_usage("the stripe ratio k must be 1, 1/2 or 1/4 (got 1/" + std::to_string(in.stripe_divisor) + ")");
  }
  if (in.variables < 1) throw_usage("--variables must be at least 1 (got " + std::to_string(in.variables) + ")");
  if (in.files < 0) throw_usage("--files must not be negative (got " + std::to_string(in.files) + ")");
  if (in.stripe_step_bytes == 0) throw_usage("the stripe size step must be more than 0 bytes");
  if (in.max_stripe_bytes < in.stripe_step_bytes) {
    throw_usage("the largest stripe size (" + format_size(in.max_stripe_bytes) + ") is below the stripe step (" +
                format_size(in.stripe_step_bytes) + ")");
  }
  if (in.memory_budget_bytes < in.stripe_step_bytes) {
    throw_usage("--memory-budget must be at least one stripe step, " + format_size(in.stripe_step_bytes) + " (got " +
                format_size(in.memory_budget_bytes) + ")");
  }
  if (in.nodes > (int64_t{1} << 24) || in.ranks_per_node > (int64_t{1} << 16)) {
    throw_usage("--nodes or --ppn is implausibly large (nodes up to 16777216, ranks per node up to 65536)");
  }
  const uint64_t ranks = static_cast<uint64_t>(in.nodes * in.ranks_per_node);
  if (in.block_bytes > UINT64_MAX / ranks) throw_usage("--block-size times the rank count overflows 64 bits");
}

Advice advise(const AdviceInput& in) {
  validate(in);
  Advice a;
  a.fs_type = in.fs_type;
  const int64_t aggregators = striping_rules(in, a);
  const uint64_t unit = strategy_rule(in, a, aggregators);
  buffer_rules(in, a, unit);
  lock_ahead_rule(in, a);
  layout_rules(in, a);
  library_hints(in, a);
  return a;
}

}  // namespace strata::advise
