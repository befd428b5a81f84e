#!/usr/bin/env python3
"""Aggregation on each memory tier, in one run (the aggregation paper's Table 6 and Table 7):
the engine writes and reads the same data with its aggregation buffers forced on `dram` (the
baseline), on `tmpfs` (/dev/shm, mmap'ed) and on `nvr` (a file in node-local storage, mmap'ed
and exposed with MPI_Win_create), and once more with node-local storage as the *target*
(strata_target=node-local: one file per node, read back from it; the paper's write-then-analyse
workflow). Workloads: array1d with about 4 MB per rank in random sizes, and IOR strided
(8 MiB per rank in 64 KiB pieces).

The ranks form virtual nodes (STRATA_RANKS_PER_NODE), so several aggregators each expose their
own window, and every byte is aggregated (strata_direct_threshold=0). Medians of >= 5
repetitions, open and close included, no fsync; every run verifies its data on read-back.
Ratios are to aggregation on dram.
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

WORKLOADS = [
    ("array1d random ~4 MB/rank", ["array1d", "--dist", "random", "--size", "8M"]),
    ("ior strided -b 4M -t 64K -s 2", ["ior", "--block-size", "4M", "--transfer-size", "64K", "--segments", "2"]),
]

# label, environment, extra hints
VARIANTS = [
    ("dram", {"STRATA_AGGR_TIER": "dram"}, ""),
    ("tmpfs", {"STRATA_AGGR_TIER": "tmpfs"}, ""),
    ("nvr", {"STRATA_AGGR_TIER": "nvr"}, ""),
    ("dram -> node-local target", {"STRATA_AGGR_TIER": "dram"}, "strata_target=node-local"),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--ranks-per-node", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--dir", type=Path, help="where data files go (default: a temporary folder in bench-output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output", help="folder for the table and JSON")
    args = parser.parse_args()
    if args.repetitions < 5:
        parser.error("--repetitions must be at least 5")
    args.output.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="tiers-bench.", dir=args.dir or args.output))
    local_dir = data_dir / "node-local"
    base_env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        STRATA_RANKS_PER_NODE=str(args.ranks_per_node),
        STRATA_LOCAL_DIR=str(local_dir),
    )
    mpirun = shutil.which("mpirun") or "mpirun"

    rows: list[dict] = []
    jobs = [(w, v) for w in WORKLOADS for v in VARIANTS]
    start = time.time()
    for i, ((wname, kernel), (label, extra_env, hints)) in enumerate(jobs, 1):
        print(
            f"[{i}/{len(jobs)}] {wname:30s} {label:26s} (elapsed {time.time() - start:5.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        env = dict(base_env, **extra_env)
        exports = [x for key in ("STRATA_RANKS_PER_NODE", "STRATA_LOCAL_DIR", *extra_env) for x in ("-x", key)]
        json_path = data_dir / "run.json"
        cmd = [
            mpirun,
            *exports,
            "-n",
            str(args.ranks),
            "--oversubscribe",
            str(STRATA),
            "run",
            *kernel,
            "--backend",
            "strata",
            "--no-advice",
            "--write",
            "--read",
            "--verify",
            "--repetitions",
            str(args.repetitions),
            "--output",
            str(data_dir / "data"),
            "--json",
            str(json_path),
            "--quiet",
        ]
        # Every byte through the aggregators (no direct runs): the tiers are what is compared.
        cmd += ["--hints", ",".join(h for h in ("strata_direct_threshold=0", hints) if h)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if proc.returncode != 0:
            rows.append({"workload": wname, "variant": label, "error": proc.stderr.strip()[-400:]})
            continue
        record = json.loads(json_path.read_text())
        reps = record["repetitions"]
        write = [r["write"]["bandwidth_mib_s"] for r in reps]
        read = [r["read"]["bandwidth_mib_s"] for r in reps]
        engine = reps[-1]["write"].get("engine") or {}
        rows.append(
            {
                "workload": wname,
                "variant": label,
                "write_mib_s": statistics.median(write),
                "read_mib_s": statistics.median(read),
                "all_write_mib_s": write,
                "all_read_mib_s": read,
                "tier": engine.get("tier", "?"),
                "aggregators": engine.get("aggregators"),
                "verified": record["verified"],
                "bytes": reps[0]["write"]["bytes"],
            }
        )
        for f in data_dir.glob("data*"):
            f.unlink()
        shutil.rmtree(local_dir, ignore_errors=True)
    shutil.rmtree(data_dir, ignore_errors=True)

    lines = [
        f"Aggregation tiers: {args.ranks} ranks as {args.ranks // args.ranks_per_node} virtual nodes, "
        f"{args.repetitions} repetitions, median bandwidth (open and close included, no fsync), "
        "data verified on read-back; x = ratio to aggregation on dram.",
        "",
    ]
    head = (
        f"{'workload':30s} {'variant':26s} {'tier':>6s} {'aggr':>5s} {'write MiB/s':>12s} {'x':>6s} "
        f"{'read MiB/s':>11s} {'x':>6s}"
    )
    lines += [head, "-" * len(head)]
    for wname, _ in WORKLOADS:
        sub = [r for r in rows if r["workload"] == wname]
        base = next((r for r in sub if r["variant"] == "dram" and "error" not in r), None)
        for r in sub:
            if "error" in r:
                lines.append(f"{wname:30s} {r['variant']:26s} FAILED: {r['error'][-120:]}")
                continue
            if base is not None:
                r["write_ratio"] = r["write_mib_s"] / base["write_mib_s"]
                r["read_ratio"] = r["read_mib_s"] / base["read_mib_s"]
            lines.append(
                f"{wname:30s} {r['variant']:26s} {r['tier']:>6s} {r['aggregators']!s:>5s} "
                f"{r['write_mib_s']:12.1f} {r.get('write_ratio', float('nan')):6.2f} "
                f"{r['read_mib_s']:11.1f} {r.get('read_ratio', float('nan')):6.2f}"
            )
        lines.append("")
    lines.append(
        "On one machine every tier shares the same memory and disk: the ratios show the cost of the "
        "tier's mechanism (mmap'ed files, MPI_Win_create windows), not of the hardware the paper had."
    )
    table = "\n".join(lines)
    print(table)
    (args.output / "tiers_compare.txt").write_text(table + "\n")
    (args.output / "tiers_compare.json").write_text(
        json.dumps(
            {"ranks": args.ranks, "ranks_per_node": args.ranks_per_node, "repetitions": args.repetitions, "rows": rows},
            indent=2,
        )
        + "\n"
    )
    print(f"(table and JSON in {args.output})", file=sys.stderr)
    ok = all(r.get("verified") for r in rows if "error" not in r) and not any("error" in r for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
