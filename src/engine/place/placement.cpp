#include "engine/place/placement.hpp"

#include <cstdlib>
#include <limits>

#include "common/error.hpp"
#include "common/units.hpp"

namespace strata::engine {

namespace {

constexpr double kInfinite = std::numeric_limits<double>::max();

struct DoubleInt {
  double value;
  int index;
};

// (candidate key, tier, fallback) in one int: MINLOC picks the lowest on equal costs. A rank's
// key for partition p is its distance after order[p] in the spread order (plan/partition), so
// equal costs go to the engine's default aggregator of p (order[p], then the ranks after it):
// ties spread over nodes instead of all going to the lowest rank, and need no re-election.
int encode(int key, Tier tier, bool fallback) {
  return (key * kTierCount + static_cast<int>(tier)) * 2 + (fallback ? 1 : 0);
}
int key_of(int position, int partition, int size) { return ((position - partition) % size + size) % size; }

}  // namespace

std::optional<Tier> forced_tier_from_environment() {
  const char* v = std::getenv("STRATA_AGGR_TIER");
  if (v == nullptr || *v == '\0') return std::nullopt;
  auto t = parse_tier(v);
  if (!t) throw_usage(std::string("STRATA_AGGR_TIER=") + v + " is not a tier (hbm, dram, tmpfs or nvr)");
  return t;
}

Placement place_aggregators(MPI_Comm comm, const PlacementInput& in) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Plan& plan = *in.plan;
  const int parts = plan.partitions();
  const std::vector<int>& node_of = *in.node_of_rank;
  int nodes = 0;
  for (int n : node_of) nodes = std::max(nodes, n + 1);
  const int my_node = node_of[static_cast<size_t>(rank)];
  const std::vector<int> order = spread_order(node_of);
  int position = 0;
  while (order[static_cast<size_t>(position)] != rank) ++position;
  in.machine->check_covers(nodes);  // the same verdict on every rank
  Placement out;
  out.partitions.resize(static_cast<size_t>(parts));
  if (parts == 0) return out;

  // Every partition's load by node: bytes and producers (one allreduce).
  std::vector<unsigned long long> load(static_cast<size_t>(parts) * static_cast<size_t>(nodes) * 2, 0),
      sum(load.size());
  for (int p = 0; p < parts; ++p) {
    const uint64_t b = in.my_bytes[static_cast<size_t>(p)];
    if (b == 0) continue;
    const size_t at = (static_cast<size_t>(p) * static_cast<size_t>(nodes) + static_cast<size_t>(my_node)) * 2;
    load[at] += b;
    load[at + 1] += 1;
  }
  MPI_Allreduce(load.data(), sum.data(), static_cast<int>(load.size()), MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);

  // This rank's candidates: each tier its node has, that the machine describes (and the forced one only).
  std::vector<Tier> tiers;
  for (const auto& t : *in.local_tiers) {
    if (in.machine->tier(t->tier()) == nullptr || !t->available()) continue;
    if (in.forced && t->tier() != *in.forced) continue;
    tiers.push_back(t->tier());
  }
  const uint64_t need = plan.buffer_bytes * static_cast<uint64_t>(plan.buffers);
  std::vector<DoubleInt> best(static_cast<size_t>(parts));
  for (int p = 0; p < parts; ++p)
    best[static_cast<size_t>(p)] = {kInfinite, encode(key_of(position, p, size), Tier::dram, false)};
  std::vector<CandidateRow> rows;
  for (int p = 0; p < parts; ++p) {
    CostInput ci;
    ci.machine = in.machine;
    ci.buffer_need = need;
    ci.persistent = in.persistent;
    for (int n = 0; n < nodes; ++n) {
      const size_t at = (static_cast<size_t>(p) * static_cast<size_t>(nodes) + static_cast<size_t>(n)) * 2;
      if (sum[at] > 0) ci.loads.push_back({n, sum[at], sum[at + 1]});
    }
    double cheapest_any = kInfinite;  // ignoring capacity: to tell a fallback
    Tier cheapest_tier = Tier::dram;
    for (Tier t : tiers) {
      const Cost c = score(ci, my_node, t);
      if (in.want_table) rows.push_back({p, rank, my_node, t, c.c1, c.c2, c.filtered});
      if (c.filtered != Filter::capacity && c.filtered != Filter::persistency) {
        if (c.total() < best[static_cast<size_t>(p)].value) {
          best[static_cast<size_t>(p)] = {c.total(), encode(key_of(position, p, size), t, false)};
        }
      }
      if (c.filtered != Filter::persistency && c.total() < cheapest_any) {
        cheapest_any = c.total();
        cheapest_tier = t;
      }
    }
    DoubleInt& b = best[static_cast<size_t>(p)];
    if (b.value < kInfinite) {
      const Tier chosen = static_cast<Tier>((b.index / 2) % kTierCount);
      b.index = encode(key_of(position, p, size), chosen, chosen != cheapest_tier);
    }
  }

