#!/usr/bin/env python3
"""How the engine's plan and its aggregator placement grow with ranks (docs/scaling.md).

For each rank count (default 1, 2, 4, ..., 64; oversubscribed on a small machine) and each
workload, one `strata run KERNEL --backend strata --write` launch with `--repetitions R` writes
through the engine with one virtual node per rank (STRATA_RANKS_PER_NODE=1) and one aggregator
per node (strata_strategy=aggregate, strata_aggregators=RANKS), the shape a 1 000-node run takes
with one aggregator a node. From each repetition's JSON record it takes the engine's `plan_s`
(the slowest rank's whole plan: the summaries' allgather, the strategy, partitions, placement,
range exchange, window, file open), `place_s` (the election of aggregators and tiers) and
`exchange_s` (telling each aggregator what it receives), both rank 0's; the figure per rank
count is the median over the launches' medians (`--launches`).

It then fits each time to a power law t = a * P^b over the rank counts >= 4 (least squares on
logarithms) and extrapolates it to --extrapolate rank counts; and it prints the volumes the
placement moves, computed from the code (one allreduce of partitions x nodes x 2 64-bit loads, one
allreduce of partitions (double, int) bids per election round), which decide the cost at scale
better than times measured on two oversubscribed cores do.

  .venv/bin/python bench/plan_scaling.py                          # about 10 minutes on 2 cores
  .venv/bin/python bench/plan_scaling.py --ranks 1 2 4 8 --launches 1 --json plan.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STRATA = Path(os.environ.get("STRATA_BIN", ROOT / "build" / "bin" / "strata"))

# Small writes: the plan, not the data, is what is measured.
WORKLOADS = {
    # one contiguous run a rank
    "array1d": ["array1d", "--dist", "uniform", "--size", "64K"],
    # h5bench's pattern: 16 datasets of 32^3 float32 in random 8^3 blocks spread over the ranks,
    # 1 024 blocks (16 a rank at 64 ranks), each block 64 runs in the file
    "noncontig3d": ["noncontig3d"],
}
# Both tile the file (every byte declared once), so the summaries tell each aggregator its ranges
# and the range exchange is skipped (exchange_s ~ 0): it runs only when the ranks' bytes leave holes
# or overlap (a PIO map with holes: tests/data/pio_holes_5ranks.dat).
TIMES = ("plan_s", "place_s", "exchange_s")


def launch(kernel: list[str], ranks: int, repetitions: int, tmp: Path, timeout: float) -> list[dict]:
    """One launch; the engine statistics of each repetition's write."""
    record = tmp / f"record-{ranks}.json"
    # Ranks that spin while they wait starve the others on oversubscribed cores: a 16-rank plan on
    # 2 cores takes seconds instead of milliseconds. Yielding makes the times the plan's, not the spin's.
    cmd = [
        "mpirun",
        "-n",
        str(ranks),
        "--oversubscribe",
        "--mca",
        "mpi_yield_when_idle",
        "1",
        "-x",
        "STRATA_RANKS_PER_NODE",
        str(STRATA),
        "run",
        *kernel,
        "--backend",
        "strata",
        "--write",
        "--repetitions",
        str(repetitions),
        "--no-advice",
        "--hints",
        f"strata_strategy=aggregate,strata_aggregators={ranks}",
        "--output",
        str(tmp / "plan.dat"),
        "--json",
        str(record),
        "--quiet",
    ]
    env = dict(os.environ, STRATA_RANKS_PER_NODE="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    rec = json.loads(record.read_text())
    for path in tmp.glob("plan.dat*"):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return [rep["write"]["engine"] for rep in rec["repetitions"]]


def measure(name: str, ranks: list[int], launches: int, repetitions: int, timeout: float, log) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="strata-plan-scaling-") as d:
        tmp = Path(d)
        for p in ranks:
            per_launch: dict[str, list[float]] = {k: [] for k in TIMES}
            started = time.time()
            for _ in range(launches):
                engines = launch(WORKLOADS[name], p, repetitions, tmp, timeout)
                for k in TIMES:
                    per_launch[k].append(statistics.median(float(e.get(k, math.nan)) for e in engines))
            last = engines[-1]
            row = {
                "workload": name,
                "ranks": p,
                "launches": launches,
                "repetitions": repetitions,
                "partitions": int(last["aggregators"]),
                "collectives": int(last["collectives"]),
                **{k: statistics.median(v) for k, v in per_launch.items()},
            }
            rows.append(row)
            log(
                f"{name:8s} {p:4d} ranks: plan {row['plan_s'] * 1e3:8.2f} ms, place {row['place_s'] * 1e3:8.2f} ms, "
                f"exchange {row['exchange_s'] * 1e3:8.2f} ms ({time.time() - started:.0f} s)"
            )
    return rows


