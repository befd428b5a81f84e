#!/usr/bin/env python3
"""Compare every backend on the ior and array1d kernels in one run.

Each configuration runs `strata run ... --json` under mpirun (several repetitions inside one
launch); the table gives the median write and read bandwidth and the ratio of each backend to
the baseline (mpiio-coll under Open MPI's default component). Used by `make demo` (small, fast)
and `make bench` (larger, with fsync). Writes the table and a JSON summary to the output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STRATA = ROOT / "build" / "bin" / "strata"
sys.path.insert(0, str(ROOT / "python"))
from strata.catalogue import StrataCatalogue  # noqa: E402  (the harness package, after the path above)

PRESETS = {
    "demo": {
        "ranks": 4,
        "repetitions": 3,
        "fsync": False,
        "kernels": {
            "ior": ["--block-size", "256K", "--transfer-size", "64K", "--segments", "4"],
            "array1d": ["--dist", "random", "--size", "256K"],
        },
        "out": "demo-output",
    },
    "bench": {
        "ranks": 8,
        "repetitions": 5,
        "fsync": True,
        "kernels": {
            "ior": ["--block-size", "4M", "--transfer-size", "1M", "--segments", "4"],
            "array1d": ["--dist", "random", "--size", "4M"],
        },
        "out": "bench-output",
    },
}

# (label, backend, extra strata args, extra mpirun args): every backend of the build as it comes
# (variants()), then these settings of some of them.
EXTRA_VARIANTS = [
    ("posix file-per-process", "posix", ["--file-per-process"], []),
    ("mpiio-coll (romio)", "mpiio-coll", [], ["--mca", "io", "romio321"]),
    (
        "mpiio-coll (romio, cb_config_list=*:*)",
        "mpiio-coll",
        ["--hints", "cb_config_list=*:*"],
        ["--mca", "io", "romio321"],
    ),
]
BASELINE = "mpiio-coll (ompio)"


def variants(backends: tuple[str, ...]) -> list[tuple[str, str, list[str], list[str]]]:
    """One variant per row of the build's backend table (its catalogue), then EXTRA_VARIANTS."""
    plain = [(f"{b} (ompio)" if b == "mpiio-coll" else b, b, [], []) for b in backends]
    return plain + [v for v in EXTRA_VARIANTS if v[1] in backends]


def aggregators(record: dict) -> str:
    if record.get("backend") == "posix":
        return "-"
    hints = record.get("hints", {})
    if "cb_nodes" in hints and record.get("io_component") == "romio":
        return hints["cb_nodes"]
    value = hints.get("cb_nodes", hints.get("ompio:io_ompio_num_aggregators", "?"))
    return "auto" if value == "-1" else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="demo")
    parser.add_argument("--ranks", type=int, help="override the preset's rank count")
    parser.add_argument("--repetitions", type=int, help="override the preset's repetitions")
    parser.add_argument("--output", type=Path, help="folder for data files, JSON and the table")
    args = parser.parse_args()
    preset = PRESETS[args.preset]
    ranks = args.ranks or preset["ranks"]
    reps = args.repetitions or preset["repetitions"]
    out = args.output or ROOT / preset["out"]
    out.mkdir(parents=True, exist_ok=True)
    if not STRATA.exists():
        print(f"{STRATA} is missing: run `make build`", file=sys.stderr)
        return 2

    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mpirun = shutil.which("mpirun") or "mpirun"
    configs = [(k, v) for k in preset["kernels"] for v in variants(StrataCatalogue.from_binary(STRATA).backends)]
    results: list[dict] = []
    start = time.time()
    for i, (kernel, (label, backend, extra, mca)) in enumerate(configs, 1):
        tag = (
            f"{kernel}-{label}".replace(" ", "_")
            .replace("(", "")
            .replace(")", "")
            .replace("*", "x")
            .replace(":", "")
            .replace(",", "")
            .replace("=", "")
        )
        json_path = out / f"{tag}.json"
        cmd = [
            mpirun,
            *mca,
            "-n",
            str(ranks),
            "--oversubscribe",
            str(STRATA),
            "run",
            kernel,
            *preset["kernels"][kernel],
            "--backend",
            backend,
            *extra,
            "--write",
            "--read",
            "--verify",
            "--repetitions",
            str(reps),
            "--output",
            str(out / f"{tag}.data"),
            "--json",
            str(json_path),
            "--quiet",
        ]
        if preset["fsync"]:
            cmd.append("--fsync")
        elapsed = time.time() - start
        eta = elapsed / (i - 1) * (len(configs) - i + 1) if i > 1 else 0
        print(
            f"[{i}/{len(configs)}] {kernel:8s} {label:40s} (elapsed {elapsed:5.1f} s, eta {eta:5.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        for f in out.glob(f"{tag}.data*"):
            f.unlink()
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            errors = [line for line in proc.stderr.splitlines() if line.startswith("strata: error:")]
            results.append(
                {"kernel": kernel, "label": label, "error": errors[:1] or proc.stderr.strip().splitlines()[-1:]}
            )
            continue
        record = json.loads(json_path.read_text())
        results.append(
            {
                "kernel": kernel,
                "label": label,
                "backend": backend,
                "verified": record["verified"],
                "bytes": record["repetitions"][0]["write"]["bytes"],
                "write_mib_s": record["summary"]["write"]["bandwidth_mib_s"]["median"],
                "read_mib_s": record["summary"]["read"]["bandwidth_mib_s"]["median"],
                "aggregators": aggregators(record),
                "io_component": record["io_component"],
            }
        )

    lines = [
        f"Strata backend comparison: {ranks} ranks, {reps} repetitions each, median bandwidth, "
        f"fsync {'included' if preset['fsync'] else 'not included'}, every run verified on read-back.",
        f"Ratios are against {BASELINE}. On a shared 2-core machine absolute numbers are noise; "
        "compare within one table.",
        "",
    ]
    header = (
        f"{'kernel':8s} {'backend':40s} {'data':>10s} {'aggr':>5s} {'write MiB/s':>12s} {'x':>6s} "
        f"{'read MiB/s':>12s} {'x':>6s} {'verified':>8s}"
    )
    lines += [header, "-" * len(header)]
    for kernel in preset["kernels"]:
        rows = [r for r in results if r["kernel"] == kernel]
        base = next((r for r in rows if r["label"] == BASELINE and "error" not in r), None)
        for r in rows:
            if "error" in r:
                lines.append(f"{kernel:8s} {r['label']:40s} FAILED: {' '.join(r['error'])}")
                continue
            wr = r["write_mib_s"] / base["write_mib_s"] if base else float("nan")
            rr = r["read_mib_s"] / base["read_mib_s"] if base else float("nan")
            size = f"{r['bytes'] / 1048576:.1f} MiB"
            lines.append(
                f"{kernel:8s} {r['label']:40s} {size:>10s} {r['aggregators']:>5s} {r['write_mib_s']:12.1f} "
                f"{wr:6.2f} {r['read_mib_s']:12.1f} {rr:6.2f} {'yes' if r['verified'] else 'NO':>8s}"
            )
        lines.append("")
    table = "\n".join(lines)
    print(table)
    (out / "comparison.txt").write_text(table + "\n")
    (out / "comparison.json").write_text(
        json.dumps(
            {
                "preset": args.preset,
                "ranks": ranks,
                "repetitions": reps,
                "fsync": preset["fsync"],
                "baseline": BASELINE,
                "results": results,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"(table and JSON in {out})", file=sys.stderr)
    failed = [r for r in results if "error" in r or not r.get("verified")]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
