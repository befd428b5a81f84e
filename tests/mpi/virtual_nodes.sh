#!/usr/bin/env bash
# The node count reported by `strata info` and `strata run` follows the virtual node map.
# usage: virtual_nodes.sh MPIEXEC STRATA DIR
set -euo pipefail
mpiexec=$1 strata=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d$2)" "$1"; }

STRATA_RANKS_PER_NODE=2 timeout 60 "$mpiexec" -x STRATA_RANKS_PER_NODE -n 6 --oversubscribe "$strata" info "$dir" --json "$dir/info6.json" >/dev/null
[ "$(field "$dir/info6.json" "['nodes']")" = 3 ] || { echo "FAIL: 6 ranks with 2 per node should be 3 nodes"; exit 1; }
[ "$(field "$dir/info6.json" "['node_map']['virtual']")" = True ] || { echo "FAIL: map not marked virtual"; exit 1; }

STRATA_NODE_MAP=0,0,0,1,2,2,2 timeout 60 "$mpiexec" -x STRATA_NODE_MAP -n 7 --oversubscribe "$strata" run array1d --size 4K \
  --backend mpiio-coll --verify --quiet --output "$dir/a" --json "$dir/run7.json"
[ "$(field "$dir/run7.json" "['nodes']")" = 3 ] || { echo "FAIL: uneven map should be 3 nodes"; exit 1; }
[ "$(field "$dir/run7.json" "['node_map']['node_of_rank']")" = "[0, 0, 0, 1, 2, 2, 2]" ] || { echo "FAIL: node_of_rank"; exit 1; }

timeout 60 "$mpiexec" -n 4 --oversubscribe "$strata" info "$dir" --json "$dir/info4.json" >/dev/null
[ "$(field "$dir/info4.json" "['nodes']")" = 1 ] || { echo "FAIL: one real node expected"; exit 1; }
[ "$(field "$dir/info4.json" "['node_map']['virtual']")" = False ] || { echo "FAIL: real map marked virtual"; exit 1; }
echo "ok"
rm -rf "$dir"
