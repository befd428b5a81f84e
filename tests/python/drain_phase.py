"""test_drain.py's Python case: two drained writes of one output through one engine (the second
waits for the first's drain before it replaces the node-local copy), both moments from
wait_drain(), then a read with the drain hint, which reads the target."""

import sys

import numpy as np
import strata
from mpi4py import MPI

comm = MPI.COMM_WORLD
out, target = sys.argv[1], sys.argv[2]
t = np.zeros((4, 8), dtype=np.float64)
with strata.Engine(comm) as engine:
    for step in range(2):
        t[:] = comm.rank + 10 * step
        with strata.Phase(engine, out, "w", hints={"strata_drain": target}) as phase:
            v = phase.define_variable("t", (4 * comm.size, 8), np.float64)
            phase.add_subarray(v, (4 * comm.rank, 0), t)
            phase.write()
            phase.close()
            d = phase.wait_drain()
        assert d["drained"] and d["target"] == target and 0 < d["return_s"] <= d["durable_s"], d
        assert d["bytes"] == t.nbytes * comm.size, d
    back = np.zeros((4, 8))
    with strata.Phase(engine, out, "r", hints={"strata_drain": target}) as phase:
        v = phase.define_variable("t", (4 * comm.size, 8), np.float64)
        phase.add_subarray(v, (4 * comm.rank, 0), back)
        phase.read()
    assert (back == comm.rank + 10).all(), back
