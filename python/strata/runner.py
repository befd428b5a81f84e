"""Run a campaign: launch every run in the shuffled order, wait between runs, store every result.

Each run gets its own folder OUTPUT/runs/NNNN-<configuration>-rK with command.txt, stdout.txt,
stderr.txt, exit_code, times and record.json (strata's JSON record, written by rank 0). A failed
run is stored with its exit code, its `strata: error:` message and the tail of its stderr, and the
campaign goes on. Runs are stored one transaction each, so an interruption (Ctrl-C, a killed job)
loses at most the run in flight; `--resume` skips every stored run and ingests folders a batch
script completed but nobody stored yet.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from .campaign import Campaign, Run
from .launch import in_slurm_allocation, launch_command, sbatch_script
from .store import READABLE_VERSIONS, RunResult, Store, now, schema_version

STDERR_TAIL_LINES = 20
RESULTS_NAME = "results.sqlite"


class CampaignStateError(RuntimeError):
    """The results folder holds a different or unfinished campaign and the user did not say what to do."""


@dataclass
class Outcome:
    total: int
    skipped: int
    done: int
    failed: int
    interrupted: bool
    database: Path
    script: Path | None = None
    limited: bool = False  # stopped by --limit (not interrupted: the runs asked for are done)

    @property
    def complete(self) -> bool:
        return (
            not self.interrupted and not self.limited and self.script is None and self.skipped + self.done == self.total
        )


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _interrupt_on_signals() -> dict[int, object]:
    """SIGINT and SIGTERM stop the campaign cleanly (the run in flight is killed and not stored),
    even when the parent started us with SIGINT ignored, as shells do for background jobs."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}


def results_path(campaign: Campaign) -> Path:
    return campaign.output / RESULTS_NAME


def failure_message(stderr: str, exit_code: int) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("strata: error:"):
            return line
    return lines[-1] if lines else f"exit status {exit_code} without a message"


def read_run_dir(
    run_dir: Path, command: str, started: str, wall_s: float, exit_code: int, verify: bool = False
) -> RunResult:
    """Turns a finished run's folder into a RunResult (also used for folders a batch script filled).
    With `verify`, a record that does not say `verified` makes the run a failure."""
    stderr = (run_dir / "stderr.txt").read_text(errors="replace") if (run_dir / "stderr.txt").exists() else ""
    tail = "\n".join(stderr.splitlines()[-STDERR_TAIL_LINES:]) or None
    record = None
    record_path = run_dir / "record.json"
    if exit_code == 0:
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError) as e:
            return RunResult(
                "failed",
                exit_code,
                f"exit status 0 but no usable JSON record: {e}",
                tail,
                command,
                str(run_dir),
                started,
                wall_s,
                None,
            )
        if verify and not record.get("verified"):
            return RunResult(
                "failed",
                exit_code,
                "exit status 0 but the record does not say the data was verified",
                tail,
                command,
                str(run_dir),
                started,
                wall_s,
                record,
            )
        return RunResult("ok", 0, None, tail, command, str(run_dir), started, wall_s, record)
    if exit_code == 124 and "timed out" in stderr[-200:]:
        message = stderr.strip().splitlines()[-1]
    else:
        message = failure_message(stderr, exit_code)
    return RunResult("failed", exit_code, message, tail, command, str(run_dir), started, wall_s, None)


def _remove_data(data_path: Path) -> None:
    for path in data_path.parent.glob(data_path.name + "*"):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """SIGTERM to the launch's process group (mpirun passes it on to the ranks), SIGKILL after a grace."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()


def execute(campaign: Campaign, run: Run, run_dir: Path) -> RunResult:
    """Launches one run and waits for it (its own process group, killed on timeout or Ctrl-C)."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    campaign.data_dir.mkdir(parents=True, exist_ok=True)
    data_path = campaign.data_dir / f"{run.dirname}.dat"
    cmd, env = launch_command(campaign, run, run_dir, data_path)
    command = shlex.join(cmd)
    (run_dir / "command.txt").write_text(command + "\n")
    started = now()
    t0 = time.time()
    timed_out = False
    with open(run_dir / "stdout.txt", "wb") as out, open(run_dir / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, start_new_session=True)
        try:
            exit_code = proc.wait(timeout=campaign.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(proc)
            exit_code = 124
        except BaseException:
            _stop(proc)
            raise
    wall_s = time.time() - t0
    if timed_out:
        with open(run_dir / "stderr.txt", "a") as err:
            err.write(f"\nstrata-bench: timed out after {campaign.timeout_s:g} s and was killed\n")
    (run_dir / "times").write_text(f"{t0:.6f} {t0 + wall_s:.6f}\n")
    (run_dir / "exit_code").write_text(f"{exit_code}\n")
    if not campaign.keep_data:
        _remove_data(data_path)
    return read_run_dir(run_dir, command, started, wall_s, exit_code, campaign.verify)


def ingest_finished_dir(run_dir: Path, verify: bool) -> RunResult | None:
    """A run folder with an exit_code file that is not in the database yet (batch script, crash)."""
    code_file = run_dir / "exit_code"
    if not code_file.exists():
        return None
    try:
        exit_code = int(code_file.read_text().strip())
        start, end = (float(x) for x in (run_dir / "times").read_text().split())
    except (OSError, ValueError):
        return None
    command_file = run_dir / "command.txt"
    command = command_file.read_text().strip() if command_file.exists() else "(from a batch script)"
    started = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(start))
    return read_run_dir(run_dir, command, started, end - start, exit_code, verify)


