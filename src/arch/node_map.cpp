#include "arch/node_map.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "common/error.hpp"
#include "common/units.hpp"

namespace strata {

namespace {

std::vector<int> densify(const std::vector<long>& ids) {
  std::vector<long> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<int> out(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    out[i] = static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), ids[i]) - sorted.begin());
  }
  return out;
}

}  // namespace

std::vector<int> parse_ranks_per_node(const std::string& text, int ranks) {
  uint64_t k = 0;
  try {
    k = parse_count(text, "STRATA_RANKS_PER_NODE");
  } catch (const Error& e) {
    throw_usage(std::string(e.what()) + " (a whole number of ranks per virtual node, at least 1)");
  }
  if (k < 1) throw_usage("STRATA_RANKS_PER_NODE must be at least 1 (got \"" + text + "\")");
  std::vector<long> ids(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) ids[static_cast<size_t>(r)] = static_cast<long>(static_cast<uint64_t>(r) / k);
  return densify(ids);
}

std::vector<int> parse_node_map(const std::string& text, int ranks) {
  std::vector<long> ids;
  std::stringstream ss(text);
  std::string item;
  int position = 0;
  while (std::getline(ss, item, ',')) {
    std::string where = "STRATA_NODE_MAP entry " + std::to_string(position) + " (\"" + item + "\")";
    if (!item.empty() && item[0] == '-') throw_usage(where + " is negative; node ids are 0, 1, 2, ...");
    uint64_t v = 0;
    try {
      v = parse_count(item, where);
    } catch (const Error&) {
      throw_usage(where + " is not a node id; give one non-negative integer per rank, comma-separated");
    }
    ids.push_back(static_cast<long>(v));
    ++position;
  }
  if (!text.empty() && text.back() == ',') throw_usage("STRATA_NODE_MAP ends with a comma");
  if (static_cast<int>(ids.size()) != ranks) {
    throw_usage("STRATA_NODE_MAP names " + std::to_string(ids.size()) + " ranks but the job has " +
                std::to_string(ranks) + " (give one node id per rank)");
  }
  return densify(ids);
}

NodeMap node_map(MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  NodeMap map;
  const char* per_node = std::getenv("STRATA_RANKS_PER_NODE");
  const char* explicit_map = std::getenv("STRATA_NODE_MAP");
  collectively(comm, [&] {
    if (per_node != nullptr && explicit_map != nullptr) {
      throw_usage("set only one of STRATA_RANKS_PER_NODE and STRATA_NODE_MAP");
    }
    if (explicit_map != nullptr) {
      map.node_of_rank = parse_node_map(explicit_map, size);
      map.source = "STRATA_NODE_MAP";
      map.is_virtual = true;
    } else if (per_node != nullptr) {
      map.node_of_rank = parse_ranks_per_node(per_node, size);
      map.source = std::string("STRATA_RANKS_PER_NODE=") + per_node;
      map.is_virtual = true;
    }
  });
  if (map.is_virtual) {
    map.node = map.node_of_rank[static_cast<size_t>(rank)];
    check_mpi(MPI_Comm_split(comm, map.node, rank, map.node_comm.out()), "MPI_Comm_split (virtual nodes)");
  } else {
    map.source = "shared memory";
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, map.node_comm.out()),
              "MPI_Comm_split_type");
    // A node is named by its lowest rank; dense ids follow the order of those leaders. The
    // split kept the order of `comm` (key = rank), so the node's rank 0 is its leader: its rank
    // in `comm` is a local translation, not a collective.
    int leader = rank, first = 0;
    MPI_Group node_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
    MPI_Comm_group(map.node_comm.get(), &node_group);
    MPI_Comm_group(comm, &group);
    MPI_Group_translate_ranks(node_group, 1, &first, group, &leader);
    MPI_Group_free(&node_group);
    MPI_Group_free(&group);
    std::vector<int> leaders(static_cast<size_t>(size));
    MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm);
    std::vector<long> ids(leaders.begin(), leaders.end());
    map.node_of_rank = densify(ids);
    map.node = map.node_of_rank[static_cast<size_t>(rank)];
  }
  MPI_Comm_rank(map.node_comm.get(), &map.local_rank);
  MPI_Comm_size(map.node_comm.get(), &map.local_size);
  map.node_count = 1 + *std::max_element(map.node_of_rank.begin(), map.node_of_rank.end());
  return map;
}

}  // namespace strata
