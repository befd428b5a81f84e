// Node-local storage: each node's own directory ROOT/<node>/. With virtual nodes every virtual
// node gets its own directory, so code that keeps data per node is exercised with several nodes
// on one machine.
//
// The root is STRATA_LOCAL_DIR when set; else a folder of this user's own, strata-<uid>, in the
// batch system's node-local scratch (SLURM_TMPDIR, TMPDIR) or in /tmp. No other user can steer
// where the data goes: the root and every node directory are created with mode 0700, and one
// that is a symbolic link, is not a directory, or belongs to another user is refused with an
// error naming it (before any byte is written).
#pragma once

#include <string>

#include "arch/node_map.hpp"

namespace strata {

// The root (not created): STRATA_LOCAL_DIR, or <SLURM_TMPDIR|TMPDIR|/tmp>/strata-<uid>.
std::string node_local_root();
// The directory of `node` under the root, created (with the root) if missing, mode 0700, and
// checked: a real directory, not a symbolic link, owned by this user. Throws a runtime Error
// naming the path and the fix otherwise.
std::string node_local_dir(int node);
// The same checks for a directory that exists (or creates it when `create`): used for the root
// and the node directories. Throws as node_local_dir does.
void check_private_directory(const std::string& dir, bool create);

}  // namespace strata
