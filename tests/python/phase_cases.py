"""Cases of the Python binding (strata.Phase), run under mpirun by test_python_binding.py. Each
rank writes its outcomes to OUTCOMES/rank<r>.json, one per case: "RAISED <status> <kind>
<message>" for a case that must fail on every rank, "OK <json>" for one that must work. The
cases write their files in DIR.

    mpirun -np 3 python tests/python/phase_cases.py errors DIR OUTCOMES
    mpirun -np 4 python tests/python/phase_cases.py api DIR OUTCOMES
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import strata
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size


outcomes: dict[str, str] = {}


def report(name: str, fn: Callable[[], object]) -> None:
    try:
        result = fn()
    except strata.Error as e:
        outcomes[name] = f"RAISED {e.status} {e.kind} {e}"
    else:
        outcomes[name] = f"OK {json.dumps(result)}"
    comm.Barrier()


def write_rows(
    engine: strata.Engine, path: Path, rows: np.ndarray, first_row: int, shape: tuple[int, int], container: str = "raw"
) -> dict:
    with strata.Phase(engine, str(path), "w", container=container) as phase:
        phase.add_subarray(phase.define_variable("v", shape, rows.dtype), (first_row, 0), rows)
        phase.write()
        return phase.close()


def errors(folder: Path) -> None:
    """Bad declarations: each raises strata.Error on every rank and leaves no file behind."""
    engine = strata.Engine(comm)
    shape = (size * 2, 5)
    rows = np.full((2, 5), rank, dtype=np.float64)

    def past_the_end() -> object:  # the last rank's block reaches past the variable
        first = rank * 2 + (1 if rank == size - 1 else 0)
        return write_rows(engine, folder / "past.dat", rows, first, shape)

    def wrong_dtype() -> object:  # rank 0 hands float32 values to a float64 variable
        values = rows.astype(np.float32) if rank == 0 else rows
        with strata.Phase(engine, str(folder / "dtype.dat"), "w") as phase:
            phase.add_subarray(phase.define_variable("v", shape, np.float64), (rank * 2, 0), values)
            phase.plan()
            return phase.close()

    def scattered_hdf5() -> object:  # rank 0's array is a strided view of a strided view: no even spacing
        values = np.zeros((4, 10))[::2, ::2] if rank == 0 else rows
        return write_rows(engine, folder / "scattered.h5", values, rank * 2, shape, container="hdf5")

    def overlap_hdf5() -> object:  # every rank writes rows 0-1: only the engine's plan sees it, after HDF5
        return write_rows(engine, folder / "overlap.h5", rows, 0, shape, container="hdf5")

    def read_only() -> object:  # a read phase must write into its arrays
        good = write_rows(engine, folder / "ro.dat", rows, rank * 2, shape)
        target = np.zeros_like(rows)
        target.flags.writeable = False
        with strata.Phase(engine, str(folder / "ro.dat"), "r") as phase:
            phase.add_subarray(phase.define_variable("v", shape, np.float64), (rank * 2, 0), target)
            phase.read()
        return good["bytes"]

    def byte_order() -> object:  # arrays are taken as they are: only in native byte order
        with strata.Phase(engine, str(folder / "order.dat"), "w") as phase:
            phase.add_subarray(phase.define_variable("v", shape, ">f8"), (rank * 2, 0), rows.astype(">f8"))
            phase.write()
            return phase.close()

    def bad_hint() -> object:  # the engine's hints, passed through as a dict
        with strata.Phase(engine, str(folder / "hint.dat"), "w", hints={"strata_fsync": "maybe"}) as phase:
            phase.add_subarray(phase.define_variable("v", shape, np.float64), (rank * 2, 0), rows)
            phase.write()
            return phase.close()

    for name, fn in [
        ("past_the_end", past_the_end),
        ("wrong_dtype", wrong_dtype),
        ("byte_order", byte_order),
        ("bad_hint", bad_hint),
        ("scattered_hdf5", scattered_hdf5),
        ("overlap_hdf5", overlap_hdf5),
        ("read_only", read_only),
    ]:
        report(name, fn)
    engine.close()


def api(folder: Path) -> None:
    """What works: statistics, extents, strided memory, another decomposition on read."""
    n = 1000
    mine = np.arange(rank * n, (rank + 1) * n, dtype=np.int64)

    def statistics() -> object:
        with strata.Engine(comm) as engine:
            hints = {"strata_buffers": 3, "strata_fsync": True}  # numbers and booleans, as the engine spells them
            with strata.Phase(engine, str(folder / "ints.dat"), "w", hints=hints) as phase:
                v = phase.define_variable("i", (size * n,), np.int64)
                phase.add_extent(v, rank * n * 8, mine)
                phase.plan()
                phase.write()
                stats = phase.close()
            return {
                "bytes": stats["bytes"],
                "local": stats["local"]["bytes"],
                "buffers": stats["buffers"],
                "executions": engine.executions,
                "strategy": stats["strategy"],
            }

    def records() -> object:
        # An array of structures: each rank's records (id int64, x float64); x alone is strided
        # memory, written as the second variable after the ids.
        def move(mode: str, rec: np.ndarray, first: int) -> None:
            with strata.Phase(comm, str(folder / "rec.dat"), mode) as phase:
                ids = phase.define_variable("id", (size * n,), np.int64)
                xs = phase.define_variable("x", (size * n,), np.float64)
                phase.add_subarray(ids, (first,), rec["id"])
                phase.add_subarray(xs, (first,), rec["x"])
                if mode == "w":
                    phase.write()
                else:
                    phase.read()

        rec = np.zeros(n, dtype=[("id", np.int64), ("x", np.float64)])
        rec["id"] = mine
        rec["x"] = mine * 0.5
        move("w", rec, rank * n)
        # Read back by another decomposition: rank r reads the block of rank size-1-r.
        other = size - 1 - rank
        back = np.zeros_like(rec)
        move("r", back, other * n)
        want = np.arange(other * n, (other + 1) * n)
        return bool(np.array_equal(back["id"], want) and np.array_equal(back["x"], want * 0.5))

    report("statistics", statistics)
    report("records", records)


if __name__ == "__main__":
    {"errors": errors, "api": api}[sys.argv[1]](Path(sys.argv[2]))
    (Path(sys.argv[3]) / f"rank{rank}.json").write_text(json.dumps(outcomes))
