// The advisor: file-system striping and MPI-IO hint heuristics, each rule with the paper and
// section it comes from (docs/advisor.md lists the papers and their sections).
//
// Everything here is a pure function of an AdviceInput: no MPI, no file system access, so the
// rules are unit-tested with the papers' own figures. `strata advise` prints an Advice;
// `strata run` applies its hints unless --no-advice (explicit hints win key by key).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/hints.hpp"

namespace strata::advise {

// Where each rule comes from.
namespace source {
inline constexpr const char* lustre_osts = "Hazel Hen striping paper, sec. 3.2";
inline constexpr const char* stripe_count = "Hazel Hen striping paper, sec. 5.1.1 and 6";
inline constexpr const char* stripe_size = "Hazel Hen striping paper, sec. 5.1.2 and 6";
inline constexpr const char* lock_ahead = "Hazel Hen striping paper, sec. 5.1.3 and 6";
inline constexpr const char* buffer_ratio = "TAPIOCA paper, sec. 5.2, Table 4";
inline constexpr const char* aggregators = "HDF5 multi-dataset paper, sec. III-C";
inline constexpr const char* per_dataset = "HDF5 multi-dataset paper, sec. IV-B2";
inline constexpr const char* multi_dataset = "HDF5 multi-dataset paper, sec. III-C, IV-A2 and IV-B2";
inline constexpr const char* layout = "MSLIO paper, sec. IV-A and VI-C";
inline constexpr const char* layout_caution = "MSLIO paper, sec. VI-C and VIII";
inline constexpr const char* romio_notes = "docs/backends.md (from the ROMIO and Open MPI 4.1 sources)";
}  // namespace source

inline constexpr uint64_t KiB = 1024;
inline constexpr uint64_t MiB = 1024 * KiB;
inline constexpr uint64_t GiB = 1024 * MiB;

// I/O strategy for several variables (datasets): one collective call per dataset, or all
// datasets in one collective call (H5Dwrite_multi, PnetCDF wait_all, Strata's Phase).
enum class Strategy { per_dataset, multi_dataset };
// Which linear fit gives the stripe count: the Hazel Hen ws9 fit 5.6N + 4.9 (default) or the
// fit measured on its 168-OST predecessor, 5N + 3 (sec. 5.1.1: it fits ws9 too but predicts
// fewer OSTs).
enum class StripeCountFit { hazel_hen, predecessor };
// A stripe-count rule slope·N + intercept in exact fractions, fitted to one's own file system by
// strata-bench calibrate (strata advise --rule FILE); it replaces the paper's fits when given.
struct StripeRule {
  int64_t slope_num = 0, slope_den = 1;
  int64_t intercept_num = 0, intercept_den = 1;
  std::string text;    // "0.8 N + 4", for reasons
  std::string source;  // where it comes from: the file and what fitted it
};
// Reads a rule from the JSON `strata-bench calibrate --json` writes: exact "slope_exact" and
// "intercept_exact" ("235/42") when present, else the numbers "slope" and "intercept" taken as
// the decimals they print as. `file` names it in errors and in the source. Throws a usage Error.
StripeRule stripe_rule_from_json(const std::string& json_text, const std::string& file);

// Which layout the file system and file count favour.
enum class LayoutChoice { shared_file, file_per_process, either };

struct AdviceInput {
  std::string fs_type;                    // "lustre", "beegfs", "gpfs", "ext4", "tmpfs", "nfs", ...
  int64_t targets = 0;                    // OSTs / storage targets; 0 = unknown (no cap)
  uint64_t stripe_step_bytes = 64 * KiB;  // stripe sizes are multiples of this (sec. 3.2)
  uint64_t max_stripe_bytes = 4 * GiB;    // largest stripe size allowed (sec. 3.2)
  int64_t nodes = 1;
  int64_t ranks_per_node = 1;
  uint64_t block_bytes = 0;  // bytes one rank writes per write call
  int stripe_divisor = 4;    // k = 1/stripe_divisor, one of 1, 2, 4
  StripeCountFit fit = StripeCountFit::hazel_hen;
  std::optional<StripeRule> rule;  // a calibrated rule; replaces `fit` when set
  int64_t variables = 1;           // datasets written per output step
  uint64_t dataset_bytes = 0;      // global size of one dataset; 0 = derived (see dataset_size)
  Strategy strategy = Strategy::per_dataset;
  int64_t files = 0;                        // files the application creates per step; 0 = not given
  uint64_t memory_budget_bytes = 64 * MiB;  // collective buffer an aggregator may hold
};

struct Reason {
  std::string rule;    // short name: "stripe count", "stripe size", ...
  std::string advice;  // what the rule says for these inputs, and why
  std::string source;  // paper and section
};

struct Advice {
  std::string fs_type;
  bool striping_applies = false;    // the file system has user-set striping (Lustre, BeeGFS)
  bool striping_via_hints = false;  // MPI-IO hints can set it at creation (Lustre)
  int64_t stripe_count = 0;         // 0 when striping does not apply
  uint64_t stripe_size_bytes = 0;   // 0 when striping does not apply
  uint64_t cb_buffer_size_bytes = 0;
  int64_t cb_nodes = 0;           // 0 = leave to the MPI library
  std::string cb_config_list;     // ROMIO; empty = leave the default
  int lock_ahead_multiplier = 0;  // Cray LLA; 0 = no advice
  LayoutChoice layout = LayoutChoice::either;
  Hints romio_hints;              // MPI_Info keys ROMIO reads
  Hints ompio_hints;              // MPI_Info keys OMPIO reads
  Hints ompio_mca;                // Open MPI MCA parameters with the same effect
  Hints cray_hints;               // Cray MPICH keys (lock-ahead), besides the ROMIO ones
  std::string stripe_command;     // lfs setstripe ... / beegfs-ctl ...; empty when none
  std::string mpich_mpiio_hints;  // Cray's MPICH_MPIIO_HINTS value
  std::vector<Reason> reasons;    // one per rule considered, in order

