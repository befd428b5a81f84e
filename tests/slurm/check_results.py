"""Checks a campaign that tests/slurm/run.sh ran under Slurm: every planned run is stored, ok,
verified on read-back, with metrics for both phases and as many ranks as configured, and was
launched by srun (the stored command inside an allocation; the sbatch script's lines for a batch job).

Usage: check_results.py RESULTS.sqlite [--expect-srun] [--expect-batch]; exit status 1 on a failure.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path


def problems(db: Path, expect_srun: bool, expect_batch: bool) -> list[str]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    found: list[str] = []
    campaign = con.execute("SELECT * FROM campaigns ORDER BY id DESC LIMIT 1").fetchone()
    if campaign is None:
        return [f"{db}: no campaign stored"]
    if campaign["launcher"] != "slurm":
        found.append(f"launcher is {campaign['launcher']!r}, not slurm")
    runs = con.execute(
        "SELECT r.*, c.ranks, c.label FROM runs r JOIN configurations c ON c.id = r.configuration_id"
        " WHERE r.campaign_id = ?",
        (campaign["id"],),
    ).fetchall()
    if len(runs) != campaign["total_runs"]:
        found.append(f"{len(runs)} runs stored of {campaign['total_runs']} planned")
    for r in runs:
        name = f"run {r['order_index']} ({r['label']}, {r['ranks']} ranks)"
        if r["status"] != "ok":
            found.append(f"{name}: {r['status']}, exit {r['exit_code']}: {r['message']}")
            continue
        if r["verified"] != 1:
            found.append(f"{name}: data not verified")
        record = json.loads(r["record"])
        if record.get("ranks") != r["ranks"]:
            found.append(f"{name}: the record says {record.get('ranks')} ranks, configured {r['ranks']}")
        phases = {row[0] for row in con.execute("SELECT DISTINCT phase FROM metrics WHERE run_id = ?", (r["id"],))}
        if phases != {"write", "read"}:
            found.append(f"{name}: metrics for {sorted(phases)}, expected read and write")
        if expect_srun and not expect_batch and " srun " not in f" {r['command']} ":
            found.append(f"{name}: not launched by srun: {r['command']}")
        if expect_batch and r["session_id"] is not None:
            found.append(f"{name}: launched by strata-bench, not ingested from the batch job's folder")
    if expect_batch:
        script = db.parent / "campaign.sbatch"
        lines = [line for line in script.read_text().splitlines() if line.startswith("strata_run ")]
        if len(lines) != campaign["total_runs"] or not all(" srun " in line for line in lines):
            found.append(f"{script}: expected {campaign['total_runs']} strata_run lines, each with srun")
        if not list(db.parent.glob("sbatch-*.out")):
            found.append(f"{db.parent}: no sbatch-JOB.out: the script did not run as a batch job")
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path, metavar="RESULTS.sqlite")
    p.add_argument("--expect-srun", action="store_true", help="every stored command is an srun launch")
    p.add_argument("--expect-batch", action="store_true", help="the runs came from a submitted sbatch script")
    args = p.parse_args()
    found = problems(args.results, args.expect_srun, args.expect_batch)
    for line in found:
        print(f"check_results: {line}", file=sys.stderr)
    if not found:
        print(f"check_results: {args.results}: every run stored, ok and verified")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
