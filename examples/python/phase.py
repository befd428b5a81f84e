"""Two fields of a 3-D grid over a process grid, written in one Strata phase, read back and
checked: the Python twin of docs/examples/field3d.cpp, whose file this one equals byte for byte.

    temperature[z, y, x] (float64) = 0.5 * (its linear index)
    pressure[z, y, x]    (float32) = (its linear index) % 1000 + 0.25

The grid (--shape, slowest first) is split block-wise over the process grid MPI.Compute_dims
chooses (ranks in row-major order). With --container hdf5 the file is an HDF5 file of two
datasets, which rank 0 also reads back with h5py.

    mpirun -np 3 .venv/bin/python examples/python/phase.py out.dat
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import strata
from mpi4py import MPI


def block(shape: tuple[int, ...], comm: MPI.Comm) -> tuple[list[int], list[int]]:
    """This rank's (start, count): its coordinates in the process grid, an even split of each axis."""
    dims = MPI.Compute_dims(comm.size, len(shape))
    coord, rest = [], comm.rank
    for d in reversed(dims):
        coord.insert(0, rest % d)
        rest //= d
    start = [n * c // d for n, c, d in zip(shape, coord, dims, strict=True)]
    stop = [n * (c + 1) // d for n, c, d in zip(shape, coord, dims, strict=True)]
    return start, [b - a for a, b in zip(start, stop, strict=True)]


def fields(shape: tuple[int, ...], start: list[int], count: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The block's temperature and pressure values."""
    index = np.ravel_multi_index(np.indices(count).reshape(len(shape), -1) + np.array(start)[:, None], shape)
    index = index.reshape(count)
    return 0.5 * index.astype(np.float64), (index % 1000).astype(np.float32) + np.float32(0.25)


def declare(phase: strata.Phase, shape: tuple[int, ...], start: list[int], t: np.ndarray, p: np.ndarray) -> None:
    phase.add_subarray(phase.define_variable("temperature", shape, np.float64), start, t)
    phase.add_subarray(phase.define_variable("pressure", shape, np.float32), start, p)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", help="the file to write (and read back)")
    parser.add_argument("--shape", default="20x12x10", help="global grid, slowest first (default 20x12x10)")
    parser.add_argument("--container", choices=["raw", "hdf5"], default="raw")
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD
    shape = tuple(int(n) for n in args.shape.split("x"))
    start, count = block(shape, comm)
    t, p = fields(shape, start, count)

    with strata.Engine(comm) as engine:
        with strata.Phase(engine, args.output, "w", container=args.container) as phase:
            declare(phase, shape, start, t, p)
            phase.plan()
            phase.write()
            stats = phase.close()
        if comm.rank == 0:
            print(
                f"wrote {stats['bytes']} bytes of a {args.shape} grid on {comm.size} rank(s), "
                f"strategy {stats['strategy']}"
            )
        t_back, p_back = np.zeros_like(t), np.zeros_like(p)
        with strata.Phase(engine, args.output, "r", container=args.container) as phase:
            declare(phase, shape, start, t_back, p_back)
            phase.read()
    ok = comm.allreduce(np.array_equal(t, t_back) and np.array_equal(p, p_back), op=MPI.LAND)
    if ok and args.container == "hdf5" and comm.rank == 0:
        import h5py

        with h5py.File(args.output, "r") as f:
            every = dict(zip(["temperature", "pressure"], fields(shape, [0] * len(shape), list(shape)), strict=True))
            ok = all(np.array_equal(f[name][...], values) for name, values in every.items())
    ok = comm.bcast(ok, root=0)
    if comm.rank == 0:
        print(
            "read back and checked" + (", and with h5py" if args.container == "hdf5" else "")
            if ok
            else "read back: WRONG values"
        )
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
