#!/usr/bin/env python3
"""Multi-dataset I/O, in one run: the multi-dataset paper's strategies on its three patterns.

Cases (16 ranks by default): the E3SM F-like case (400 variables, runs of 1-16 columns, a
third of the data on 72 levels), the G-like case (50 variables, columns of 100 levels on a
permuted mesh) and the 3-D non-contiguous benchmark (datasets of 8^3 cubes spread at random).
Strategies, all through `strata run` on the same decomposition:

  MDIO strata        every dataset in ONE engine phase (raw file + index)
  MDIO strata-hdf5   the same phase into an HDF5 container (HDF5 1.10 metadata, engine data)
  IDIO hdf5          one collective H5Dwrite per dataset (blocks OR-ed into one selection)
  per-block hdf5     one collective H5Dwrite per block (noncontig3d only by default: on F and G
                     it needs tens of thousands of calls; the table gives the count instead)
  IDIO mpiio         one MPI_File_write_at_all per variable
  mpiio-coll         one MPI_File_write_at_all for everything (an hindexed view)
  pnetcdf            iput of every block of every variable, one wait_all (the strongest peer)

Every side runs with --no-advice and the same hints: one aggregator (one node) and 4 MiB
collective buffers (cb_nodes=1, cb_buffer_size=4194304); the engine's defaults are the same.
Medians of >= 5 repetitions of the write (open and close included, fsync not included); the
file the last repetition wrote is then read back by a second run and every element verified.
For each strategy the table gives the collective calls of a write, the rounds (the engine's,
or the two-phase rounds the MPI-IO geometry implies, as the paper's Table I computes them)
and Equation 1's split of the last write. Targets (issue 6):
MDIO >= 3x IDIO hdf5 on F-like; MDIO >= 1.0x pnetcdf on every case.
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
HINTS = "cb_nodes=1,cb_buffer_size=4194304"


def cases() -> list[dict]:
    return [
        {"name": "F-like", "kernel": ["e3sm", "--case", "f", "--ncol", "1024"], "per_block": False},
        {"name": "G-like", "kernel": ["e3sm", "--case", "g", "--ncol", "1024"], "per_block": False},
        {"name": "noncontig3d", "kernel": ["noncontig3d", "--datasets", "16", "--grid", "32x32x32"],
         "per_block": True},
    ]


STRATEGIES = [
    ("MDIO strata", ["--backend", "strata"]),
    ("MDIO strata-hdf5", ["--backend", "strata", "--container", "hdf5"]),
    ("IDIO hdf5", ["--backend", "hdf5"]),
    ("per-block hdf5", ["--backend", "hdf5", "--per-block"]),
    ("IDIO mpiio", ["--backend", "mpiio-coll", "--per-variable"]),
    ("mpiio-coll", ["--backend", "mpiio-coll"]),
    ("pnetcdf", ["--backend", "pnetcdf"]),
]


def strata(args: list[str], env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([str(STRATA), *args], capture_output=True, text=True, env=env, timeout=timeout)


def per_block_calls(case: dict, ranks: int, params: dict, work: Path, env: dict) -> int | None:
    """Collective calls a per-block write of an e3sm case needs: for every variable the largest
    number of blocks one rank holds of it (strata decomp describe of the kernel's own maps)."""
    if case["kernel"][0] != "e3sm":
        return None
    seed, ncol, lev, run = 1, params["ncol"], params["lev"], params["max_run"]
    f = params["case"] == "f"
    maps = ([("d1", seed * 3 + 1, 1), ("d2", seed, params["vars_2d"] - 1), ("d3", seed, params["vars_3d"])] if f
            else [("d1", seed, params["vars_2d"]), ("cells", seed, params["vars_3d"])])
    total = params["fixed_vars"]  # written whole by rank 0: one call each
    for kind, s, nvars in maps:
        path = work / f"{kind}.map"
        gen = strata(["decomp", "generate", "--map", kind, "--ncol", str(ncol), "--lev", str(lev), "--npes",
                      str(ranks), "--max-run", str(run), "--seed", str(s), "--output", str(path)], env)
        desc = strata(["decomp", "describe", str(path), "--json", str(work / "d.json")], env)
        if gen.returncode or desc.returncode:
            return None
        total += nvars * int(json.loads((work / "d.json").read_text())["blocks_per_rank"]["max"])
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--per-block-everywhere", action="store_true",
                        help="also run per-block hdf5 on the e3sm cases (tens of thousands of collective calls)")
    parser.add_argument("--dir", type=Path, help="where data files go (default: a temporary folder in bench-output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output", help="folder for the table and JSON")
    args = parser.parse_args()
    if args.repetitions < 5:
        parser.error("--repetitions must be at least 5")
    args.output.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="multidataset-bench.", dir=args.dir or args.output))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = shutil.which("mpirun") or "mpirun"

    rows: list[dict] = []
    start = time.time()
    jobs = [(c, s) for c in cases() for s in STRATEGIES]
    for i, (case, (label, extra)) in enumerate(jobs, 1):
        if label == "per-block hdf5" and not (case["per_block"] or args.per_block_everywhere):
            rows.append({"case": case["name"], "strategy": label, "skipped": True})
            continue
        print(f"[{i}/{len(jobs)}] {case['name']:12s} {label:18s} (elapsed {time.time() - start:5.1f} s)",
              file=sys.stderr, flush=True)
        json_path = work / "run.json"
        base = [mpirun, "-n", str(args.ranks), "--oversubscribe", str(STRATA), "run", *case["kernel"], *extra,
                "--no-advice", "--hints", HINTS, "--output", str(work / "data"), "--quiet"]
        proc = subprocess.run([*base, "--write", "--repetitions", str(args.repetitions), "--json", str(json_path)],
                              capture_output=True, text=True, env=env, timeout=3600)
        if proc.returncode == 0:  # the last repetition's file, every element checked
            check = subprocess.run([*base, "--read", "--verify", "--json", str(work / "check.json")],
                                   capture_output=True, text=True, env=env, timeout=3600)
            if check.returncode != 0:
                proc = check
        for f in work.glob("data*"):
            f.unlink()
        if proc.returncode != 0:
            rows.append({"case": case["name"], "strategy": label, "error": proc.stderr.strip()[-400:]})
            continue
        record = json.loads(json_path.read_text())
        record["verified"] = json.loads((work / "check.json").read_text())["verified"]
        writes = [r["write"] for r in record["repetitions"]]
        bws = [w["bandwidth_mib_s"] for w in writes]
        rows.append({"case": case["name"], "strategy": label, "median_mib_s": statistics.median(bws),
                     "all_mib_s": bws, "median_s": statistics.median(w["time_s"] for w in writes),
                     "bytes": writes[0]["bytes"], "verified": record["verified"],
                     "collective": writes[-1].get("collective"), "params": record["params"]})
    for case in cases():
        params = next((r["params"] for r in rows if r["case"] == case["name"] and "params" in r), None)
        skipped = next((r for r in rows if r["case"] == case["name"] and r.get("skipped")), None)
        if skipped is not None and params is not None:
            skipped["calls_needed"] = per_block_calls(case, args.ranks, params, work, env)
    shutil.rmtree(work, ignore_errors=True)

    lines = [f"Multi-dataset I/O: {args.ranks} ranks on this machine, {args.repetitions} repetitions, median write "
             "bandwidth (open and close included, fsync not included); the last write of each verified on read-back.",
             f"Hints on every side: {HINTS} (--no-advice). Split = Equation 1 of the last write, max over ranks: "
             "I/O, communication, collective overhead (waiting in a call for the last rank), library (HDF5/PnetCDF "
             "outside MPI-IO; for the engine: the HDF5 container's metadata).", ""]
    head = (f"{'case':12s} {'strategy':18s} {'MiB/s':>9s} {'median s':>9s} {'MDIO x':>7s} {'calls':>7s} "
            f"{'rounds':>7s}  split: io / comm / overhead / library (s)")
    lines += [head, "-" * len(head)]
    verdicts = []
    for case in cases():
        sub = [r for r in rows if r["case"] == case["name"]]
        mdio = next((r for r in sub if r["strategy"] == "MDIO strata" and "median_mib_s" in r), None)
        for r in sub:
            if r.get("skipped"):
                need = r.get("calls_needed")
                lines.append(f"{case['name']:12s} {r['strategy']:18s} not run: "
                             f"{need if need is not None else 'many'} collective calls per write "
                             "(run with --per-block-everywhere)")
                continue
            if "error" in r:
                lines.append(f"{case['name']:12s} {r['strategy']:18s} FAILED: {r['error'][-160:]}")
                continue
            ratio = mdio["median_mib_s"] / r["median_mib_s"] if mdio else float("nan")
            r["mdio_ratio"] = ratio
            c = r.get("collective") or {}
            sp = c.get("split_s", {})
            split = " / ".join(f"{sp.get(k, 0):.3f}" for k in ("io", "comm", "collective_overhead", "library"))
            rounds = f"{c.get('rounds', '-')}{'e' if c.get('rounds_kind') == 'engine' else ''}"
            lines.append(f"{case['name']:12s} {r['strategy']:18s} {r['median_mib_s']:9.2f} {r['median_s']:9.3f} "
                         f"{ratio:7.2f} {c.get('calls', '-'):>7} {rounds:>7}  {split}")
        lines.append("")

        def ratio_to(strategy: str, sub: list[dict] = sub) -> float | None:
            r = next((x for x in sub if x["strategy"] == strategy and "mdio_ratio" in x), None)
            return r["mdio_ratio"] if r else None

        goals = [("pnetcdf", 1.0)] + ([("IDIO hdf5", 3.0)] if case["name"] == "F-like" else [])
        for against, goal in goals:
            got = ratio_to(against)
            ok = got is not None and got >= goal
            verdicts.append(f"target {case['name']}: MDIO >= {goal}x {against} -> "
                            f"{'n/a' if got is None else f'{got:.2f}'}x {'MET' if ok else 'NOT MET'}")
    lines.append("rounds: e = the engine's rounds; otherwise two-phase rounds implied by the file domain of each "
                 "call over (aggregators x cb_buffer_size), summed over calls (the paper's Table I estimate).")
    lines += verdicts
    table = "\n".join(lines)
    print(table)
    (args.output / "multidataset.txt").write_text(table + "\n")
    (args.output / "multidataset.json").write_text(json.dumps(
        {"ranks": args.ranks, "repetitions": args.repetitions, "hints": HINTS, "rows": rows, "verdicts": verdicts},
        indent=2) + "\n")
    print(f"(table and JSON in {args.output}; {time.time() - start:.0f} s)", file=sys.stderr)
    failed = any("error" in r for r in rows) or not all(r.get("verified", True) for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
