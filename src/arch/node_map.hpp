// Which node is each rank on, and who shares it: the one place in Strata that answers this.
//
// Normally nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). For honest tests of
// node-aware behaviour on one machine, STRATA_RANKS_PER_NODE=k groups consecutive ranks into
// virtual nodes of k, and STRATA_NODE_MAP=0,0,1,1,2,... gives each rank's node explicitly.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "common/mpi_handles.hpp"

namespace strata {

struct NodeMap {
  int node = 0;  // this rank's node, 0..node_count-1
  int node_count = 1;
  int local_rank = 0;  // rank within the node
  int local_size = 1;
  bool is_virtual = false;
  std::string source;             // "shared memory", "STRATA_RANKS_PER_NODE=2", "STRATA_NODE_MAP"
  std::vector<int> node_of_rank;  // every rank's node, indexed by rank in the communicator
  Comm node_comm;                 // the ranks on this rank's node
};

// Collective over `comm`. Throws a usage Error (on every rank) for a bad environment map.
NodeMap node_map(MPI_Comm comm);

// Pure parsers, exposed for unit tests. Both return dense node ids (0..n-1, ordered by the
// ids given) for `ranks` ranks and throw a usage Error naming the variable on bad input.
std::vector<int> parse_ranks_per_node(const std::string& text, int ranks);
std::vector<int> parse_node_map(const std::string& text, int ranks);

}  // namespace strata
