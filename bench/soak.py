#!/usr/bin/env python3
"""Soak: 1000 consecutive small engine phases in one process show no growth in resident memory
and no leaked file descriptors or MPI windows.

Runs build/bin/soak_phases (bench/soak_phases.cpp) under mpirun for each rank count: every
phase writes 2 blocks of 3000 8-byte values per rank through the engine (16 KiB buffers, so
several rounds a phase), reads them back and verifies every value; every 10 phases the engine
is replaced by a fresh one. Every SAMPLE phases each rank samples its resident memory
(/proc/self/statm), its open descriptors (/proc/self/fd) and the MPI windows alive (PMPI
wrappers of MPI_Win_allocate/_allocate_shared/_create/_create_dynamic and MPI_Win_free); the
table shows the maxima over ranks, and the growth from the first sample to the last.

Exits non-zero when a value reads back wrong, when resident memory grows by more than
--tolerance-kib (default 1024 KiB: room for allocator noise, far below what leaking one
phase's 48 KiB of buffers 900 times would give), or when descriptors or live windows grow at all.

  .venv/bin/python bench/soak.py                       # 1000 phases on 1, 2 and 4 ranks
  .venv/bin/python bench/soak.py --phases 200 --ranks 3 --json soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "build" / "bin" / "soak_phases"


def run(ranks: int, phases: int, sample: int, tolerance_kib: int, directory: Path) -> tuple[int, list[dict], dict]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [
        shutil.which("mpirun") or "mpirun",
        "-n",
        str(ranks),
        "--oversubscribe",
        str(DRIVER),
        str(phases),
        str(sample),
        str(directory),
        str(tolerance_kib),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60 + phases)
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    samples = [r for r in records if "summary" not in r]
    summary = next((r for r in records if "summary" in r), {})
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
    return proc.returncode, samples, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--phases", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=100, help="sample every SAMPLE phases (default 100)")
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--tolerance-kib", type=int, default=1024, help="allowed RSS growth (default 1024 KiB)")
    parser.add_argument("--json", type=Path, help="write every sample and summary here")
    args = parser.parse_args()
    if not DRIVER.exists():
        sys.exit(f"soak: {DRIVER} is missing: run `make build` first")

    results = []
    status = 0
    for ranks in args.ranks:
        with tempfile.TemporaryDirectory(prefix="strata-soak-") as tmp:
            code, samples, summary = run(ranks, args.phases, args.sample, args.tolerance_kib, Path(tmp))
        print(f"\n{ranks} rank(s), {args.phases} phases (write + verified read each), maxima over ranks")
        print(f"{'phase':>6} {'RSS KiB':>9} {'open fds':>9} {'windows alive':>14} {'windows created':>16}")
        for s in samples:
            print(
                f"{s['phase']:>6} {s['rss_kib']:>9} {s['fds']:>9} {s['windows_alive']:>14} "
                f"{s['windows_created']:>16}"
            )
        if summary:
            print(
                f"growth phase {summary['from_phase']} -> {summary['to_phase']}: "
                f"RSS {summary['rss_growth_kib']:+d} KiB "
                f"(tolerance {summary['rss_tolerance_kib']} KiB), fds {summary['fd_growth']:+d}, "
                f"windows {summary['window_growth']:+d}, values wrong {summary['bad_values']}: "
                f"{'ok' if code == 0 else 'FAIL'}"
            )
        else:
            print(f"no summary (exit status {code}): FAIL")
        status = status or (code if code != 0 else 0) or (0 if summary else 1)
        results.append({"ranks": ranks, "exit_status": code, "samples": samples, "summary": summary})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
