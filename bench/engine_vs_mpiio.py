#!/usr/bin/env python3
"""The engine against MPI-IO, in one run: Strata's `strata` backend versus `mpiio-coll` under
OMPIO and under ROMIO and versus `mpiio-ind`, on the aggregation paper's 1D-Array (uniform,
random, normal sizes up to 100 KB per rank), IOR strided with a small transfer size, and a
large contiguous write that is also compared with fio's sequential write (the physical limit).

Every side runs with --no-advice and exactly the hints below. Baselines are configured fairly:
ROMIO with cb_config_list=*:* and
the engine's aggregator count and buffer size; OMPIO with the same cb_nodes and cb_buffer_size
and write data sieving off (strata sets that before MPI_Init on Open MPI < 4.1.7). The
aggregator count each one really used is recorded. Medians of >= 5 repetitions, open and close
included; the large write includes fsync on every side. Targets (issue 3): array1d random
>= 2x the better collective baseline; large write >= 0.8x fio — checked on the engine writing in
place, as MPI-IO does; the engine's default crash-consistent commit (partial file, checksums,
renames: docs/engine.md) is shown beside it with its cost.
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
ROMIO = ["--mca", "io", "romio321"]

# The engine's defaults on one node of this kind: one aggregator, 4 MiB buffers.
ENGINE_HINTS = "cb_buffer_size=4194304,strata_buffers=2"
FAIR = "cb_nodes={aggr},cb_buffer_size=4194304"


def workloads(ranks: int, large_mib: int) -> list[dict]:
    per_rank = max(1, large_mib // ranks)
    return [
        {"name": "array1d uniform 100 KB", "kernel": ["array1d", "--dist", "uniform", "--size", "102400"]},
        {
            "name": "array1d random <=100 KB",
            "kernel": ["array1d", "--dist", "random", "--size", "102400"],
            "target": ("collective", 2.0),
        },
        {"name": "array1d normal ~100 KB", "kernel": ["array1d", "--dist", "normal", "--size", "102400"]},
        {
            "name": "ior strided -b 256K -t 16K -s 8",
            "kernel": ["ior", "--block-size", "256K", "--transfer-size", "16K", "--segments", "8"],
        },
        {
            "name": f"large contiguous {per_rank * ranks} MiB, fsync",
            "kernel": ["ior", "--block-size", f"{per_rank}M", "--transfer-size", f"{per_rank}M", "--segments", "1"],
            "fsync": True,
            "fio_mib": per_rank * ranks,
            "target": ("fio", 0.8),
        },
    ]


def variants(aggregators: int, commit_variants: bool = False) -> list[tuple[str, str, list[str], list[str]]]:
    fair = FAIR.format(aggr=aggregators)
    # "strata" is the default: a crash-consistent commit (partial files, checksummed, renamed;
    # synced when the write asks for fsync). "strata in-place" writes straight into the output as
    # MPI-IO does: the like-for-like row the targets are checked on. --commit-variants adds the
    # commit that always syncs.
    sync = [("strata sync", "strata", ["--hints", ENGINE_HINTS + ",strata_commit=sync"], [])]
    return [
        ("strata", "strata", ["--hints", ENGINE_HINTS], []),
        ("strata in-place", "strata", ["--hints", ENGINE_HINTS + ",strata_commit=in-place"], []),
        *(sync if commit_variants else []),
        ("mpiio-coll ompio", "mpiio-coll", ["--hints", fair], []),
        ("mpiio-coll romio", "mpiio-coll", ["--hints", fair + ",cb_config_list=*:*"], ROMIO),
        ("mpiio-ind", "mpiio-ind", [], []),
    ]


def aggregators_used(record: dict) -> str:
    hints = record.get("hints", {})
    if record["backend"] == "strata":
        return str(record["repetitions"][0]["write"]["engine"]["aggregators"])
    if record["backend"] == "mpiio-ind":
        return "-"
    if record["io_component"] == "romio":
        return hints.get("cb_nodes", "?")
    return hints.get("cb_nodes", "auto")


def run_fio(directory: Path, mib: int, reps: int, env: dict) -> list[float]:
    """fio's sequential write of the same volume, fsync at the end, one job: MiB/s per run."""
    out = []
    for i in range(reps):
        target = directory / f"fio.{i}.dat"
        proc = subprocess.run(
            [
                "fio",
                "--name=seqwrite",
                f"--filename={target}",
                "--rw=write",
                "--bs=4M",
                f"--size={mib}M",
                "--ioengine=psync",
                "--end_fsync=1",
                "--numjobs=1",
                "--output-format=json",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=True,
        )
        job = json.loads(proc.stdout)["jobs"][0]["write"]
        # fio's bw excludes the final fsync; use bytes over the job's runtime including it.
        runtime_s = json.loads(proc.stdout)["jobs"][0]["job_runtime"] / 1000.0
        out.append(job["io_bytes"] / 1048576.0 / max(runtime_s, 1e-9))
        target.unlink()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--repetitions", type=int, default=7)
    parser.add_argument("--large-mib", type=int, default=512, help="volume of the large contiguous write")
    parser.add_argument("--dir", type=Path, help="where data files go (default: a temporary folder in bench-output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output", help="folder for the table and JSON")
    parser.add_argument(
        "--commit-variants",
        action="store_true",
        help="also run the engine with strata_commit=sync (a commit that always syncs)",
    )
    args = parser.parse_args()
    if args.repetitions < 5:
        parser.error("--repetitions must be at least 5")
    args.output.mkdir(parents=True, exist_ok=True)
    data_dir = Path(tempfile.mkdtemp(prefix="engine-bench.", dir=args.dir or args.output))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = shutil.which("mpirun") or "mpirun"
    aggregators = 1  # one per node: the engine's default here

    rows: list[dict] = []
    jobs = [(w, v) for w in workloads(args.ranks, args.large_mib) for v in variants(aggregators, args.commit_variants)]
    start = time.time()
    for i, (w, (label, backend, extra, mca)) in enumerate(jobs, 1):
        elapsed = time.time() - start
        print(f"[{i}/{len(jobs)}] {w['name']:34s} {label:18s} (elapsed {elapsed:5.1f} s)", file=sys.stderr, flush=True)
        json_path = data_dir / "run.json"
        cmd = [
            mpirun,
            *mca,
            "-n",
            str(args.ranks),
            "--oversubscribe",
            str(STRATA),
            "run",
            *w["kernel"],
            "--backend",
            backend,
            *extra,
            "--no-advice",
            "--repetitions",
            str(args.repetitions),
            "--verify",
            "--output",
            str(data_dir / "data"),
            "--json",
            str(json_path),
            "--quiet",
        ]
        if w.get("fsync"):
            cmd.append("--fsync")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if proc.returncode != 0:
            rows.append({"workload": w["name"], "variant": label, "error": proc.stderr.strip()[-400:]})
            continue
        record = json.loads(json_path.read_text())
        bws = [r["write"]["bandwidth_mib_s"] for r in record["repetitions"]]
        row = {
            "workload": w["name"],
            "variant": label,
            "median_mib_s": statistics.median(bws),
            "all_mib_s": bws,
            "aggregators": aggregators_used(record),
            "verified": record["verified"],
            "bytes": record["repetitions"][0]["write"]["bytes"],
            "hints": record["hints"],
        }
        if backend == "strata":
            row["engine"] = record["repetitions"][-1]["write"]["engine"]
        rows.append(row)
        for f in data_dir.glob("data*"):
            f.unlink()
    fio = {}
    for w in workloads(args.ranks, args.large_mib):
        if "fio_mib" in w:
            print(f"fio sequential write {w['fio_mib']} MiB x {args.repetitions}", file=sys.stderr, flush=True)
            runs = run_fio(data_dir, w["fio_mib"], args.repetitions, env)
            fio[w["name"]] = {"median_mib_s": statistics.median(runs), "all_mib_s": runs}
    shutil.rmtree(data_dir, ignore_errors=True)

    lines = [
        f"Engine vs MPI-IO: {args.ranks} ranks on this machine, {args.repetitions} repetitions, median write "
        "bandwidth (open and close included; fsync where marked), data verified on read-back.",
        "",
    ]
    head = f"{'workload':34s} {'variant':18s} {'aggr':>5s} {'MiB/s':>10s} {'vs best coll':>13s} {'vs fio':>8s}"
    lines += [head, "-" * len(head)]
    verdicts = []
    for w in workloads(args.ranks, args.large_mib):
        sub = [r for r in rows if r["workload"] == w["name"]]
        coll = [r["median_mib_s"] for r in sub if r["variant"].startswith("mpiio-coll") and "error" not in r]
        best = max(coll) if coll else float("nan")
        f = fio.get(w["name"], {}).get("median_mib_s")
        for r in sub:
            if "error" in r:
                lines.append(f"{w['name']:34s} {r['variant']:18s} FAILED: {r['error'][-120:]}")
                continue
            ratio = r["median_mib_s"] / best
            vs_fio = f"{r['median_mib_s'] / f:8.2f}" if f else f"{'':8s}"
            r["ratio_best_collective"] = ratio
            if f:
                r["ratio_fio"] = r["median_mib_s"] / f
            lines.append(
                f"{w['name']:34s} {r['variant']:18s} {r['aggregators']:>5s} {r['median_mib_s']:10.1f} "
                f"{ratio:13.2f} {vs_fio}"
            )
        if f:
            lines.append(f"{w['name']:34s} {'fio seq write':18s} {'-':>5s} {f:10.1f} {'':13s} {1.0:8.2f}")
        engine_row = next((r for r in sub if r["variant"] == "strata" and "engine" in r), None)
        if engine_row:  # where the engine's time goes (its last repetition, maxima over ranks)
            e = engine_row["engine"]
            ms = {k: e[k] * 1e3 for k in ("plan_s", "aggregation_s", "io_s", "wait_s", "close_s")}
            lines.append(
                f"{'':34s} strata profile: plan {ms['plan_s']:.2f} ms, aggregation "
                f"{ms['aggregation_s']:.2f} ms, I/O {ms['io_s']:.2f} ms, wait {ms['wait_s']:.2f} ms, "
                f"close {ms['close_s']:.2f} ms; {e['rounds']} rounds, "
                f"{e.get('direct_bytes', 0) / 1048576:.0f} MiB direct"
            )
        if "target" in w:
            kind, goal = w["target"]
            key = "ratio_best_collective" if kind == "collective" else "ratio_fio"
            got = {
                v: next((r.get(key) for r in sub if r["variant"] == v and "error" not in r), None)
                for v in ("strata in-place", "strata")
            }
            ok = got["strata in-place"] is not None and got["strata in-place"] >= goal
            against = "best MPI-IO collective" if kind == "collective" else "fio"
            shown = {v: "n/a" if g is None else f"{g:.2f}x" for v, g in got.items()}
            verdicts.append(
                f"target {w['name']}: strata written in place like MPI-IO >= {goal}x {against} -> "
                f"{shown['strata in-place']} {'MET' if ok else 'NOT MET'} (with its default commit: "
                f"{shown['strata']})"
            )
        lines.append("")
    lines += verdicts
    table = "\n".join(lines)
    print(table)
    (args.output / "engine_vs_mpiio.txt").write_text(table + "\n")
    (args.output / "engine_vs_mpiio.json").write_text(
        json.dumps(
            {"ranks": args.ranks, "repetitions": args.repetitions, "rows": rows, "fio": fio, "verdicts": verdicts},
            indent=2,
        )
        + "\n"
    )
    print(f"(table and JSON in {args.output})", file=sys.stderr)
    return 0 if all(r.get("verified") for r in rows if "error" not in r) and not any("error" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
