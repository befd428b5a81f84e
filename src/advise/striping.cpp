// Striping rules: stripe count from the node count, stripe size from the block size, and the
// bounds the per-dataset and multi-dataset strategies put on the stripe size.
#include <algorithm>

#include "advise/advice.hpp"

namespace strata::advise {

int64_t stripe_count_for_nodes(int64_t nodes, int64_t targets, StripeCountFit fit) {
  int64_t count = 0;
  if (fit == StripeCountFit::hazel_hen) {
    // 5.6·N + 4.9 in tenths is 56·N + 49; adding 5 tenths and dividing rounds halves up
    // exactly (N = 6: 38.5 -> 39, which binary floating point would get wrong).
    count = (56 * nodes + 49 + 5) / 10;
  } else {
    count = 5 * nodes + 3;
  }
  count = std::max<int64_t>(count, 1);
  if (targets > 0) count = std::min(count, targets);
  return count;
}

uint64_t round_to_step(uint64_t bytes, uint64_t step) {
  uint64_t q = bytes / step, r = bytes % step;
  if (r >= step - r) ++q;  // 2r >= step without overflow: halves go up
  return std::max<uint64_t>(q, 1) * step;
}

uint64_t stripe_size_for_block(uint64_t block_bytes, int divisor, uint64_t step, uint64_t max_bytes) {
  // Nearest multiple of `step` to block / divisor, computed on whole numbers: the multiple m
  // nearest to block / (divisor · step).
  const uint64_t unit = static_cast<uint64_t>(divisor) * step;
  uint64_t q = block_bytes / unit, r = block_bytes % unit;
  if (r >= unit - r) ++q;
  uint64_t size = std::max<uint64_t>(q, 1) * step;
  uint64_t largest = std::max<uint64_t>(max_bytes / step, 1) * step;
  return std::min(size, largest);
}

uint64_t per_dataset_stripe_cap(uint64_t dataset_bytes, int64_t stripe_count, uint64_t step) {
  const uint64_t share = dataset_bytes / static_cast<uint64_t>(std::max<int64_t>(stripe_count, 1));
  return std::max<uint64_t>(share / step, 1) * step;
}

uint64_t multi_dataset_stripe(uint64_t total_bytes, int64_t aggregators, uint64_t memory_budget_bytes, uint64_t step) {
  const uint64_t n = static_cast<uint64_t>(std::max<int64_t>(aggregators, 1));
  const uint64_t share = total_bytes / n + (total_bytes % n != 0 ? 1 : 0);
  const uint64_t covering = (share / step + (share % step != 0 ? 1 : 0)) * step;
  const uint64_t budget = (memory_budget_bytes / step) * step;
  return std::max<uint64_t>(std::min(covering, budget), step);
}

uint64_t dataset_size(const AdviceInput& in) {
  if (in.dataset_bytes > 0) return in.dataset_bytes;
  const uint64_t ranks = static_cast<uint64_t>(in.nodes) * static_cast<uint64_t>(in.ranks_per_node);
  const uint64_t per_call = in.block_bytes * ranks;
  if (in.strategy == Strategy::per_dataset) return per_call;
  return per_call / static_cast<uint64_t>(std::max<int64_t>(in.variables, 1));
}

}  // namespace strata::advise
