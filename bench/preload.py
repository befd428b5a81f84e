#!/usr/bin/env python3
"""Issue 29's benchmark: unmodified programs with Strata's drop-in layer (libstrata_preload.so)
against the same programs without it, each timed by ITS OWN figure, interleaved.

Workloads (the issue's acceptance; targets are speed-ups, plain time / preloaded time):
  e3sm-pnetcdf-ompio  E3SM-IO F case, its own map (datasets/map_f_case_16p.nc), -a pnetcdf
                      -x canonical, h0 file (-f 0), 16 ranks, OMPIO           target >= 5
  e3sm-pnetcdf-romio  the same under ROMIO (--mca io romio321)                target >= 2
  e3sm-hdf5-ompio     E3SM-IO's HDF5 path, -a hdf5 -x canonical (double: HDF5 1.10's collective
                      path), h0 file, 16 ranks, OMPIO                         target >= 2
  ior-small           IOR -a MPIIO -c -b 256k -t 4k -s 5, 8 ranks, OMPIO    target >= 3
  ior-large           IOR -a MPIIO -c -b 4m -t 1m -s 2, 4 ranks, OMPIO      target >= 0.95

Each round runs every workload's two variants (plain, preloaded) in a shuffled order (recorded
seed), each launch after a sync() and after waiting (up to --quiet-wait s) for other programs' load
to end. Own figures: E3SM-IO's "end-to-end time" max (its barrier before the create to after the
close); IOR's write span (aggregate bytes / its bandwidth: earliest open to latest close), one per
repetition (-i). Medians over every write of every round. Beside each row: the layer's report
(STRATA_PRELOAD_REPORT) of the preloaded runs, calls through the engine and passed through (with
reasons), bytes, plan reuse. OMPIO runs with its write data sieving off (../shared/MPI-IO-NOTES.md),
both ways. Byte identity is the tests' (tests/python/test_preload.py, tests/preload/test_peers.py),
not this script's. The peers are built once by `make peers` (bench/peers.py --build-only).
Writes bench-output/preload.{txt,json}."""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
from peers import MIB, parse_e3sm_io, wait_for_quiet  # noqa: E402  (bench/peers.py: E3SM-IO's output, load)
from strata.preload_runs import Runner, built_peers, engine_calls, library_path, passthrough_reasons  # noqa: E402

IOR_SEED = "271828"  # -G: IOR's data without the start time in it


def workloads(e3sm_root: Path | None, ior: Path | None, ior_reps: int) -> list[dict]:
    out = []
    if e3sm_root is not None:
        map_nc = e3sm_root / "datasets" / "map_f_case_16p.nc"
        for name, api, component, target, ext in (
            ("e3sm-pnetcdf-ompio", ["-a", "pnetcdf", "-x", "canonical"], "ompio", 5.0, ".nc"),
            ("e3sm-pnetcdf-romio", ["-a", "pnetcdf", "-x", "canonical"], "romio", 2.0, ".nc"),
            ("e3sm-hdf5-ompio", ["-a", "hdf5", "-x", "canonical"], "ompio", 2.0, ".h5"),
        ):
            out.append(
                {
                    "name": name,
                    "kind": "e3sm",
                    "ranks": 16,
                    "component": component,
                    "target": target,
                    "label": f"E3SM-IO F case {' '.join(api)} -f 0, 16 ranks, {component}",
                    "argv": [
                        str(e3sm_root / "src" / "e3sm_io"),
                        str(map_nc),
                        *api,
                        "-f",
                        "0",
                        "-o",
                        "{dir}/e3sm" + ext,
                    ],
                }
            )
    if ior is not None:
        for name, ranks, b, t, s, target in (
            ("ior-small", 8, "256k", "4k", 5, 3.0),
            ("ior-large", 4, "4m", "1m", 2, 0.95),
        ):
            out.append(
                {
                    "name": name,
                    "kind": "ior",
                    "ranks": ranks,
                    "component": "ompio",
                    "target": target,
                    "label": f"IOR -a MPIIO -c -b {b} -t {t} -s {s}, {ranks} ranks, ompio",
                    "bytes": size_bytes(b) * s * ranks,
                    "argv": [
                        str(ior),
                        "-a",
                        "MPIIO",
                        "-c",
                        "-b",
                        b,
                        "-t",
                        t,
                        "-s",
                        str(s),
                        "-w",
                        "-i",
                        str(ior_reps),
                        "-G",
                        IOR_SEED,
                        "-o",
                        "{dir}/ior.dat",
                        "-O",
                        "summaryFormat=JSON",
                        "-O",
                        "summaryFile={dir}/ior.json",
                    ],
                }
            )
    return out


def size_bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1].lower() in units else int(text)


def own_times(w: dict, stdout: str, folder: Path) -> list[float]:
    """The program's own write times for one launch (see the module's doc)."""
    if w["kind"] == "e3sm":
        p = parse_e3sm_io(stdout)
        if "end-to-end" not in p.get("max", {}):
            raise ValueError("no end-to-end time in E3SM-IO's output: " + stdout[-300:])
        return [p["max"]["end-to-end"]]
    summary = json.loads((folder / "ior.json").read_text())
    results = [r for r in summary["tests"][0]["Results"] if r["access"] == "write"]
    return [w["bytes"] / MIB / r["bwMiB"] for r in results]


