#!/usr/bin/env python3
"""Multi-dataset I/O, in one run: the multi-dataset paper's strategies on its three patterns.

Cases (16 ranks by default): the E3SM F-like case (400 variables, runs of 1-16 columns, a
third of the data on 72 levels), the G-like case (50 variables, columns of 100 levels on a
permuted mesh) and the 3-D non-contiguous benchmark (datasets of 8^3 cubes spread at random).
Strategies, all through `strata run` on the same decomposition:

  MDIO strata        every dataset in ONE engine phase (raw file + index)
  MDIO strata-hdf5   the same phase into an HDF5 container (HDF5 1.10 metadata, engine data)
  MDIO hdf5-multi    HDF5's own: one H5Dwrite_multi of every dataset (only with a strata built
                     against HDF5 >= 1.14: make build-hdf5-114, then --strata build-hdf5-114/bin/strata)
  IDIO hdf5          one collective H5Dwrite per dataset (blocks OR-ed into one selection)
  per-block hdf5     one collective H5Dwrite per block (noncontig3d only by default: on F and G
                     it needs tens of thousands of calls; the table gives the count instead)
  IDIO mpiio         one MPI_File_write_at_all per variable
  mpiio-coll         one MPI_File_write_at_all for everything (an hindexed view)
  pnetcdf            iput of every block of every variable, one wait_all (the strongest peer)

Cheap cases (G-like, noncontig3d) run in 3 rounds, every strategy once per round with 3
repetitions, so that a change in the machine's load between strategies does not bias one of them;
their median is over the 9 writes. Every side runs with --no-advice and the same hints: one
aggregator (one node) and 4 MiB collective buffers (cb_nodes=1, cb_buffer_size=4194304); the
engine's defaults are the same.
Medians of >= 5 repetitions of the write (open and close included, fsync not included); the
file the last repetition wrote is then read back by a second run and every element verified.
For each strategy the table gives the collective calls of a write, the rounds (the engine's,
or the two-phase rounds the MPI-IO geometry implies, as the paper's Table I computes them)
and Equation 1's split of the last write. Targets (issue 6):
MDIO >= 3x IDIO hdf5 on F-like; MDIO >= 1.0x pnetcdf on every case. Where hdf5-multi runs, its
speed against IDIO hdf5 and the engine's HDF5 container is printed for every case (no target).
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
sys.path.insert(0, str(ROOT / "python"))
from strata.catalogue import StrataCatalogue  # noqa: E402  (the harness package, after the path above)

HINTS = "cb_nodes=1,cb_buffer_size=4194304"


REAL_MAPS = (
    "piodecomp16tasks16io01dims_ioid_514.dat",
    "piodecomp16tasks16io01dims_ioid_516.dat",
    "piodecomp16tasks16io02dims_ioid_548.dat",
)


def cases(real_maps: Path | None = None) -> list[dict]:
    extra = []
    if real_maps is not None:  # E3SM's own F case at 16 processes: 1, 323 and 63 variables on D1, D2, D3
        maps = ",".join(str(real_maps / m) for m in REAL_MAPS)
        extra = [
            {
                "name": "F-real",
                "kernel": ["e3sm", "--maps", maps, "--map-vars", "1,323,63"],
                "per_block": False,
                "rounds": 1,
            }
        ]
    return extra + [
        {"name": "F-like", "kernel": ["e3sm", "--case", "f", "--ncol", "1024"], "per_block": False, "rounds": 1},
        {"name": "G-like", "kernel": ["e3sm", "--case", "g", "--ncol", "1024"], "per_block": False, "rounds": 3},
        {
            "name": "noncontig3d",
            "kernel": ["noncontig3d", "--datasets", "16", "--grid", "32x32x32"],
            "per_block": True,
            "rounds": 3,
        },
    ]


STRATEGIES = [
    ("MDIO strata", ["--backend", "strata"]),
    ("MDIO strata-hdf5", ["--backend", "strata", "--container", "hdf5"]),
    ("MDIO hdf5-multi", ["--backend", "hdf5-multi"]),
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

    def most_blocks(path: Path) -> int | None:
        desc = strata(["decomp", "describe", str(path), "--json", str(work / "d.json")], env)
        return None if desc.returncode else int(json.loads((work / "d.json").read_text())["blocks_per_rank"]["max"])

    if params["case"] == "maps":  # real maps: as many ranks as the map's npes
        counts = [most_blocks(Path(m["file"])) for m in params["maps"]]
        if None in counts or any(m["npes"] != ranks for m in params["maps"]):
            return None
        return sum(int(m["vars"]) * int(c) for m, c in zip(params["maps"], counts, strict=True))
    seed, ncol, lev, run = 1, params["ncol"], params["lev"], params["max_run"]
    f = params["case"] == "f"
    maps = (
        [("d1", seed * 3 + 1, 1), ("d2", seed, params["vars_2d"] - 1), ("d3", seed, params["vars_3d"])]
        if f
        else [("d1", seed, params["vars_2d"]), ("cells", seed, params["vars_3d"])]
    )
    total = params["fixed_vars"]  # written whole by rank 0: one call each
    for kind, s, nvars in maps:
        path = work / f"{kind}.map"
        gen = strata(
            [
                "decomp",
                "generate",
                "--map",
                kind,
                "--ncol",
                str(ncol),
                "--lev",
                str(lev),
                "--npes",
                str(ranks),
                "--max-run",
                str(run),
                "--seed",
                str(s),
                "--output",
                str(path),
            ],
            env,
        )
        most = most_blocks(path) if gen.returncode == 0 else None
        if most is None:
            return None
        total += nvars * most
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=16)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument(
        "--per-block-everywhere",
        action="store_true",
        help="also run per-block hdf5 on the e3sm cases (tens of thousands of collective calls)",
    )
    parser.add_argument(
        "--real-maps",
        type=Path,
        metavar="DIR",
        help="also run E3SM's real F-case maps (piodecomp16tasks16io0*dims_ioid_5*.dat) from DIR",
    )
    parser.add_argument(
        "--strata",
        type=Path,
        default=None,
        help="the strata program (default build/bin/strata; build-hdf5-114/bin/strata adds hdf5-multi)",
    )
    parser.add_argument("--dir", type=Path, help="where data files go (default: a temporary folder in bench-output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output", help="folder for the table and JSON")
    args = parser.parse_args()
    global STRATA
    STRATA = (args.strata or STRATA).resolve()
    if args.repetitions < 5:
        parser.error("--repetitions must be at least 5")
    if args.real_maps is not None and not all((args.real_maps / m).is_file() for m in REAL_MAPS):
        parser.error(f"--real-maps {args.real_maps}: expected {', '.join(REAL_MAPS)} there")
    all_cases = cases(args.real_maps)
    args.output.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="multidataset-bench.", dir=args.dir or args.output))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = shutil.which("mpirun") or "mpirun"

    rows: list[dict] = []
    start = time.time()
    built = StrataCatalogue.from_binary(STRATA).backends
    # A strategy needs its backend, and the engine's HDF5 container needs the hdf5 backend's library.
    strategies = [s for s in STRATEGIES if s[1][1] in built and ("hdf5" in built or "hdf5" not in s[1])]
    if "hdf5-multi" not in built:
        print(
            f"MDIO hdf5-multi: skipped, {STRATA} has no hdf5-multi (it needs HDF5 >= 1.14: make build-hdf5-114, "
            "then --strata build-hdf5-114/bin/strata)",
            file=sys.stderr,
        )
    jobs = [(c, r, s) for c in all_cases for r in range(c["rounds"]) for s in strategies]
    found: dict[tuple[str, str], dict] = {}
    for i, (case, rnd, (label, extra)) in enumerate(jobs, 1):
        key = (case["name"], label)
        if label == "per-block hdf5" and not (case["per_block"] or args.per_block_everywhere):
            found.setdefault(key, {"case": case["name"], "strategy": label, "skipped": True})
            continue
        if "error" in found.get(key, {}):
            continue
        print(
            f"[{i}/{len(jobs)}] {case['name']:12s} {label:18s} round {rnd + 1} "
            f"(elapsed {time.time() - start:5.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        json_path = work / "run.json"
        reps = args.repetitions if case["rounds"] == 1 else max(3, -(-args.repetitions // case["rounds"]))
        base = [
            mpirun,
            "-n",
            str(args.ranks),
            "--oversubscribe",
            str(STRATA),
            "run",
            *case["kernel"],
            *extra,
            "--no-advice",
            "--hints",
            HINTS,
            "--output",
            str(work / "data"),
            "--quiet",
        ]
        proc = subprocess.run(
            [*base, "--write", "--repetitions", str(reps), "--json", str(json_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=3600,
        )
        last_round = rnd == case["rounds"] - 1
        if proc.returncode == 0 and last_round:  # the last repetition's file, every element checked
            check = subprocess.run(
                [*base, "--read", "--verify", "--json", str(work / "check.json")],
                capture_output=True,
                text=True,
                env=env,
                timeout=3600,
            )
            if check.returncode != 0:
                proc = check
        for f in work.glob("data*"):
            f.unlink()
        if proc.returncode != 0:
            found[key] = {"case": case["name"], "strategy": label, "error": proc.stderr.strip()[-400:]}
            continue
        record = json.loads(json_path.read_text())
        writes = [r["write"] for r in record["repetitions"]]
        row = found.setdefault(
            key,
            {
                "case": case["name"],
                "strategy": label,
                "all_mib_s": [],
                "all_s": [],
                "bytes": writes[0]["bytes"],
                "params": record["params"],
            },
        )
        row["all_mib_s"] += [w["bandwidth_mib_s"] for w in writes]
        row["all_s"] += [w["time_s"] for w in writes]
        row["collective"] = writes[-1].get("collective")
        if last_round:
            row["verified"] = json.loads((work / "check.json").read_text())["verified"]
    for row in found.values():
        if "all_mib_s" in row:
            row["median_mib_s"] = statistics.median(row["all_mib_s"])
            row["median_s"] = statistics.median(row["all_s"])
    rows = [found[(c["name"], s[0])] for c in all_cases for s in strategies if (c["name"], s[0]) in found]
    for case in all_cases:
        params = next((r["params"] for r in rows if r["case"] == case["name"] and "params" in r), None)
        skipped = next((r for r in rows if r["case"] == case["name"] and r.get("skipped")), None)
        if skipped is not None and params is not None:
            skipped["calls_needed"] = per_block_calls(case, args.ranks, params, work, env)
    shutil.rmtree(work, ignore_errors=True)

    lines = [
        f"Multi-dataset I/O: {args.ranks} ranks on this machine, >= {args.repetitions} repetitions, median write "
        "bandwidth (open and close included, fsync not included); the last write of each verified on read-back.",
        f"Hints on every side: {HINTS} (--no-advice). Split = Equation 1 of the last write, max over ranks: "
        "I/O, communication, collective overhead (waiting in a call for the last rank), library (HDF5/PnetCDF "
        "outside MPI-IO; for the engine: the HDF5 container's metadata).",
        "",
    ]
    head = (
        f"{'case':12s} {'strategy':18s} {'MiB/s':>9s} {'median s':>9s} {'MDIO x':>7s} {'calls':>7s} "
        f"{'rounds':>7s}  split: io / comm / overhead / library (s)"
    )
    lines += [head, "-" * len(head)]
    verdicts = []
    for case in all_cases:
        sub = [r for r in rows if r["case"] == case["name"]]
        mdio = next((r for r in sub if r["strategy"] == "MDIO strata" and "median_mib_s" in r), None)
        for r in sub:
            if r.get("skipped"):
                need = r.get("calls_needed")
                lines.append(
                    f"{case['name']:12s} {r['strategy']:18s} not run: "
                    f"{need if need is not None else 'many'} collective calls per write "
                    "(run with --per-block-everywhere)"
                )
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
            lines.append(
                f"{case['name']:12s} {r['strategy']:18s} {r['median_mib_s']:9.2f} {r['median_s']:9.3f} "
                f"{ratio:7.2f} {c.get('calls', '-'):>7} {rounds:>7}  {split}"
            )
        lines.append("")

        def ratio_to(strategy: str, sub: list[dict] = sub) -> float | None:
            r = next((x for x in sub if x["strategy"] == strategy and "mdio_ratio" in x), None)
            return r["mdio_ratio"] if r else None

        multi = next((x for x in sub if x["strategy"] == "MDIO hdf5-multi" and "median_mib_s" in x), None)
        for against in ("IDIO hdf5", "MDIO strata-hdf5") if multi else ():
            other = next((x for x in sub if x["strategy"] == against and "median_mib_s" in x), None)
            if other:
                verdicts.append(
                    f"{case['name']}: hdf5-multi at {multi['median_mib_s'] / other['median_mib_s']:.2f}x "
                    f"{against}'s speed"
                )
        goals = [("pnetcdf", 1.0)] + ([("IDIO hdf5", 3.0)] if case["name"].startswith("F-") else [])
        for against, goal in goals:
            got = ratio_to(against)
            ok = got is not None and got >= goal
            verdicts.append(
                f"target {case['name']}: MDIO >= {goal}x {against} -> "
                f"{'n/a' if got is None else f'{got:.2f}'}x {'MET' if ok else 'NOT MET'}"
            )
    lines.append(
        "rounds: e = the engine's rounds; otherwise two-phase rounds implied by the file domain of each "
        "call over (aggregators x cb_buffer_size), summed over calls (the paper's Table I estimate)."
    )
    lines += verdicts
    table = "\n".join(lines)
    print(table)
    (args.output / "multidataset.txt").write_text(table + "\n")
    (args.output / "multidataset.json").write_text(
        json.dumps(
            {"ranks": args.ranks, "repetitions": args.repetitions, "hints": HINTS, "rows": rows, "verdicts": verdicts},
            indent=2,
        )
        + "\n"
    )
    print(f"(table and JSON in {args.output}; {time.time() - start:.0f} s)", file=sys.stderr)
    failed = any("error" in r for r in rows) or not all(r.get("verified", True) for r in rows if not r.get("skipped"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