def open_campaign(store: Store, campaign: Campaign, resume: bool, force: bool) -> int:
    existing = store.campaign(campaign.name)
    if existing is not None and resume and not campaign.explicit_seed:
        campaign.reseed(int(existing["seed"]))  # the file has no seed: take the recorded one
    if existing is not None and force:
        store.delete_campaign(existing["id"])
        existing = None
    if existing is None:
        if resume:
            print(
                f"strata-bench: nothing to resume in {store.path}; starting campaign {campaign.name!r}", file=sys.stderr
            )
        # Run folders without a campaign in the database are left over from a discarded one.
        runs_dir = campaign.output / "runs"
        if runs_dir.exists():
            shutil.rmtree(runs_dir)
        return store.create_campaign(campaign)
    if not resume:
        raise CampaignStateError(
            f"{store.path} already holds campaign {campaign.name!r} ({len(store.runs(existing['id']))} runs stored): "
            "add --resume to finish it, or --force to discard it and start again"
        )
    if existing["plan_hash"] != campaign.plan_hash:
        raise CampaignStateError(
            f"campaign {campaign.name!r} in {store.path} was started from a different grid or seed "
            f"(seed {existing['seed']}); restore the file, or use --force to start again"
        )
    return int(existing["id"])


def run_campaign(
    campaign: Campaign,
    resume: bool = False,
    force: bool = False,
    submit: bool = False,
    progress: bool = True,
    limit: int | None = None,
    on_run: Callable[[Run, RunResult], None] | None = None,
) -> Outcome:
    """Runs (or, for Slurm outside an allocation, scripts) every run not stored yet."""
    campaign.output.mkdir(parents=True, exist_ok=True)
    db_path = results_path(campaign)
    if force and db_path.exists() and schema_version(db_path) not in READABLE_VERSIONS:
        aside = db_path.with_name(f"{db_path.name}.schema-{schema_version(db_path)}")
        db_path.rename(aside)
        print(f"strata-bench: {db_path} had another schema; moved it to {aside}", file=sys.stderr)
    with Store(db_path) as store:
        cid = open_campaign(store, campaign, resume, force)
        config_ids = store.configuration_ids(cid)
        finished = store.finished(cid)
        run_dirs = {r.order: campaign.output / "runs" / r.dirname for r in campaign.runs}

        # Folders finished by a batch script (or by a run whose storing was interrupted).
        for run in campaign.runs:
            key = (run.configuration.key, run.repetition)
            if key in finished:
                continue
            result = ingest_finished_dir(run_dirs[run.order], campaign.verify)
            if result is not None:
                store.add_run(cid, config_ids[run.configuration.key], None, run.repetition, run.order, result)
                finished.add(key)

        pending = [r for r in campaign.runs if (r.configuration.key, r.repetition) not in finished]
        skipped = len(campaign.runs) - len(pending)

        # Outside an allocation, the runs still to do go into a batch script; once a batch job has done
        # them all and they are ingested above, nothing is left to script (the old script stays).
        if campaign.launcher.kind == "slurm" and not in_slurm_allocation() and pending:
            script = campaign.output / "campaign.sbatch"
            script.write_text(sbatch_script(campaign, pending, run_dirs))
            script.chmod(0o755)
            if submit and pending:
                proc = subprocess.run([campaign.launcher.sbatch, str(script)], capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"sbatch {script} failed: {proc.stderr.strip()}")
                print(proc.stdout.strip(), file=sys.stderr)
            return Outcome(len(campaign.runs), skipped, 0, 0, False, db_path, script)

        session = store.start_session(cid, socket.gethostname())
        previous = _interrupt_on_signals()
        done = failed = 0
        interrupted = limited = False
        bar = tqdm(
            total=len(campaign.runs),
            initial=skipped,
            unit="run",
            disable=not progress,
            file=sys.stderr,
            dynamic_ncols=True,
            desc=campaign.name,
            mininterval=0.1 if sys.stderr.isatty() else 10.0,
        )  # a log file gets a line every 10 s
        try:
            for i, run in enumerate(pending):
                if limit is not None and done >= limit:
                    limited = True
                    break
                c = run.configuration
                bar.set_postfix_str(f"{c.kernel} {c.label} n={c.ranks}", refresh=sys.stderr.isatty())
                result = execute(campaign, run, run_dirs[run.order])
                store.add_run(cid, config_ids[c.key], session, run.repetition, run.order, result)
                done += 1
                if result.status != "ok":
                    failed += 1
                    bar.write(
                        f"run {run.order} ({c.kernel}, {c.label}, {c.ranks} ranks) failed with status "
                        f"{result.exit_code}: {result.message}",
                        file=sys.stderr,
                    )
                if on_run:
                    on_run(run, result)
                bar.update(1)
                if campaign.wait_s and i + 1 < len(pending):
                    time.sleep(campaign.wait_s)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            bar.close()
            store.end_session(session, interrupted or limited)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return Outcome(len(campaign.runs), skipped, done, failed, interrupted, db_path, limited=limited)
