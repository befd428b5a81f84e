"""test_drain.py's Python case: three drained writes of one output through one engine (each waits
for the previous drain before it replaces the node-local copy; the third writes into the old
target file the second drain kept, and rank 0 declares nothing in it: its rows must read as
zeros, not as the old file's bytes), both moments from wait_drain(), then a read with the drain
hint, which reads the target."""

import sys

import numpy as np
import strata
from mpi4py import MPI

comm = MPI.COMM_WORLD
out, target = sys.argv[1], sys.argv[2]
t = np.zeros((4, 8), dtype=np.float64)
with strata.Engine(comm) as engine:
    for step in range(3):
        t[:] = comm.rank + 10 * step + 1
        with strata.Phase(engine, out, "w", hints={"strata_drain": target}) as phase:
            v = phase.define_variable("t", (4 * comm.size, 8), np.float64)
            if step < 2 or comm.rank != 0:
                phase.add_subarray(v, (4 * comm.rank, 0), t)
            phase.write()
            phase.close()
            d = phase.wait_drain()
        assert d["drained"] and d["target"] == target and 0 < d["return_s"] <= d["durable_s"], d
    back = np.full((4, 8), -1.0)
    with strata.Phase(engine, out, "r", hints={"strata_drain": target}) as phase:
        v = phase.define_variable("t", (4 * comm.size, 8), np.float64)
        phase.add_subarray(v, (4 * comm.rank, 0), back)
        phase.read()
    assert (back == (0 if comm.rank == 0 else comm.rank + 21)).all(), back
