#include "engine/plan_cache.hpp"

#include <span>

#include <algorithm>

#include "common/error.hpp"
#include "common/seeded_random.hpp"
#include "common/xxh3.hpp"

namespace strata::engine {

std::shared_ptr<const CachedPlan> PlanCache::find(uint64_t key) {
  auto it = std::find_if(plans_.begin(), plans_.end(), [&](const auto& p) { return p->key == key; });
  if (it == plans_.end()) return nullptr;
  std::rotate(plans_.begin(), it, it + 1);  // most recently used first
  return plans_.front();
}

const CachedPlan* PlanCache::candidate(uint64_t my_relative, uint64_t base) const {
  for (const auto& p : plans_) {
    if (p->my_relative == my_relative && p->my_base != CachedPlan::kNoBase &&
        shift_allowed(*p, static_cast<int64_t>(base - p->my_base)))
      return p.get();
  }
  return nullptr;
}

void KeyVote::vote(const CachedPlan* c, uint64_t base) {
  if (base == CachedPlan::kNoBase) return;  // no runs: no vote (0 in every maximum)
  if (c == nullptr) {
    candidate_not = UINT64_MAX;  // the smallest candidate is 0: no agreement
    return;
  }
  candidate = c->key;
  candidate_not = ~c->key;
  shift = (base - c->my_base) ^ (uint64_t{1} << 63);  // two's complement difference, biased
  shift_not = ~shift;
}

bool KeyVote::agreed(uint64_t& key, int64_t& moved) const {
  if (candidate == 0 || candidate != ~candidate_not || shift != ~shift_not) return false;
  key = candidate;
  moved = static_cast<int64_t>(shift ^ (uint64_t{1} << 63));
  return true;
}

void reduce_key_votes(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const KeyVote*>(in);
  auto* b = static_cast<KeyVote*>(inout);
  for (int i = 0; i < *count; ++i) {
    b[i].failed += a[i].failed;
    b[i].exact += a[i].exact;
    b[i].relative += a[i].relative;
    b[i].candidate = std::max(b[i].candidate, a[i].candidate);
    b[i].candidate_not = std::max(b[i].candidate_not, a[i].candidate_not);
    b[i].shift = std::max(b[i].shift, a[i].shift);
    b[i].shift_not = std::max(b[i].shift_not, a[i].shift_not);
    b[i].recycled = std::max(b[i].recycled, a[i].recycled);
  }
}

bool shift_allowed(const CachedPlan& c, int64_t shift) {
  if (shift == 0) return true;
  const uint64_t step = shift < 0 ? uint64_t{0} - static_cast<uint64_t>(shift) : static_cast<uint64_t>(shift);
  if (c.aligned_shifts && c.plan.align > 0 && step % c.plan.align != 0) return false;
  if (shift < 0) {  // nothing may move below byte 0
    const uint64_t first = c.plan.start.empty() ? c.plan.lo : std::min(c.plan.lo, c.plan.start.front());
    if (first < step) return false;
  }
  return true;
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

void KeyHasher::add_pieces(const std::vector<Piece>& pieces, uint64_t base) {
  add_piece_fields(pieces.data(), pieces.size(), base);
  add(static_cast<uint64_t>(pieces.size()));
}

void KeyHasher::add_piece_fields(const Piece* pieces, size_t count, uint64_t base) {
  // Fields only, in blocks (no per-piece call): offset, length, element size and stride.
  constexpr size_t kBlock = 256;
  uint64_t block[kBlock * 3];
  size_t n = 0;
  for (const Piece& p : std::span<const Piece>(pieces, count)) {
    block[n++] = p.file_offset - base;
    block[n++] = p.length;
    block[n++] = p.element_size | static_cast<uint64_t>(p.stride) << 32;
    if (n == kBlock * 3) {
      add(block, n * sizeof(uint64_t));
      n = 0;
    }
  }
  if (n > 0) add(block, n * sizeof(uint64_t));
}

uint64_t KeyHasher::digest() const { return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_)); }

}  // namespace strata::engine
