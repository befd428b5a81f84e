// Node-local storage: each node's own directory STRATA_LOCAL_DIR/<node>/ (default root
// /tmp/strata-local). With virtual nodes every virtual node gets its own directory, so code that
// keeps data per node is exercised with several nodes on one machine.
#pragma once

#include <string>

#include "arch/node_map.hpp"

namespace strata {

// The root: STRATA_LOCAL_DIR, or /tmp/strata-local.
std::string node_local_root();
// The directory of `node` under the root, created if missing. Throws a runtime Error naming the
// path when it cannot be created.
std::string node_local_dir(int node);

}  // namespace strata
