#!/usr/bin/env python3
"""Issue 30's replay acceptance: every Darshan log the `darshan` wheel ships, replayed through
`posix` and through the engine (`strata replay --backend posix,strata`), interleaved.

For each log (duplicates shipped twice are replayed once): the trace is made once (rank 0's
converter, `--trace-out`), then each round replays that trace in one launch through both
backends, in an order that alternates from round to round, after a sync() and after waiting (up
to --quiet-wait s) for other programs' load to end. Rank count: the job's, capped at --ranks
(larger jobs replay folded, as `strata replay` does); bytes capped by --max-bytes (large jobs
are scaled down by the converter, which keeps their request sizes and pattern).

Figures, per log: the trace's write requests and bytes; the requests each backend issued (posix:
one pwrite per request; strata: its own file requests, the aggregators' and the direct writers');
each backend's write time (the slowest rank's open + write + close), the median over rounds; and
posix's time over strata's. Targets (issue 30): strata's requests <= the trace's on every log; on
logs whose trace writes >= 16 MiB, strata >= 1.0x posix. Under each row, the engine's profile:
its strategy, plan / write / close, aggregators, rounds and one-sided operations.
Writes bench-output/replay.{txt,json}."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from peers import ENV, MIB, mpirun, wait_for_quiet  # noqa: E402  (bench/peers.py: the launcher, load)

STRATA = ROOT / "build" / "bin" / "strata"
PYTHON = ROOT / ".venv" / "bin" / "python"
LARGE = 16 * MIB  # logs whose trace writes at least this much must replay at >= 1.0x posix


def shipped_logs() -> list[Path]:
    """The logs the darshan wheel ships, each content once (several are shipped twice)."""
    out = subprocess.run([str(PYTHON), "-m", "strata.replay", "--examples"], capture_output=True, text=True, check=True)
    seen: set[str] = set()
    logs = []
    for line in out.stdout.split():
        path = Path(line)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:
            seen.add(digest)
            logs.append(path)
    return logs


def job_ranks(log: Path) -> int:
    import darshan  # pydarshan, installed by make setup

    with darshan.DarshanReport(str(log), read_all=False) as r:
        return int(r.metadata["job"]["nprocs"])


def replay(ranks: int, source: Path, backends: str, out: Path, record: Path, extra: list[str]) -> dict:
    record.unlink(missing_ok=True)
    cmd = [
        *mpirun(ranks, []),
        str(STRATA),
        "replay",
        str(source),
        "--backend",
        backends,
        "--no-reads",
        "--output",
        str(out),
        "--json",
        str(record),
        "--quiet",
        *extra,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=ENV)
    if proc.returncode != 0 or not record.exists():
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return json.loads(record.read_text())


def engine_profile(row: dict) -> str:
    """The engine's figures of a strata replay, from its run record (empty if absent)."""
    reps = row.get("record", {}).get("repetitions", [])
    engine = reps[0].get("write", {}).get("engine") if reps else None
    if not engine:
        return ""
    return (
        f"strategy {engine.get('strategy', '?')}, plan {engine.get('plan_s', 0):.4f} s, write "
        f"{engine.get('execute_s', 0):.4f} s, close {engine.get('close_s', 0):.4f} s, "
        f"{engine.get('aggregators', 0)} aggregator(s), {engine.get('rounds', 0)} round(s), "
        f"{engine.get('operations', 0)} one-sided operation(s); predicted {engine.get('predicted_s', 0):.4f} s, "
        f"measured {engine.get('measured_s', 0):.4f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5 unless --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round")
    parser.add_argument("--ranks", type=int, default=4, help="ranks at most (a larger job replays folded)")
    parser.add_argument("--max-bytes", default="256M", help="bytes a replay writes at most (the converter scales)")
    parser.add_argument("--only", help="logs whose file name contains one of these words, comma-separated")
    parser.add_argument("--quiet-wait", type=float, default=30.0, help="seconds to wait for others' load to end")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--dir", type=Path, help="where the replays write (default: a folder in --output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output")
    args = parser.parse_args()
    if args.rounds < 5 and not args.quick:
        parser.error("--rounds must be >= 5 (or --quick)")
    rounds = 1 if args.quick else args.rounds
    if not STRATA.exists():
        sys.exit(f"replay bench: {STRATA} is missing (make build)")
    args.output.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="replay-", dir=args.dir or args.output))
    started = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - started:7.1f} s] {msg}", flush=True)

    logs = shipped_logs()
    if args.only:
        words = args.only.split(",")
        logs = [p for p in logs if any(w in p.name for w in words)]
    cases = []
    for path in logs:
        ranks = max(1, min(job_ranks(path), args.ranks))
        trace = work / (path.stem + ".trace.json")
        log(f"{path.name}: making its trace ({ranks} rank(s))")
        first = replay(
            ranks,
            path,
            "posix",
            work / "convert",
            work / "convert.json",
            ["--trace-out", str(trace), "--max-bytes", args.max_bytes],
        )
        t = first["trace_figures"]
        cases.append(
            {
                "log": path.name,
                "path": str(path),
                "ranks": ranks,
                "job_ranks": first["job_ranks"],
                "trace": str(trace),
                "trace_writes": int(t["writes"]),
                "trace_bytes": int(t["bytes"]),
                "samples": {"posix": [], "strata": []},
                "requests": {},
                "profile": "",
                "busy": [],
            }
        )
    rng = random.Random(args.seed)
    for r in range(rounds):
        order = list(cases)
        rng.shuffle(order)
        for c in order:
            backends = "posix,strata" if r % 2 == 0 else "strata,posix"
            os.sync()
            c["busy"].append(wait_for_quiet(args.quiet_wait, log))
            log(f"round {r + 1}/{rounds}: {c['log']} ({backends})")
            rep = replay(c["ranks"], Path(c["trace"]), backends, work / "out", work / "record.json", [])
            for row in rep["replays"]:
                b = row["backend"]
                if "failure" in row:
                    raise RuntimeError(f"{c['log']}: {b} failed: {row['failure']}")
                c["samples"][b].append(float(row["time_s"]))
                c["requests"][b] = int(row["requests"])
                if b == "strata":
                    c["profile"] = engine_profile(row)
            for f in work.glob("out*"):  # each replay's output (and the engine's index beside it)
                if f.is_dir():
                    shutil.rmtree(f)
                else:
                    f.unlink()

    lines = [
        f"Replayed Darshan logs (issue 30): {rounds} interleaved round(s), seed {args.seed}; every log the darshan "
        f"wheel ships, once each; at most {args.ranks} ranks and {args.max_bytes} bytes a replay.",
        f"Machine: {platform.node()}, {os.cpu_count()} CPUs. Time: the slowest rank's open + write + close, medians.",
        "",
        f"{'log':<60} {'ranks':>5} {'trace MiB':>9} {'requests trace/posix/strata':>28} "
        f"{'posix s':>8} {'strata s':>8} {'x posix':>7}  verdict",
    ]
    ok_all = True
    for c in cases:
        p, s = statistics.median(c["samples"]["posix"]), statistics.median(c["samples"]["strata"])
        ratio = p / s if s > 0 else float("inf")
        c.update({"posix_s": p, "strata_s": s, "ratio": ratio})
        verdicts = []
        if c["requests"]["strata"] > c["trace_writes"]:
            verdicts.append("MORE REQUESTS than the trace")
        if c["trace_bytes"] >= LARGE:
            verdicts.append("met" if ratio >= 1.0 else "MISSED (>= 1.0x posix)")
        if not verdicts:
            verdicts.append("met (requests; under 16 MiB: no speed target)")
        c["verdict"] = "; ".join(verdicts)
        ok_all = ok_all and "MISSED" not in c["verdict"] and "MORE" not in c["verdict"]
        name = c["log"] if len(c["log"]) <= 60 else c["log"][:57] + "..."
        reqs = f"{c['trace_writes']}/{c['requests']['posix']}/{c['requests']['strata']}"
        lines.append(
            f"{name:<60} {c['ranks']:>5} {c['trace_bytes'] / MIB:>9.2f} {reqs:>28} {p:>8.4f} {s:>8.4f} "
            f"{ratio:>7.2f}  {c['verdict']}"
        )
        if c["profile"]:
            lines.append(f"    engine: {c['profile']}")
        if max(c["busy"]) > 0.2:
            lines.append(f"    (the CPU was up to {max(c['busy']):.0%} busy before a launch: other programs)")
    lines.append("")
    lines.append("every target met" if ok_all else "some targets MISSED (see the verdicts)")
    text = "\n".join(lines) + "\n"
    print(text)
    (args.output / "replay.txt").write_text(text)
    (args.output / "replay.json").write_text(json.dumps({"rounds": rounds, "cases": cases}, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    log(f"wrote {args.output / 'replay.txt'} and replay.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
