#!/usr/bin/env python3
"""Burst-buffer writes (hint strata_drain, docs/drain.md) against writing the target directly, in one
MPI job, interleaved repetition by repetition: node-local storage is a tmpfs (/dev/shm), the target a
file on the disk. Each rank writes --mib MiB of one shared output through the engine (the Python
binding), the ranks as virtual nodes of --ranks-per-node (one aggregator and one drain thread each).

  direct         the target written with strata_fsync=true: the application goes on when the data is
                 durable (return = durable)
  drain          strata_drain=TARGET: close() returns once the data is on node-local storage; the
                 drain copies it to the target (fsync, commit) behind; waited for at once
  drain+compute  the same, then --compute-s of numpy work (calibrated alone) before the wait: the
                 computation's slowdown while the drain runs behind it (against compute alone)

Times are from the phase's plan to close() returning (return) and to the target committed and synced
(durable), the slowest rank's; fsync included in both baselines; every output is checked by
`strata verify` (checksums of every written range) after the last repetition. Medians of >= 5
repetitions; ratios to direct (and to compute alone). Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STRATA = ROOT / "build" / "bin" / "strata"
PYTHON = ROOT / ".venv" / "bin" / "python"


def compute(units: int) -> float:
    """A fixed amount of numpy work (matrix products); its duration."""
    import numpy as np

    a = np.random.default_rng(0).random((256, 256))
    t0 = time.perf_counter()
    for _ in range(units):
        a = (a @ a) / 256.0
    return time.perf_counter() - t0


def worker(args: argparse.Namespace) -> None:
    import numpy as np
    import strata
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    try:
        run_worker(args, comm, np, strata, MPI)
    except BaseException:
        import traceback

        traceback.print_exc()
        comm.Abort(1)  # never leave the other ranks waiting


def run_worker(args: argparse.Namespace, comm, np, strata, MPI) -> None:  # noqa: ANN001
    n = args.mib * (1 << 20) // 8
    data = np.arange(n, dtype=np.float64) + comm.rank * n
    # Each way writes its own output again and again (an application's steady state: the engine
    # writes over the previous version's file, kept aside by the last commit, in both).
    direct = str(args.dir / "direct.dat")
    target = str(args.dir / "target.dat")
    staged = str(args.dir / "staged.dat")
    # Calibrate the computation alone: units for about --compute-s seconds.
    units = 1
    while compute(units) < args.compute_s / 4:
        units *= 2
    units = comm.bcast(int(units * args.compute_s / max(compute(units), 1e-6)), root=0)
    rows: list[dict] = []

    def write(engine: strata.Engine, path: str, hints: dict, after=None) -> dict:
        comm.Barrier()
        t0 = time.perf_counter()
        with strata.Phase(engine, path, "w", hints=hints) as phase:
            v = phase.define_variable("x", (n * comm.size,), np.float64)
            phase.add_subarray(v, (n * comm.rank,), data)
            phase.write()
            stats = phase.close()
            returned = time.perf_counter() - t0
            computed = after() if after else 0.0
            d = phase.wait_drain()
        durable = time.perf_counter() - t0
        values = np.array([returned, durable, computed, d.get("copy_s", 0.0) if d["drained"] else 0.0])
        comm.Allreduce(MPI.IN_PLACE, values, op=MPI.MAX)
        if d["drained"]:  # the engine's own clocks: from plan() on (the write began right before)
            values[0], values[1] = d["return_s"], d["durable_s"]
        out = {"return_s": float(values[0]), "durable_s": float(values[1]), "compute_s": float(values[2])}
        # The profile: the phase's own steps (slowest rank) and, for a drain, its copy.
        out.update({k: float(stats[k]) for k in ("plan_s", "execute_s", "close_s")})
        out["strategy"] = stats.get("strategy", "")
        if d["drained"]:
            out["copy_s"] = float(values[3])
        return out

    with strata.Engine(comm) as engine:
        for rep in range(args.repetitions + 1):  # the first is a warm-up, not kept
            results = {
                "direct": write(engine, direct, {"strata_fsync": True}),
                "drain": write(engine, staged, {"strata_drain": target}),
                "compute alone": {"compute_s": comm.allreduce(compute(units), op=MPI.MAX)},
                "drain+compute": write(engine, staged, {"strata_drain": target}, lambda: compute(units)),
            }
            if rep > 0:
                rows.append(results)
            if comm.rank == 0:  # progress: a repetition takes a second or two
                what = "warm-up" if rep == 0 else f"repetition {rep}/{args.repetitions}"
                print(f"drain benchmark: {what} done", file=sys.stderr, flush=True)
    if comm.rank == 0:
        args.result.write_text(json.dumps({"rows": rows, "units": units}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--ranks-per-node", type=int, default=1)
    parser.add_argument("--mib", type=int, default=128, help="MiB per rank")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--compute-s", type=float, default=1.0, help="the computation after the write, seconds")
    parser.add_argument("--dir", type=Path, help="the target's folder, on disk (default: in --output)")
    parser.add_argument("--local", type=Path, default=Path("/dev/shm"), help="node-local storage (a tmpfs)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output", help="folder for the table and JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.repetitions < 5:
        parser.error("--repetitions must be at least 5")
    args.output.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="drain-bench.", dir=args.dir or args.output))
    local_dir = Path(tempfile.mkdtemp(prefix="drain-bench.", dir=args.local))
    result = data_dir / "result.json"
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        STRATA_RANKS_PER_NODE=str(args.ranks_per_node),
        STRATA_LOCAL_DIR=str(local_dir),
    )
    cmd = [shutil.which("mpirun") or "mpirun", "-np", str(args.ranks), "--oversubscribe"]
    cmd += [x for k in ("STRATA_RANKS_PER_NODE", "STRATA_LOCAL_DIR") for x in ("-x", k)]
    cmd += [str(PYTHON), __file__, "--worker", "--dir", str(data_dir), "--result", str(result)]
    cmd += ["--mib", str(args.mib), "--repetitions", str(args.repetitions), "--compute-s", str(args.compute_s)]
    try:
        subprocess.run(cmd, env=env, check=True)
        verified = subprocess.run(
            [str(STRATA), "verify", str(data_dir / "target.dat")], capture_output=True, text=True
        )  # the drained output
        rows = json.loads(result.read_text())["rows"]
    finally:
        shutil.rmtree(local_dir, ignore_errors=True)
    med = {
        k: {m: statistics.median(r[k][m] for r in rows) for m in rows[0][k] if m != "strategy"} for k in rows[0]
    }  # variant -> measure -> median
    direct = med["direct"]
    print(
        f"\ndrain benchmark: {args.ranks} rank(s), {args.ranks_per_node} per node, {args.mib} MiB/rank, "
        f"node-local {args.local} (tmpfs), target {data_dir} ({len(rows)} repetitions, medians; fsync included)"
    )
    print(f"{'variant':16s} {'return (s)':>11s} {'durable (s)':>12s} {'return/direct':>14s} {'durable/direct':>15s}")
    for k in ("direct", "drain", "drain+compute"):
        m = med[k]
        print(
            f"{k:16s} {m['return_s']:11.3f} {m['durable_s']:12.3f} {m['return_s'] / direct['return_s']:14.2f} "
            f"{m['durable_s'] / direct['durable_s']:15.2f}"
        )
    print(
        "profile (medians, slowest rank): the phase's plan / execute / close, and the drain's copy (a copy that "
        "follows the node-local write runs from the files' opening, beside the write)"
    )
    for k in ("direct", "drain"):
        m = med[k]
        line = f"  {k:14s} plan {m['plan_s']:.3f}  execute {m['execute_s']:.3f}  close {m['close_s']:.3f}"
        if "copy_s" in m:
            line += f"  copy {m['copy_s']:.3f}"
        print(line + f"  ({rows[-1][k]['strategy']})")
    slowdown = med["drain+compute"]["compute_s"] / med["compute alone"]["compute_s"]
    print(
        f"computation after the write: {med['compute alone']['compute_s']:.3f} s alone, "
        f"{med['drain+compute']['compute_s']:.3f} s with the drain behind it ({slowdown:.2f}x)"
    )
    print(f"data verified: {'yes' if verified.returncode == 0 else 'NO'} ({verified.stdout.strip()})")
    out = {
        "ranks": args.ranks,
        "ranks_per_node": args.ranks_per_node,
        "mib_per_rank": args.mib,
        "fsync": True,
        "verified": verified.returncode == 0,
        "medians": med,
        "return_ratio": med["drain"]["return_s"] / direct["return_s"],
        "durable_ratio": med["drain"]["durable_s"] / direct["durable_s"],
        "compute_slowdown": slowdown,
        "rows": rows,
    }
    (args.output / "drain.json").write_text(json.dumps(out, indent=1))
    shutil.rmtree(data_dir, ignore_errors=True)
    return 0 if verified.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
