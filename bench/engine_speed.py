#!/usr/bin/env python3
"""Issue 15's acceptance, in one run: the engine (`strata` backend, its defaults: the strategy
chosen by cost) against every other way Strata writes the same decomposition and against fio.

Workloads (select with --only):
  e3sm     E3SM's F case on the real PIO maps (16 ranks; 1, 323 and 63 variables on the three
           maps): strata >= 3x per-dataset hdf5, >= 2x pnetcdf, >= 1.5x the best mpiio-coll
           (OMPIO and ROMIO); strata's file requests <= 2 x rounds x aggregators
  ior      IOR -b 1M -t 64K -s 4 (4 ranks), -b 4M -t 1M -s 2 (4 ranks), -b 256K -t 4K -s 5
           (8 ranks): strata >= 1.0x the best of posix, mpiio-ind, mpiio-coll (OMPIO, ROMIO); the
           engine's measured_s within 30% of its predicted_s (issue 30): the median over the writes
           of each write's measured / predicted (a write into a recycled file is predicted as
           such, so the writes of a launch are not predicted alike; both medians are printed too)
  array1d  the aggregation paper's 1D-Array, random sizes <= 100 KB, 16 ranks: >= 2x the best
           mpiio-coll (OMPIO, ROMIO)
  fsync    one large contiguous write with fsync: strata >= 0.9x fio's sequential write
  fixed    the engine's fixed cost: an empty phase and a 4 KiB-per-rank phase (bench/phase_fixed_cost)
  disk     issue 30: the engine on the real maps (E3SM F, 16 ranks, 4 writes a launch: the plan is
           reused from the second on) against one contiguous posix write of the same bytes by the same
           ranks (IOR, one block a rank) in the same round: write 1 >= 0.1x, writes 2+ >= 0.25x; and
           each write's measured_s (slowest rank's plan + write + close, less its wait for the last rank
           to arrive) against predicted_s
  demo     the demo campaign (examples/demo.toml): in every shared-file configuration strata's
           median write >= 0.95x the best other backend's

Method: each round runs every variant of a workload once (one launch of `strata run` with a few
repetitions: 5 for IOR, 3 for array1d, 1 for the slow E3SM baselines and the fsync write), in an
order shuffled with a recorded seed, each launch after a sync() (no variant pays for another's
writeback); the median is over all rounds' write repetitions, the first
writes of each launch into an emptied folder included (the engine's crash-consistent commit
writes a new file there: its first two writes of an output allocate fresh pages, later ones
recycle the previous file, docs/engine.md). Open and close are included; fsync only
in the fsync workload; every write launch also reads back and verifies (`--verify`), which does
not enter the write's time. Every side runs with --no-advice. For each strata row the engine's
profile is printed (plan / write / close, aggregation, I/O, rounds, aggregators, file requests,
one-sided operations, collectives, the strategy chosen and its predicted time), so a target that
is missed says where the time goes. Writes bench-output/engine_speed.{txt,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / "build" / "bin"
sys.path.insert(0, str(ROOT / "python"))
from strata.catalogue import StrataCatalogue  # noqa: E402  (the harness package, after the path above)

ROMIO = ["--mca", "io", "romio321"]
MAPS = (
    "piodecomp16tasks16io01dims_ioid_514.dat",
    "piodecomp16tasks16io01dims_ioid_516.dat",
    "piodecomp16tasks16io02dims_ioid_548.dat",
)
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

# (label, backend, MCA arguments)
STRATA = ("strata", "strata", [])
MPIIO = [("mpiio-coll ompio", "mpiio-coll", []), ("mpiio-coll romio", "mpiio-coll", ROMIO)]
INDEPENDENT = [("posix", "posix", []), ("mpiio-ind ompio", "mpiio-ind", []), ("mpiio-ind romio", "mpiio-ind", ROMIO)]


def workloads(args: argparse.Namespace) -> list[dict]:
    maps = ",".join(str(args.maps_dir / m) for m in MAPS)
    per_rank = max(1, args.large_mib // 4)
    ior = "ior --block-size {} --transfer-size {} --segments {}"
    out = [
        {
            "name": "e3sm F real maps",
            "group": "e3sm",
            "ranks": 16,
            "reps": 1,
            "kernel": ["e3sm", "--maps", maps, "--map-vars", "1,323,63"],
            "variants": [STRATA, ("hdf5", "hdf5", []), ("pnetcdf", "pnetcdf", []), *MPIIO],
            "targets": [("hdf5", 3.0), ("pnetcdf", 2.0), ("mpiio-coll", 1.5)],
            "requests": True,
        },
    ]
    for ranks, (b, t, s) in ((4, ("1M", "64K", "4")), (4, ("4M", "1M", "2")), (8, ("256K", "4K", "5"))):
        out.append(
            {
                "name": f"ior -b {b} -t {t} -s {s} ({ranks} ranks)",
                "group": "ior",
                "ranks": ranks,
                "reps": 5,
                "kernel": ior.format(b, t, s).split(),
                "variants": [STRATA, *INDEPENDENT, *MPIIO],
                "targets": [("best", 1.0)],
                "predicted": True,
            }
        )
    out.append(
        {
            "name": "array1d random <= 100 KB (16 ranks)",
            "group": "array1d",
            "ranks": 16,
            "reps": 3,
            "kernel": ["array1d", "--dist", "random", "--size", "102400"],
            "variants": [STRATA, *MPIIO],
            "targets": [("mpiio-coll", 2.0)],
        }
    )
    out.append(
        {
            "name": f"large contiguous {per_rank * 4} MiB, fsync (4 ranks)",
            "group": "fsync",
            "ranks": 4,
            "reps": 1,
            "fsync": True,
            "kernel": ior.format(f"{per_rank}M", "4M", "1").split(),
            "variants": [STRATA, ("fio", "fio", [])],
            "fio_mib": per_rank * 4,
            "targets": [("fio", 0.9)],
        }
    )
    return [w for w in out if w["group"] in args.only]


def run_strata(w: dict, variant: tuple, data: Path, json_path: Path) -> dict:
    label, backend, mca = variant
    cmd = [
        "mpirun",
        *mca,
        "-n",
        str(w["ranks"]),
        "--oversubscribe",
        str(BIN / "strata"),
        "run",
        *w["kernel"],
        "--backend",
        backend,
        "--no-advice",
        "--repetitions",
        str(w["reps"]),
        "--verify",
        "--output",
        str(data),
        "--json",
        str(json_path),
        "--quiet",
    ]
    if w.get("fsync"):
        cmd.append("--fsync")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=1800)
    if proc.returncode != 0:
        text = (proc.stderr or proc.stdout).strip()
        said = [line for line in text.splitlines() if "strata:" in line or "error" in line.lower()]
        return {"error": (said[0][:300] + " ... " if said else "") + text[-400:]}
    record = json.loads(json_path.read_text())
    reps = [r["write"] for r in record["repetitions"]]
    return {
        "mib_s": [r["bandwidth_mib_s"] for r in reps],
        "verified": record["verified"],
        "engines": [r["engine"] for r in reps if r.get("engine")],
        "requests": reps[-1].get("requests"),
        "times": [{k: r.get(k, 0) for k in ("open_s", "xfer_s", "close_s", "time_s")} for r in reps],
    }


def model_ratio(engines: list[dict], key: str = "predicted_s") -> float | None:
    """The median over the writes of each one's measured_s / predicted_s (the model prices each
    write by its file's state: a launch's first two go to new pages, the later ones rewrite a
    recycled file; a ratio of the two medians would compare different writes). With key
    "model_s": against the model's own price, before the job's calibration."""
    ratios = [e["measured_s"] / e[key] for e in engines if e.get(key) and "measured_s" in e]
    return statistics.median(ratios) if ratios else None


def median_profile(engines: list[dict]) -> dict | None:
    """Every numeric field of the engine's per-write record: its median over the writes; the rest
    (the strategy's name) from the median write."""
    if not engines:
        return None
    out = dict(engines[len(engines) // 2])
    for key, value in out.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = statistics.median(e.get(key, 0) for e in engines)
    return out


def page_reporting() -> str | None:
    """The guest's free page reporting (virtio-balloon), when this is a VM that has it: freed
    pages go back to the host in blocks of 2^order pages, and a file written into such pages
    pays the host's faults (docs/engine.md: the engine's first two writes of an output)."""
    knob = Path("/sys/module/page_reporting/parameters/page_reporting_order")
    try:
        order = int(knob.read_text().strip())
    except (OSError, ValueError):
        return None
    return f"free page reporting on, blocks of {4 << order} KiB (page_reporting_order {order})"


def run_fio(mib: int, directory: Path) -> dict:
    target = directory / "fio.dat"
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
        env=ENV,
        timeout=900,
    )
    target.unlink(missing_ok=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-400:]}
    job = json.loads(proc.stdout)["jobs"][0]
    # fio's bw excludes the final fsync: bytes over the job's runtime, which includes it.
    return {"mib_s": [job["write"]["io_bytes"] / 1048576 / max(job["job_runtime"] / 1000, 1e-9)], "verified": True}


def profile(engine: dict | None) -> str:
    if not engine:
        return ""
    ms = {
        k: engine.get(k, 0) * 1e3
        for k in ("plan_s", "execute_s", "close_s", "commit_s", "aggregation_s", "io_s", "wait_s")
    }
    return (
        f"strategy {engine.get('strategy', '?')} (predicted {engine.get('predicted_s', 0) * 1e3:.2f} ms): "
        f"plan {ms['plan_s']:.2f} + write {ms['execute_s']:.2f} + close {ms['close_s']:.2f} ms (of which rank 0's "
        f"commit {ms['commit_s']:.2f}); aggregation "
        f"{ms['aggregation_s']:.2f} ms, I/O {ms['io_s']:.2f} ms, wait {ms['wait_s']:.2f} ms; "
        f"{engine.get('rounds', 0)} rounds, {engine.get('aggregators', 0)} aggregators, "
        f"{engine.get('fs_requests', 0)} file requests, "
        f"{engine.get('operations', 0)} one-sided ops, {engine.get('collectives', 0)} collectives, "
        f"{engine.get('direct_bytes', 0) / 1048576:.1f} MiB direct"
    )


def measure(w: dict, rounds: int, rng: random.Random, tmp: Path, log) -> dict:
    samples: dict[str, list[float]] = {v[0]: [] for v in w["variants"]}
    first_two: dict[str, list[float]] = {v[0]: [] for v in w["variants"]}  # each launch's writes 1 and 2
    later: dict[str, list[float]] = {v[0]: [] for v in w["variants"]}  # its writes 3, 4, ...
    engines: dict[str, list[dict]] = {v[0]: [] for v in w["variants"]}
    last: dict[str, dict] = {}
    for r in range(rounds):
        order = list(w["variants"])
        rng.shuffle(order)
        for variant in order:
            log(f"{w['name']}: round {r + 1}/{rounds}, {variant[0]}")
            # Every launch starts with no dirty pages: none pays for the previous one's writeback.
            os.sync()
            if variant[1] == "fio":
                res = run_fio(w["fio_mib"], tmp)
            else:
                res = run_strata(w, variant, tmp / "data", tmp / "run.json")
            for f in tmp.glob("data*"):
                f.unlink()
            if "error" in res:
                last[variant[0]] = res
                continue
            samples[variant[0]] += res["mib_s"]
            first_two[variant[0]] += res["mib_s"][:2]
            later[variant[0]] += res["mib_s"][2:]
            engines[variant[0]] += res.get("engines", [])
            last[variant[0]] = res
    rows = {}
    for label, values in samples.items():
        res = last.get(label, {})
        rows[label] = {
            "median_mib_s": statistics.median(values) if values else None,
            "all_mib_s": values,
            "first_two_mib_s": statistics.median(first_two[label]) if first_two[label] else None,
            "later_mib_s": statistics.median(later[label]) if later[label] else None,
            "verified": res.get("verified"),
            "error": res.get("error"),
            "engine": median_profile(engines[label]),
            "model_ratio": model_ratio(engines[label]),
            "model_alone_ratio": model_ratio(engines[label], "model_s"),
            # each write's, in launch order (5 a launch): what it took and what was predicted
            "writes": [
                {k: e.get(k) for k in ("measured_s", "predicted_s", "model_s", "calibration", "plan_reused")}
                for e in engines[label]
            ],
        }
    return rows


def verdicts(w: dict, rows: dict) -> list[dict]:
    strata = rows["strata"]["median_mib_s"]
    out = []
    for kind, goal in w["targets"]:
        if kind == "best":
            others = {k: v["median_mib_s"] for k, v in rows.items() if k != "strata" and v["median_mib_s"]}
        else:
            others = {k: v["median_mib_s"] for k, v in rows.items() if k.startswith(kind) and v["median_mib_s"]}
        if not strata or not others:
            out.append({"target": f"{kind} x{goal}", "ratio": None, "met": False, "against": None})
            continue
        against = max(others, key=others.get)
        ratio = strata / others[against]
        out.append(
            {
                "target": f">= {goal}x {'the best other' if kind == 'best' else kind}",
                "against": against,
                "ratio": ratio,
                "met": ratio >= goal,
            }
        )
    if w.get("predicted") and rows["strata"].get("engine"):
        # Issue 30: the model predicts the whole phase (the slowest rank's plan + write + close).
        e = rows["strata"]["engine"]
        ratio = rows["strata"].get("model_ratio")
        out.append(
            {
                "target": "measured_s within 30% of predicted_s",
                "against": f"each write's measured / predicted, median; medians: measured "
                f"{e.get('measured_s', 0) * 1e3:.2f} ms, predicted {e.get('predicted_s', 0) * 1e3:.2f} ms; "
                f"against the model alone, before the job's calibration: "
                f"{rows['strata'].get('model_alone_ratio') or float('nan'):.2f}",
                "ratio": ratio,
                "met": ratio is not None and 0.7 <= ratio <= 1.3,
            }
        )
    if w.get("requests") and rows["strata"].get("engine"):
        e = rows["strata"]["engine"]
        limit = 2 * e.get("rounds", 0) * e.get("aggregators", 0)
        requests = e.get("fs_requests", 0)
        if e.get("aggregators", 0) == 0:
            out.append(
                {
                    "target": "file requests <= 2 x rounds x aggregators",
                    "ratio": None,
                    "met": True,
                    "against": f"not applicable (direct strategy: {requests} requests)",
                }
            )
        else:
            out.append(
                {
                    "target": "file requests <= 2 x rounds x aggregators",
                    "against": f"{requests} <= {limit}",
                    "ratio": requests / max(limit, 1),
                    "met": requests <= limit,
                }
            )
    return out


def fixed_costs(ranks: list[int], phases: int, tmp: Path, log) -> list[dict]:
    out = []
    for n in ranks:
        log(f"fixed cost: {n} ranks, {phases} phases of each kind")
        proc = subprocess.run(
            ["mpirun", "-n", str(n), "--oversubscribe", str(BIN / "phase_fixed_cost"), str(phases), str(tmp)],
            capture_output=True,
            text=True,
            env=ENV,
            timeout=600,
        )
        if proc.returncode != 0:
            out.append({"ranks": n, "error": proc.stderr.strip()[-300:]})
            continue
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def demo_profiles(con: sqlite3.Connection) -> dict[str, dict]:
    """Per cell: the median of strata's write profile over every write repetition of every launch,
    with the driver's open / transfer / close times beside the engine's own."""
    out: dict[str, dict] = {}
    rows = con.execute(
        "SELECT c.cell, r.record FROM runs r JOIN configurations c ON c.id = r.configuration_id "
        "WHERE c.label = 'strata' AND r.status = 'ok' AND r.record IS NOT NULL"
    ).fetchall()
    by_cell: dict[str, list[dict]] = {}
    for cell, record in rows:
        for rep in json.loads(record).get("repetitions", []):
            write = rep.get("write") or {}
            if write.get("engine"):
                by_cell.setdefault(cell, []).append(
                    {
                        **write["engine"],
                        "driver_open_s": write.get("open_s", 0),
                        "driver_xfer_s": write.get("xfer_s", 0),
                        "driver_close_s": write.get("close_s", 0),
                        "driver_time_s": write.get("time_s", 0),
                    }
                )
    for cell, engines in by_cell.items():
        out[cell] = median_profile(engines) or {}
    return out


def demo_ratios(db: Path) -> list[dict]:
    """Per shared-file cell of the campaign: strata's median write against the best other backend's."""
    con = sqlite3.connect(db)
    profiles = demo_profiles(con)
    rows = con.execute(
        "SELECT s.cell, s.label, s.kernel, c.args, s.bandwidth_mib_s, s.repetition FROM samples s "
        "JOIN configurations c ON c.cell = s.cell AND c.label = s.label "
        "WHERE s.phase = 'write'"
    ).fetchall()
    by_cell: dict[str, dict[str, list[float]]] = {}
    # The same by position in the launch: the engine's first two writes of an output go to
    # fresh pages (it keeps the previous output until the new one commits), later ones recycle.
    by_position: dict[str, dict[str, dict[int, list[float]]]] = {}
    for cell, label, kernel, extra, mib_s, repetition in rows:
        if kernel in ("mslio", "pace3d") or "--file-per-process" in extra or "--file-per-node" in extra:
            continue
        by_cell.setdefault(cell, {}).setdefault(label, []).append(mib_s)
        by_position.setdefault(cell, {}).setdefault(label, {}).setdefault(min(repetition, 2), []).append(mib_s)
    out = []
    for cell, labels in sorted(by_cell.items()):
        med = {k: statistics.median(v) for k, v in labels.items() if v}
        others = {k: v for k, v in med.items() if not k.startswith("strata")}
        if "strata" not in med or not others:
            continue
        best = max(others, key=others.get)
        ratio = med["strata"] / others[best]
        positions = {}
        for pos, name in ((0, "write 1"), (1, "write 2"), (2, "writes 3+")):
            pm = {k: statistics.median(v[pos]) for k, v in by_position[cell].items() if v.get(pos)}
            po = {k: v for k, v in pm.items() if not k.startswith("strata")}
            if "strata" in pm and po:
                b = max(po, key=po.get)
                positions[name] = {"ratio": pm["strata"] / po[b], "best": b}
        out.append(
            {
                "cell": cell,
                "strata_mib_s": med["strata"],
                "best": best,
                "best_mib_s": others[best],
                "ratio": ratio,
                "met": ratio >= 0.95,
                "by_position": positions,
                "profile": profiles.get(cell),
            }
        )
    return out


def measure_disk(args: argparse.Namespace, rng: random.Random, tmp: Path, log) -> tuple[dict, list[str]]:
    """Issue 30's first acceptance item: the engine against the disk's speed (one contiguous posix
    write of as many bytes by as many ranks), interleaved rounds, medians by write position."""
    maps = ",".join(str(args.maps_dir / m) for m in MAPS)
    ranks, reps = 16, 4
    engine = {"ranks": ranks, "reps": reps, "kernel": ["e3sm", "--maps", maps, "--map-vars", "1,323,63"]}
    rows: dict = {"first": [], "later": [], "posix": [], "engines": [], "errors": []}
    per_rank = None
    for rnd in range(args.rounds):
        order = ["strata", "posix"]
        rng.shuffle(order)
        for side in order:
            if side == "strata":
                got = run_strata(engine, STRATA, tmp / "disk.dat", tmp / "disk.json")
                if "error" in got:
                    rows["errors"].append(got["error"])
                    continue
                rows["first"].append(got["mib_s"][0])
                rows["later"].extend(got["mib_s"][1:])
                rows["engines"].extend(got["engines"])
                if per_rank is None:
                    per_rank = json.loads((tmp / "disk.json").read_text())["global_bytes"] // ranks
            elif per_rank is not None:
                posix = {
                    "ranks": ranks,
                    "reps": reps,
                    "kernel": [
                        "ior",
                        "--block-size",
                        str(per_rank),
                        "--transfer-size",
                        str(per_rank),
                        "--segments",
                        "1",
                    ],
                }
                got = run_strata(posix, ("posix", "posix", []), tmp / "disk-posix.dat", tmp / "disk-posix.json")
                if "error" in got:
                    rows["errors"].append(got["error"])
                    continue
                rows["posix"].extend(got["mib_s"])
        log(f"disk: round {rnd + 1}/{args.rounds}")
    med = {k: statistics.median(rows[k]) if rows[k] else None for k in ("first", "later", "posix")}
    lines = ["E3SM F case on the real maps (16 ranks) against one contiguous posix write of the same bytes"]
    report = {"medians_mib_s": med, "errors": rows["errors"][:3]}
    if med["posix"] and med["first"] and med["later"]:
        report["first_ratio"] = med["first"] / med["posix"]
        report["later_ratio"] = med["later"] / med["posix"]
        lines.append(
            f"  posix contiguous {med['posix']:.1f} MiB/s; engine write 1 {med['first']:.1f} MiB/s "
            f"({report['first_ratio']:.2f}x, target 0.1x), writes 2+ {med['later']:.1f} MiB/s "
            f"({report['later_ratio']:.2f}x, target 0.25x)"
        )
    for position, engines in (
        ("write 1", rows["engines"][0::reps]),
        ("writes 2+", [e for i, e in enumerate(rows["engines"]) if i % reps]),
    ):
        if not engines:
            continue
        pred = statistics.median(e.get("predicted_s", 0) for e in engines)
        meas = statistics.median(e.get("measured_s", 0) for e in engines)
        ratio = model_ratio(engines)
        alone = model_ratio(engines, "model_s")
        reused = sum(1 for e in engines if e.get("plan_reused"))
        lines.append(
            f"  {position}: predicted {pred:.4f} s, measured {meas:.4f} s (slowest rank's plan + write + close, "
            f"less its wait for the last rank; each write's measured / predicted, median: "
            f"{ratio if ratio is not None else float('nan'):.2f}; the model alone "
            f"{alone if alone is not None else float('nan'):.2f}), plan reused in "
            f"{reused}/{len(engines)}; profile {profile(median_profile(engines))}"
        )
        report[position] = {
            "predicted_s": pred,
            "measured_s": meas,
            "model_ratio": ratio,
            "model_alone_ratio": alone,
            "reused": reused,
            "writes": len(engines),
        }
    if rows["errors"]:
        lines.append(f"  errors: {rows['errors'][0][-200:]}")
    return report, lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per workload (>= 5)")
    parser.add_argument("--only", default="e3sm,ior,array1d,fsync,fixed,disk,demo", help="workloads, comma-separated")
    parser.add_argument("--maps-dir", type=Path, default=ROOT.parent / "shared" / "e3sm-maps")
    parser.add_argument("--large-mib", type=int, default=256, help="volume of the large fsync write")
    parser.add_argument("--fixed-phases", type=int, default=50)
    parser.add_argument("--demo-db", type=Path, help="an existing results.sqlite of examples/demo.toml")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--dir", type=Path, help="where data files go (default: a folder in --output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output")
    args = parser.parse_args()
    args.only = set(args.only.split(","))
    if args.rounds < 5:
        parser.error("--rounds must be at least 5")
    args.output.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="engine-speed.", dir=args.dir or args.output))
    start = time.time()

    def log(message: str) -> None:
        print(f"[{time.time() - start:7.1f} s] {message}", file=sys.stderr, flush=True)

    rng = random.Random(args.seed)
    report: dict = {"seed": args.seed, "rounds": args.rounds, "workloads": [], "fixed": [], "demo": None}
    lines = [
        f"Engine speed (issue 15): {args.rounds} interleaved rounds, shuffle seed {args.seed}, medians of every "
        "write; open and close included; every write verified on read-back; --no-advice on every side."
    ]
    reporting = page_reporting()
    report["page_reporting"] = reporting
    if reporting:
        lines.append(
            f"This VM has {reporting}: a file written into pages freed long ago pays the host's page faults "
            "(docs/engine.md)."
        )
    lines.append("")
    all_met = True
    built = StrataCatalogue.from_binary(BIN / "strata").backends
    for w in workloads(args):
        # The backends of this build only (fio is no backend: it stays).
        w["variants"] = [v for v in w["variants"] if v[1] in built or v[1] == "fio"]
        rows = measure(w, args.rounds, rng, tmp, log)
        checks = verdicts(w, rows)
        report["workloads"].append({"name": w["name"], "fsync": bool(w.get("fsync")), "rows": rows, "targets": checks})
        lines.append(f"{w['name']}  (fsync {'included' if w.get('fsync') else 'not included'})")
        strata = rows["strata"]["median_mib_s"]
        for label, row in rows.items():
            if row["median_mib_s"] is None:
                lines.append(f"  {label:20s} FAILED: {(row['error'] or '')[-150:]}")
                continue
            ratio = f"{strata / row['median_mib_s']:6.2f}x" if strata else ""
            lines.append(f"  {label:20s} {row['median_mib_s']:10.1f} MiB/s   strata / this {ratio}")
        lines.append(f"  profile: {profile(rows['strata'].get('engine'))}")
        if w["reps"] >= 3:
            lines.append(
                "  by position in a launch (medians): "
                + "; ".join(
                    f"{label} writes 1-2 {row['first_two_mib_s']:.0f}, 3+ {row['later_mib_s']:.0f} MiB/s"
                    for label, row in rows.items()
                    if row["first_two_mib_s"] and row["later_mib_s"]
                )
            )
            lines.append(
                "    (the engine keeps the previous output until the new one commits, so a launch's first two "
                "writes go to fresh pages; from the third on it recycles the retired file — docs/engine.md)"
            )
        for c in checks:
            ratio = "n/a" if c["ratio"] is None else f"{c['ratio']:.2f}"
            lines.append(f"  target {c['target']} (against {c['against']}): {ratio} {'MET' if c['met'] else 'NOT MET'}")
            all_met = all_met and c["met"]
        lines.append("")
    if "fixed" in args.only:
        report["fixed"] = fixed_costs([2, 4, 8, 16], args.fixed_phases, tmp, log)
        lines.append("Fixed cost of a phase (plan + write + close, the slowest rank, default commit; median):")
        for f in report["fixed"]:
            if "error" in f:
                lines.append(f"  {f['ranks']:2d} ranks: FAILED {f['error']}")
                continue
            e, s = f["empty"], f["4KiB_per_rank"]
            lines.append(
                f"  {f['ranks']:2d} ranks: empty {e['median_s'] * 1e3:.3f} ms "
                f"({e['collectives']} collectives), 4 KiB per rank {s['median_s'] * 1e3:.3f} ms "
                f"({s['collectives']} collectives, {s['strategy']})"
            )
        lines.append("")
    if "disk" in args.only:
        report["disk"], disk_lines = measure_disk(args, rng, tmp, log)
        lines.extend(disk_lines)
        met = report["disk"].get("first_ratio", 0) >= 0.1 and report["disk"].get("later_ratio", 0) >= 0.25
        lines.append(f"  target write 1 >= 0.1x, writes 2+ >= 0.25x: {'MET' if met else 'NOT MET'}")
        all_met = all_met and met
        lines.append("")
    if "demo" in args.only:
        db = args.demo_db
        if db is None:
            log("demo campaign (examples/demo.toml), about three minutes")
            folder = args.output / "demo"
            campaign = (
                (ROOT / "examples" / "demo.toml")
                .read_text()
                .replace('output = "../results/demo"', f'output = "{folder}"')
            )
            toml = tmp / "demo.toml"
            toml.write_text(campaign)
            subprocess.run(
                [str(ROOT / ".venv" / "bin" / "strata-bench"), "run", str(toml), "--force"],
                env=ENV,
                cwd=ROOT,
                timeout=3600,
                capture_output=True,
                text=True,
            )
            db = folder / "results.sqlite"
        report["demo"] = demo_ratios(db) if db.exists() else []
        lines.append(f"Demo campaign ({db}): strata's median write / the best other backend's, shared-file cells")
        for d in report["demo"]:
            lines.append(f"  {d['cell'][:70]:70s} {d['ratio']:6.2f} vs {d['best']} {'MET' if d['met'] else 'NOT MET'}")
            if d.get("by_position"):
                lines.append(
                    "      by position in a launch: "
                    + ", ".join(f"{k} {v['ratio']:.2f} (vs {v['best']})" for k, v in d["by_position"].items())
                )
            p = d.get("profile")
            if p and not d["met"]:
                t = {k: p.get(f"driver_{k}_s", 0) * 1e3 for k in ("time", "open", "xfer", "close")}
                lines.append(
                    f"      strata write {t['time']:.2f} ms (open {t['open']:.2f} + transfer {t['xfer']:.2f}"
                    f" + close {t['close']:.2f}); {profile(p)}"
                )
            all_met = all_met and d["met"]
        if not report["demo"]:
            lines.append("  no results found")
    shutil.rmtree(tmp, ignore_errors=True)
    table = "\n".join(lines)
    print(table)
    (args.output / "engine_speed.txt").write_text(table + "\n")
    (args.output / "engine_speed.json").write_text(json.dumps(report, indent=2) + "\n")
    log(f"table and JSON in {args.output} ({'every target met' if all_met else 'some targets not met'})")
    failed = any(r.get("error") for w in report["workloads"] for r in w["rows"].values())
    unverified = any(r.get("verified") is False for w in report["workloads"] for r in w["rows"].values())
    return 1 if failed or unverified else 0


if __name__ == "__main__":
    sys.exit(main())