  // The keys for one MPI-IO component ("romio" or "ompio"; anything else gets both sets).
  Hints hints_for(const std::string& io_component) const;
  // ROMIO and OMPIO keys together (each library ignores the other's keys).
  Hints all_hints() const;
};

// ---- the rules, one function each ----------------------------------------------------------

// True for file systems whose striping a user sets (Lustre, BeeGFS).
bool is_striped(const std::string& fs_type);
// The file-system names the advisor knows; others are a usage error.
const std::vector<std::string>& known_file_systems();

// Stripe count for `nodes` nodes: round(5.6·N + 4.9) with halves up, in exact integer tenths
// ((56·N + 49 + 5) / 10), or 5N + 3; capped at `targets` when targets > 0 (sec. 5.1.1).
int64_t stripe_count_for_nodes(int64_t nodes, int64_t targets, StripeCountFit fit);
// The same with a calibrated rule: round(slope·N + intercept), halves up, computed exactly on
// the fractions; at least 1; capped at `targets` when targets > 0. Throws a usage Error when the
// fractions are too large for 64-bit arithmetic.
int64_t stripe_count_for_nodes(int64_t nodes, int64_t targets, const StripeRule& rule);

// `bytes` rounded to the nearest multiple of `step` (halves up), at least one step.
uint64_t round_to_step(uint64_t bytes, uint64_t step);
// Stripe size k·block with k = 1/divisor, rounded to the nearest multiple of `step`, at least
// one step, at most `max_bytes` (sec. 5.1.2; sizes from sec. 3.2).
uint64_t stripe_size_for_block(uint64_t block_bytes, int divisor, uint64_t step, uint64_t max_bytes);
// Per-dataset strategy: the largest stripe size that keeps every aggregator busy,
// dataset / stripe count, rounded down to a multiple of `step` (at least one step) (IV-B2).
uint64_t per_dataset_stripe_cap(uint64_t dataset_bytes, int64_t stripe_count, uint64_t step);
// Multi-dataset strategy: a stripe (or buffer) big enough for one two-phase round to cover the
// whole phase, total / aggregators rounded up to `step`, but no more than the memory budget
// (rounded down to `step`) (III-C, IV-A2, IV-B2). At least one step.
uint64_t multi_dataset_stripe(uint64_t total_bytes, int64_t aggregators, uint64_t memory_budget_bytes, uint64_t step);
// Cray lock-ahead: 32 when blocks are at least 4 MiB and cores at least 3072, else 0 (5.1.3).
int lock_ahead_multiplier(uint64_t block_bytes, int64_t cores);
// File per process or a shared file, from the file system and the number of files (MSLIO).
LayoutChoice choose_layout(const std::string& fs_type, int64_t files);
// Files from which Lustre's metadata cost is taken to outweigh a shared file's locking:
// "tens of thousands" (MSLIO IV-A, VI-C).
inline constexpr int64_t many_files = 10000;

// Global size of one dataset: `dataset_bytes` when given, otherwise block × ranks for the
// per-dataset strategy (one call writes one dataset) and block × ranks / variables for the
// multi-dataset one (one call writes every dataset).
uint64_t dataset_size(const AdviceInput& in);

// Checks the input; throws a usage Error naming the bad value and the fix.
void validate(const AdviceInput& in);
// Applies every rule. Throws a usage Error for bad input.
Advice advise(const AdviceInput& in);

std::string layout_name(LayoutChoice c);
std::string strategy_name(Strategy s);
std::string fit_name(StripeCountFit f);

}  // namespace strata::advise