def profile(report: dict | None) -> dict:
    """What the layer says it did, in a few numbers (the report's own keys: docs/preload.md)."""
    if not report:
        return {"report": "missing"}
    keep = {k: v for k, v in report.items() if isinstance(v, int | float)}
    keep["reasons"] = passthrough_reasons(report)
    return keep


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5 unless --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, 1 IOR repetition")
    parser.add_argument("--only", default="", help="workloads, comma-separated (default: all)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build-peers", help="where `make peers` built them")
    parser.add_argument("--seed", type=int, default=2026, help="shuffle seed")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=30.0,
        help="seconds to wait before a launch for other programs' load to end (0: never)",
    )
    parser.add_argument("--dir", type=Path, help="where data files go (default: a folder in --output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output")
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    elif args.rounds < 5:
        parser.error("--rounds must be at least 5 (--quick for a smoke run)")
    start = time.time()

    def log(message: str) -> None:
        print(f"[{time.time() - start:7.1f} s] {message}", file=sys.stderr, flush=True)

    if not library_path(ROOT).exists():
        sys.exit(f"preload: {library_path(ROOT)} is missing (make build; the drop-in layer is src/preload)")
    e3sm = built_peers(args.build_dir, "e3sm-io-*/e3sm-io")
    ior = built_peers(args.build_dir, "ior-*/ior/src/ior")
    if not e3sm and not ior:
        sys.exit(f"preload: no peers in {args.build_dir} (make peers)")
    chosen = workloads(e3sm[-1] if e3sm else None, ior[-1] if ior else None, 1 if args.quick else 3)
    if args.only:
        wanted = set(args.only.split(","))
        chosen = [w for w in chosen if w["name"] in wanted]
    args.output.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="preload.", dir=args.dir or args.output))
    runner = Runner(ROOT)
    rng = random.Random(args.seed)
    load_before = os.getloadavg()
    samples = {w["name"]: {"plain": [], "preload": [], "errors": [], "reports": [], "busy": []} for w in chosen}
    for r in range(args.rounds):
        launches = [(w, p) for w in chosen for p in (False, True)]
        rng.shuffle(launches)
        for w, pre in launches:
            way = "preload" if pre else "plain"
            log(f"round {r + 1}/{args.rounds}: {w['name']} {way}")
            folder = tmp / "data"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            os.sync()
            s = samples[w["name"]]
            s["busy"].append(wait_for_quiet(args.quiet_wait, log))
            argv = [a.replace("{dir}", str(folder)) for a in w["argv"]]
            run = runner.launch(argv, w["ranks"], w["component"], preload=pre, timeout=1800, mode=None)
            if run.returncode != 0:
                s["errors"].append(f"{way}: {run.why()[-400:]}")
                log(f"  FAILED: {run.why()[-300:]}")
                continue
            try:
                s[way] += own_times(w, run.stdout, folder)
            except (ValueError, OSError, KeyError, json.JSONDecodeError) as e:
                s["errors"].append(f"{way}: {e}")
                continue
            if pre:
                s["reports"].append(run.report)
                if engine_calls(run.report) == 0:
                    log("  the engine never ran in this launch (everything passed through)")
    shutil.rmtree(tmp, ignore_errors=True)
    load_after = os.getloadavg()

    lines = [
        f"{'SMOKE RUN (--quick), not a result. ' if args.quick else ''}Drop-in layer (issue 29): "
        f"{args.rounds} interleaved round(s), shuffle seed {args.seed}; each program's own write time, "
        "medians; speed-up = plain / preloaded.",
        f"Machine: {platform.node()}, {os.cpu_count()} CPUs; load average before {load_before[0]:.2f}, "
        f"after {load_after[0]:.2f}.",
        "",
        f"{'workload':58s} {'plain s':>9s} {'preload s':>9s} {'speed-up':>8s} {'target':>7s}  verdict",
    ]
    out_rows = []
    for w in chosen:
        s = samples[w["name"]]
        plain = statistics.median(s["plain"]) if s["plain"] else None
        pre = statistics.median(s["preload"]) if s["preload"] else None
        ratio = plain / pre if plain and pre else None
        last = s["reports"][-1] if s["reports"] else None
        engine_ran = all(engine_calls(rep) > 0 for rep in s["reports"]) if s["reports"] else False
        verdict = (
            "FAILED"
            if s["errors"] or ratio is None
            else "met"
            if ratio >= w["target"] and engine_ran
            else "met (all passed through)"
            if ratio >= w["target"]
            else "MISSED"
        )
        busy = max(s["busy"]) if s["busy"] else 0.0
        lines.append(
            f"{w['label']:58s} {plain or float('nan'):9.3f} {pre or float('nan'):9.3f} "
            f"{ratio or float('nan'):8.2f} {w['target']:7.2f}  {verdict}"
        )
        prof = profile(last)
        lines.append(f"  layer: {json.dumps(prof, sort_keys=True)}")
        if busy > 0.2:
            lines.append(f"  (busiest launch start: CPU {busy:.0%} busy with other programs)")
        for err in s["errors"][:2]:
            lines.append(f"  error: {err[-300:]}")
        out_rows.append(
            {
                "name": w["name"],
                "label": w["label"],
                "ranks": w["ranks"],
                "component": w["component"],
                "argv": w["argv"],
                "plain_s": s["plain"],
                "preload_s": s["preload"],
                "plain_median_s": plain,
                "preload_median_s": pre,
                "speedup": ratio,
                "target": w["target"],
                "verdict": verdict,
                "profile": prof,
                "reports": s["reports"],
                "errors": s["errors"],
                "busy": s["busy"],
            }
        )
    text = "\n".join(lines) + "\n"
    print(text, end="")
    (args.output / "preload.txt").write_text(text)
    (args.output / "preload.json").write_text(
        json.dumps(
            {
                "rounds": args.rounds,
                "seed": args.seed,
                "quick": args.quick,
                "library": str(library_path(ROOT)),
                "load_before": load_before,
                "load_after": load_after,
                "workloads": out_rows,
            },
            indent=1,
        )
    )
    log(f"wrote {args.output / 'preload.txt'} and preload.json")
    return 0 if all(r["verdict"].startswith("met") for r in out_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