def power_fit(ps: list[int], ts: list[float]) -> dict | None:
    """t = a * P^b by least squares on logarithms, over P >= 4 with t above 10 µs (a step skipped
    costs a timer call, not a measurement)."""
    pts = [(p, t) for p, t in zip(ps, ts, strict=True) if p >= 4 and t > 1e-5 and not math.isnan(t)]
    if len(pts) < 3:
        return None
    x = np.log([p for p, _ in pts])
    y = np.log([t for _, t in pts])
    b, log_a = np.polyfit(x, y, 1)
    residual = y - (log_a + b * x)
    return {
        "a": float(math.exp(log_a)),
        "b": float(b),
        "rms_log_residual": float(np.sqrt(np.mean(residual**2))),
        "points": len(pts),
    }


def placement_volumes(partitions: int, nodes: int, election_rounds: int = 1) -> dict:
    """Bytes each rank contributes to the placement's collectives, from src/engine/place/placement.cpp."""
    return {
        "load_allreduce_bytes": partitions * nodes * 2 * 8,
        "bid_allreduce_bytes": partitions * 16 * election_rounds,
        "cost_evaluations_per_rank_per_tier": partitions * nodes,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    ap.add_argument("--workloads", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    ap.add_argument("--launches", type=int, default=2, help="launches per rank count (default 2)")
    ap.add_argument("--repetitions", type=int, default=3, help="writes per launch (default 3)")
    ap.add_argument(
        "--extrapolate",
        type=int,
        nargs="+",
        default=[1000, 64000],
        help="rank counts to extrapolate the fits to (default 1000 64000)",
    )
    ap.add_argument("--timeout", type=float, default=600, help="seconds per launch (default 600)")
    ap.add_argument("--json", type=Path, help="also write the measurements and fits as JSON")
    args = ap.parse_args()
    if not STRATA.exists():
        print(f"plan_scaling: {STRATA} is missing: run make build", file=sys.stderr)
        return 2

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    rows: list[dict] = []
    try:
        for name in args.workloads:
            rows += measure(name, args.ranks, args.launches, args.repetitions, args.timeout, log)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print(f"plan_scaling: {e}", file=sys.stderr)
        return 1

    fits: dict[str, dict] = {}
    print(
        f"engine plan and placement, one virtual node and one aggregator per rank; median of {args.launches} "
        f"launch medians of {args.repetitions} writes; times in ms"
    )
    print(
        f"{'workload':8s} {'ranks':>5s} {'partitions':>10s} {'collectives':>11s} {'plan':>9s} {'place':>9s} "
        f"{'exchange':>9s}"
    )
    for r in rows:
        print(
            f"{r['workload']:8s} {r['ranks']:5d} {r['partitions']:10d} {r['collectives']:11d} "
            f"{r['plan_s'] * 1e3:9.3f} {r['place_s'] * 1e3:9.3f} {r['exchange_s'] * 1e3:9.3f}"
        )
    print()
    print("power-law fits t = a P^b over P >= 4, extrapolated (an upper bound: oversubscribed cores)")
    header = "".join(f" {'P=' + str(p):>11s}" for p in args.extrapolate)
    print(f"{'workload':8s} {'time':10s} {'a (ms)':>9s} {'b':>6s} {'rms':>5s}{header}")
    for name in args.workloads:
        mine = [r for r in rows if r["workload"] == name]
        for k in TIMES:
            fit = power_fit([r["ranks"] for r in mine], [r[k] for r in mine])
            if fit is None:
                continue
            fit["extrapolated_s"] = {str(p): fit["a"] * p ** fit["b"] for p in args.extrapolate}
            fits[f"{name}.{k}"] = fit
            ext = "".join(f" {fit['extrapolated_s'][str(p)]:10.3f}s" for p in args.extrapolate)
            print(f"{name:8s} {k:10s} {fit['a'] * 1e3:9.4f} {fit['b']:6.2f} {fit['rms_log_residual']:5.2f}{ext}")
    print()
    print("placement volumes per rank (one aggregator per node)")
    volumes = {}
    for nodes in [*args.ranks[-1:], *args.extrapolate[:1]]:
        v = placement_volumes(nodes, nodes)
        volumes[str(nodes)] = v
        print(
            f"  {nodes:6d} nodes: loads allreduce {v['load_allreduce_bytes'] / 2**20:10.2f} MiB, bids "
            f"{v['bid_allreduce_bytes'] / 2**10:8.1f} KiB a round, {v['cost_evaluations_per_rank_per_tier']:,} "
            "cost terms a tier"
        )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "fits": fits, "placement_volumes": volumes}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
