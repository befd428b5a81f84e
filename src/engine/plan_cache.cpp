#include "engine/plan_cache.hpp"

#include <xxhash.h>

#include <algorithm>

#include "common/error.hpp"
#include "common/seeded_random.hpp"

namespace strata::engine {

std::shared_ptr<const CachedPlan> PlanCache::find(uint64_t key) {
  auto it = std::find_if(plans_.begin(), plans_.end(), [&](const auto& p) { return p->key == key; });
  if (it == plans_.end()) return nullptr;
  std::rotate(plans_.begin(), it, it + 1);  // most recently used first
  return plans_.front();
}

void PlanCache::keep(std::shared_ptr<const CachedPlan> plan) {
  if (plan->runs > kMaxRuns) return;  // alone beyond the bound: never kept
  plans_.erase(std::remove_if(plans_.begin(), plans_.end(), [&](const auto& p) { return p->key == plan->key; }),
               plans_.end());
  plans_.insert(plans_.begin(), std::move(plan));
  uint64_t runs = 0;
  size_t keep = 0;
  while (keep < plans_.size() && keep < kMaxPlans && runs + plans_[keep]->runs <= kMaxRuns)
    runs += plans_[keep++]->runs;
  plans_.resize(keep);
}

uint64_t rank_key_term(uint64_t key, int rank) {
  return splitmix64(key ^ splitmix64(static_cast<uint64_t>(rank) + 0x243F6A8885A308D3ULL));
}

KeyHasher::KeyHasher() : state_(XXH3_createState()) {
  if (state_ == nullptr || XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_)) != XXH_OK) {
    throw_runtime("cannot create an XXH3 state");
  }
}

KeyHasher::~KeyHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void KeyHasher::add(const void* data, size_t bytes) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, bytes);
}

void KeyHasher::add_pieces(const std::vector<Piece>& pieces) {
  // Fields only, in blocks (no per-piece call): offset, length, element size, stride, variable.
  constexpr size_t kBlock = 256;
  uint64_t block[kBlock * 5];
  size_t n = 0;
  for (const Piece& p : pieces) {
    block[n++] = p.file_offset;
    block[n++] = p.length;
    block[n++] = p.element_size;
    block[n++] = p.stride;
    block[n++] = static_cast<uint64_t>(static_cast<uint32_t>(p.var));
    if (n == kBlock * 5) {
      add(block, n * sizeof(uint64_t));
      n = 0;
    }
  }
  if (n > 0) add(block, n * sizeof(uint64_t));
  add(static_cast<uint64_t>(pieces.size()));
}

uint64_t KeyHasher::digest() const { return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_)); }

}  // namespace strata::engine
