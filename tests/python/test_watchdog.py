"""The watchdog (STRATA_TIMEOUT): a rank stuck in a collective operation reports where it is
and what every peer does, then the job ends with status 4 instead of hanging."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BASE_ENV, STRATA, launch, run_ranks
from test_bad_input import USAGE, assert_clean_failure
from test_faults import SHIM

IOR = ["run", "ior", "--block-size", "64K", "--transfer-size", "4K", "--write"]


def launch_strata(np: int, args: list[str], env: dict[str, str], io: str | None = None):
    cmd = launch(np, [str(STRATA), *args], io=io, exports=list(env))
    start = time.monotonic()
    proc = subprocess.run(cmd, env=dict(BASE_ENV, **env), capture_output=True, text=True, timeout=60)
    return proc, time.monotonic() - start


def test_a_hung_write_on_one_rank_names_that_rank(tmp_path: Path) -> None:
    target = tmp_path / "hung.out"
    env = {
        "LD_PRELOAD": str(SHIM),
        "STRATA_FAULT": f"op=write,nth=3,action=hang,rank=1,path={target}",
        "STRATA_TIMEOUT": "3",
    }
    proc, took = launch_strata(3, [*IOR, "--backend", "posix", "--output", str(target)], env)
    assert proc.returncode == 4, proc.stderr
    assert took < 30
    assert "strata: watchdog: rank" in proc.stderr
    # The ranks that reached the agreement wait for rank 1, stuck in its own write.
    assert "this rank waits for rank(s) 1" in proc.stderr or "wait for this rank" in proc.stderr, proc.stderr
    assert "posix write: transfer" in proc.stderr


def test_romio_deadlock_on_a_failed_aggregator_write_becomes_an_abort(tmp_path: Path) -> None:
    """ROMIO's two-phase write waits forever when one aggregator's write fails (MPI-IO-NOTES)."""
    target = tmp_path / "romio.out"
    env = {
        "LD_PRELOAD": str(SHIM),
        "STRATA_FAULT": f"op=write,nth=3,count=0,errno=ENOSPC,rank=1,path={target}",
        "STRATA_TIMEOUT": "4",
    }
    proc, took = launch_strata(
        3,
        [*IOR, "--backend", "mpiio-coll", "--hints", "cb_buffer_size=16K,cb_nodes=3", "--output", str(target)],
        env,
        io="romio",
    )
    assert "strata-fault:" in proc.stderr
    if proc.returncode == 1:  # a ROMIO that returns the error instead
        assert "strata: error:" in proc.stderr
        return
    assert proc.returncode == 4, proc.stderr
    assert took < 40
    assert "mpiio-coll write: transfer" in proc.stderr


def test_a_healthy_run_is_not_disturbed(tmp_path: Path) -> None:
    outcome = run_ranks(
        3,
        [*IOR, "--read", "--verify", "--backend", "strata", "--output", str(tmp_path / "ok")],
        env={"STRATA_TIMEOUT": "30"},
    )
    assert outcome.status == 0, outcome.stderr
    assert "watchdog" not in outcome.stderr


def test_bad_timeout_is_a_usage_error_on_every_rank(tmp_path: Path) -> None:
    for value in ["soon", "-3"]:
        outcome = run_ranks(3, ["info"], env={"STRATA_TIMEOUT": value})
        assert_clean_failure(outcome, USAGE, "STRATA_TIMEOUT")


def test_the_watchdog_is_on_by_default_with_a_limit_for_the_data(tmp_path: Path) -> None:
    """Without STRATA_TIMEOUT the watchdog runs with the default limit, raised for the run's data
    at the slowest rate it allows; STRATA_TIMEOUT=0 turns it off. Under OMPIO, a backend through
    MPI-IO warns that the component can lose errors."""
    args = [
        "run",
        "ior",
        "--block-size",
        "8M",
        "--transfer-size",
        "1M",
        "--segments",
        "2",
        "--backend",
        "mpiio-coll",
        "--output",
        "w.dat",
        "--json",
        "r.json",
        "--quiet",
    ]
    assert run_ranks(2, args, cwd=tmp_path).status == 0
    header = json.loads((tmp_path / "r.json").read_text())
    assert header["watchdog_timeout_s"] == pytest.approx(600 + 32 / 16)  # 32 MiB at 16 MiB/s
    if header["io_component"] == "ompio" and header["mpi"]["version"].startswith("4."):
        assert any("OMPIO can lose a failed write" in w for w in header["warnings"])
    assert run_ranks(2, args, cwd=tmp_path, env={"STRATA_TIMEOUT": "0"}).status == 0
    assert json.loads((tmp_path / "r.json").read_text())["watchdog_timeout_s"] == 0
    romio = run_ranks(2, args, cwd=tmp_path, io="romio")
    assert romio.status == 0 and json.loads((tmp_path / "r.json").read_text())["warnings"] == []
    info = run_ranks(1, ["info", str(tmp_path)])
    assert "watchdog         on: aborts after 600 s" in info.stdout
