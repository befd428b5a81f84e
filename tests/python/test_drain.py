"""Burst-buffer writes (hint strata_drain / run option --drain; docs/drain.md): the write returns once
on node-local storage and drains to the target in the background. A drained output reads back verified
from the target at another rank count (shared file and subfiles, virtual nodes of 2 and 3 ranks); a
SIGKILL during the drain leaves the target whole, old or new, and `strata drain` finishes it; short
node-local space writes the target directly and says so; the Python binding waits for the drain."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import STRATA, run_ranks
from strata.report import drain_rows

IOR = ["ior", "--block-size", "64K", "--transfer-size", "16K", "--segments", "2"]
PYTHON = Path(sys.executable)


def env_for(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"STRATA_LOCAL_DIR": str(tmp_path / "local"), **more}


def write(tmp_path: Path, np: int, target: Path, seed: int, env: dict[str, str], *extra: str) -> dict:
    record = tmp_path / f"w{seed}.json"
    args = ["run", *IOR, "--backend", "strata", "--drain", str(target), "--seed", str(seed)]
    out = run_ranks(np, [*args, "--json", str(record), "--quiet", *extra], env=env)
    assert out.status == 0, out.stderr
    return json.loads(record.read_text())["repetitions"][0]["write"]["engine"]["drain"]


def reads_back(target: Path, seed: int, np: int, writers: int) -> bool:
    """The target alone, read by another rank count, against the generator."""
    args = ["run", *IOR, "--backend", "strata", "--read", "--verify", "--writer-ranks", str(writers)]
    out = run_ranks(np, [*args, "--seed", str(seed), "--output", str(target), "--quiet"])
    return out.status == 0


def verify(target: Path) -> tuple[int, dict]:
    proc = subprocess.run([str(STRATA), "verify", str(target), "--json"], capture_output=True, text=True, timeout=60)
    return proc.returncode, json.loads(proc.stdout)


def strata_drain(target: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(STRATA), "drain", str(target)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "ranks_per_node, hints",
    [("2", []), ("3", ["--hints", "strata_subfiling=aggregator"])],
    ids=["shared file, 3 nodes of 2", "subfiles, 2 nodes of 3"],
)
def test_drained_output_reads_back_from_the_target(tmp_path: Path, ranks_per_node: str, hints: list[str]) -> None:
    target = tmp_path / "out.dat"
    env = env_for(tmp_path, STRATA_RANKS_PER_NODE=ranks_per_node)
    drain = write(tmp_path, 6, target, 1, env, *hints, "--verify")
    assert drain["drained"] and not drain["fallback"] and drain["target"] == str(target)
    assert drain["bytes"] == 6 * 2 * 64 * 1024
    assert 0 < drain["return_s"] <= drain["durable_s"]
    nodes = [p for p in (tmp_path / "local").iterdir() if any(p.iterdir())]
    assert len(nodes) >= 2, nodes  # the node files were on several (virtual) nodes
    status, report = verify(target)
    assert status == 0 and report["ok"] and "drain" not in report, report
    assert len(report["files"]) > 1 if hints else len(report["files"]) == 1
    shutil.rmtree(tmp_path / "local")  # the target alone
    assert reads_back(target, 1, 4, 6)


# Where the process kills itself (STRATA_DRAIN_KILL_AT), and what the target then is.
KILLS = {"copying": "previous", "copied": "previous", "committing": "new"}


def killed_drain(tmp_path: Path, target: Path, point: str) -> None:
    env = env_for(tmp_path)
    write(tmp_path, 2, target, 1, env)
    args = ["run", *IOR, "--backend", "strata", "--drain", str(target), "--seed", "2", "--quiet"]
    killed = run_ranks(2, args, env={**env, "STRATA_DRAIN_KILL_AT": point}, allow_missing=True)
    assert 137 in killed.statuses.values(), killed.statuses  # SIGKILL


@pytest.mark.parametrize("point", KILLS)
def test_sigkill_during_a_drain_leaves_the_target_whole(tmp_path: Path, point: str) -> None:
    target = tmp_path / "out.dat"
    killed_drain(tmp_path, target, point)
    status, report = verify(target)
    assert status == 0 and report["ok"], report  # whole: old or new, never a mix
    if KILLS[point] == "previous":
        assert report["drain"]["output_is"] == "previous" and report["drain"]["can_finish"], report
        assert point != "copying" or reads_back(target, 1, 3, 2)
    else:
        assert "drain" not in report and "interrupted_commit" in report, report
    done = strata_drain(target)
    assert done.returncode == 0, done.stderr
    status, report = verify(target)
    assert status == 0 and report["ok"] and "drain" not in report and not report["uncommitted"], report
    assert reads_back(target, 2, 3, 2)


def test_a_drain_without_its_node_local_copy_cannot_finish(tmp_path: Path) -> None:
    target = tmp_path / "out.dat"
    killed_drain(tmp_path, target, "copying")
    shutil.rmtree(tmp_path / "local")
    status, report = verify(target)
    assert status == 0 and report["drain"]["can_finish"] is False and report["drain"]["missing"], report
    done = strata_drain(target)
    assert done.returncode == 1 and "cannot finish the drain" in done.stderr
    assert reads_back(target, 1, 2, 2)  # the previous output, untouched


def test_short_node_local_space_writes_the_target_directly(tmp_path: Path) -> None:
    target = tmp_path / "out.dat"
    drain = write(tmp_path, 2, target, 1, env_for(tmp_path, STRATA_LOCAL_CAPACITY="64K"), "--verify")
    assert drain["fallback"] and not drain["drained"] and "node-local space is short" in drain["note"]
    assert drain["durable_s"] == drain["return_s"]
    assert not list((tmp_path / "local").rglob("*.part.*")) if (tmp_path / "local").exists() else True
    assert verify(target)[0] == 0


def test_python_phase_waits_for_its_drain(tmp_path: Path) -> None:
    script = Path(__file__).with_name("drain_phase.py")
    args = [str(script), str(tmp_path / "o.dat"), str(tmp_path / "t.dat")]
    out = run_ranks(3, args, env=env_for(tmp_path), program=PYTHON, timeout=60)
    assert out.status == 0, out.stdout + out.stderr
    assert verify(tmp_path / "t.dat")[0] == 0


def test_the_run_table_and_the_campaign_report_show_both_moments(tmp_path: Path) -> None:
    target = tmp_path / "out.dat"
    args = [
        "run",
        *IOR,
        "--backend",
        "strata",
        "--drain",
        str(target),
        "--seed",
        "3",
        "--json",
        str(tmp_path / "r.json"),
    ]
    out = run_ranks(2, args, env=env_for(tmp_path))
    assert out.status == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.strip().startswith("drain to"))
    assert str(target) in line and "the program went on after" in line and "durable after" in line, line
    # The campaign report's drain table, from the runs' records (python/strata/report.py).
    record = (tmp_path / "r.json").read_text()
    runs = [
        {"status": "ok", "record": record, "cell": "ior", "label": "drain"},
        {
            "status": "ok",
            "record": json.dumps({"repetitions": [{"write": {"engine": {}}}]}),
            "cell": "ior",
            "label": "target",
        },
        {"status": "failed", "record": record, "cell": "ior", "label": "drain"},
    ]
    rows = drain_rows(runs)["ior"]
    assert [r["label"] for r in rows] == ["drain"] and rows[0]["writes"] == 1 and rows[0]["fallbacks"] == 0
    moments = json.loads(record)["repetitions"][0]["write"]["engine"]["drain"]
    assert float(rows[0]["durable_ms"]) == pytest.approx(moments["durable_s"] * 1e3, abs=0.01)