  // Elections until every partition has its own aggregator.
  std::vector<char> assigned_rank(static_cast<size_t>(size), 0), done(static_cast<size_t>(parts), 0);
  int remaining = parts;
  while (remaining > 0) {
    ++out.election_rounds;
    std::vector<DoubleInt> bid(static_cast<size_t>(parts)), won(static_cast<size_t>(parts));
    for (int p = 0; p < parts; ++p) {
      const bool open = done[static_cast<size_t>(p)] == 0 && assigned_rank[static_cast<size_t>(rank)] == 0;
      bid[static_cast<size_t>(p)] =
          open ? best[static_cast<size_t>(p)] : DoubleInt{kInfinite, best[static_cast<size_t>(p)].index};
    }
    MPI_Allreduce(bid.data(), won.data(), parts, MPI_DOUBLE_INT, MPI_MINLOC, comm);
    for (int p = 0; p < parts; ++p) {
      if (done[static_cast<size_t>(p)] != 0) continue;
      const DoubleInt& w = won[static_cast<size_t>(p)];
      if (w.value >= kInfinite) {
        std::string why = in.forced ? std::string("the forced tier ") + tier_name(*in.forced) +
                                          " (strata_aggr_tier or STRATA_AGGR_TIER)"
                                    : std::string(in.persistent ? "a job-lifetime tier" : "a tier");
        throw_usage(
            "partition " + std::to_string(p) + " has no possible aggregator: no free rank's node has " + why +
            " available with room for " +
            (in.persistent ? "the partition's data"
                           : std::to_string(plan.buffers) + " x " + format_size(plan.buffer_bytes) + " buffers") +
            " (`strata info --tiers` lists each tier, or why it is absent; lower cb_buffer_size or strata_buffers, "
            "or raise STRATA_TIER_CAPACITY)");
      }
      const int winner = order[static_cast<size_t>((w.index / 2 / kTierCount + p) % size)];
      if (assigned_rank[static_cast<size_t>(winner)] != 0) continue;  // won an earlier partition this round
      assigned_rank[static_cast<size_t>(winner)] = 1;
      done[static_cast<size_t>(p)] = 1;
      --remaining;
      Elected& e = out.partitions[static_cast<size_t>(p)];
      e.aggregator = winner;
      e.tier = static_cast<Tier>((w.index / 2) % kTierCount);
      e.cost = w.value;
      e.fallback = (w.index % 2) != 0;
      if (e.fallback) ++out.fallbacks;
    }
  }

  if (in.want_table) {  // every candidate's row, on rank 0
    std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    const int mine = static_cast<int>(rows.size() * sizeof(CandidateRow));
    MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
    int total = 0;
    for (int r = 0; r < size && rank == 0; ++r) {
      displs[static_cast<size_t>(r)] = total;
      total += counts[static_cast<size_t>(r)];
    }
    if (rank == 0) out.table.resize(static_cast<size_t>(total) / sizeof(CandidateRow));
    MPI_Gatherv(rows.data(), mine, MPI_BYTE, out.table.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  }
  return out;
}

}  // namespace strata::engine
