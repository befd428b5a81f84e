#include "engine/move/packing.hpp"

#include <cmath>

#include "common/error.hpp"

namespace strata::engine {

uint64_t pack_threshold(const IoFigures& f) {
  if (f.put_run_s >= f.put_latency_s) return 0;  // a datatype entry costs a put: never pack
  return static_cast<uint64_t>(std::floor(f.put_latency_s / (f.put_latency_s - f.put_run_s))) + 1;
}

namespace {

MPI_Datatype hindexed(const std::vector<int>& lengths, const std::vector<MPI_Aint>& displacements) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  check_mpi(
      MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displacements.data(), MPI_BYTE, &t),
      "MPI_Type_create_hindexed");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

}  // namespace

PackedTransfers::PackedTransfers(std::vector<std::vector<Transfer>> by_round, uint64_t pack_from)
    : transfers_(std::move(by_round)), groups_(transfers_.size()) {
  for (size_t g = 0; g < transfers_.size(); ++g) {
    const auto& xs = transfers_[g];
    for (size_t i = 0; i < xs.size();) {
      size_t j = i + 1;
      while (j < xs.size() && xs[j].target == xs[i].target) ++j;
      PutGroup group;
      group.target = xs[i].target;
      group.displacement = xs[i].displacement;
      group.stream_offset = xs[i].stream_offset;
      group.first = i;
      group.count = j - i;
      bool contiguous_origin = true;
      for (size_t k = i; k < j; ++k) {
        group.bytes += xs[k].length;
        if (k > i && xs[k].stream_offset != xs[k - 1].stream_offset + xs[k - 1].length) contiguous_origin = false;
      }
      if (pack_from > 0 && group.count >= pack_from && group.count > 1) {
        std::vector<int> lengths;
        std::vector<MPI_Aint> target_at, origin_at;
        lengths.reserve(j - i);
        target_at.reserve(j - i);
        origin_at.reserve(j - i);
        for (size_t k = i; k < j; ++k) {
          lengths.push_back(static_cast<int>(xs[k].length));
          target_at.push_back(static_cast<MPI_Aint>(xs[k].displacement - group.displacement));
          origin_at.push_back(static_cast<MPI_Aint>(xs[k].stream_offset - group.stream_offset));
        }
        group.target_type = hindexed(lengths, target_at);
        if (!contiguous_origin) group.origin_type = hindexed(lengths, origin_at);
        ++operations_;
      } else {
        operations_ += group.count;
      }
      groups_[g].push_back(group);
      i = j;
    }
  }
}

PackedTransfers::~PackedTransfers() { release(); }

PackedTransfers::PackedTransfers(PackedTransfers&& o) noexcept
    : transfers_(std::move(o.transfers_)), groups_(std::move(o.groups_)), operations_(o.operations_) {
  o.groups_.clear();
}

PackedTransfers& PackedTransfers::operator=(PackedTransfers&& o) noexcept {
  if (this != &o) {
    release();
    transfers_ = std::move(o.transfers_);
    groups_ = std::move(o.groups_);
    operations_ = o.operations_;
    o.groups_.clear();
  }
  return *this;
}

void PackedTransfers::release() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (auto& round : groups_) {
    for (PutGroup& g : round) {
      for (MPI_Datatype* t : {&g.target_type, &g.origin_type}) {
        if (*t != MPI_DATATYPE_NULL && !finalized) MPI_Type_free(t);
        *t = MPI_DATATYPE_NULL;
      }
    }
  }
  groups_.clear();
}

namespace {

template <class Op>
void each_operation(const PackedTransfers& t, uint64_t round, std::byte* stream, Op&& op) {
  const auto& xs = t.transfers()[round];
  for (const PutGroup& g : t.groups(round)) {
    if (g.target_type == MPI_DATATYPE_NULL) {
      for (size_t k = g.first; k < g.first + g.count; ++k) {
        const Transfer& x = xs[k];
        op(stream + x.stream_offset, static_cast<int>(x.length), MPI_BYTE, x.target, x.displacement,
           static_cast<int>(x.length), MPI_BYTE);
      }
    } else if (g.origin_type == MPI_DATATYPE_NULL) {
      op(stream + g.stream_offset, static_cast<int>(g.bytes), MPI_BYTE, g.target, g.displacement, 1, g.target_type);
    } else {
      op(stream + g.stream_offset, 1, g.origin_type, g.target, g.displacement, 1, g.target_type);
    }
  }
}

}  // namespace

void put_round(const PackedTransfers& t, uint64_t round, std::byte* stream, MPI_Win window) {
  each_operation(t, round, stream,
                 [&](std::byte* origin, int ocount, MPI_Datatype otype, int target, uint64_t disp, int tcount,
                     MPI_Datatype ttype) {
                   check_mpi(MPI_Put(origin, ocount, otype, target, static_cast<MPI_Aint>(disp), tcount, ttype, window),
                             "MPI_Put");
                 });
}

void get_round(const PackedTransfers& t, uint64_t round, std::byte* stream, MPI_Win window) {
  each_operation(t, round, stream,
                 [&](std::byte* origin, int ocount, MPI_Datatype otype, int target, uint64_t disp, int tcount,
                     MPI_Datatype ttype) {
                   check_mpi(MPI_Get(origin, ocount, otype, target, static_cast<MPI_Aint>(disp), tcount, ttype, window),
                             "MPI_Get");
                 });
}

}  // namespace strata::engine
