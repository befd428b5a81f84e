"""Kernels that write a new output per checkpoint (S3D-IO): one file per checkpoint step, each
verified and timed on its own, and reported beside the run's totals."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_ranks

S3D = [
    "run",
    "s3d",
    "--grid",
    "12x12x12",
    "--steps",
    "4",
    "--interval",
    "2",
    "--backend",
    "posix",
    "--output",
    "s3d.dat",
]


def test_a_file_per_checkpoint_each_timed_and_verified(tmp_path: Path) -> None:
    out = run_ranks(3, [*S3D, "--write", "--read", "--verify", "--json", "r.json"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    per_checkpoint = record["params"]["bytes_per_checkpoint"]
    assert per_checkpoint == 12**3 * (11 + 3 + 1 + 1) * 8
    assert sorted(p.name for p in tmp_path.glob("s3d.dat*")) == [
        "s3d.dat.step000002",
        "s3d.dat.step000004",
        "s3d.dat.strata-run.json",  # the run record strata verify reads (docs/running.md)
    ]
    for name in ("s3d.dat.step000002", "s3d.dat.step000004"):
        assert (tmp_path / name).stat().st_size == per_checkpoint
    rep = record["repetitions"][0]
    assert [c["step"] for c in rep["checkpoints"]] == [2, 4]
    assert [Path(c["output"]).name for c in rep["checkpoints"]] == ["s3d.dat.step000002", "s3d.dat.step000004"]
    for access in ("write", "read"):
        parts = [c[access] for c in rep["checkpoints"]]
        assert all(p["bytes"] == per_checkpoint and p["bandwidth_mib_s"] > 0 for p in parts)
        assert rep[access]["bytes"] == 2 * per_checkpoint
        assert abs(rep[access]["time_s"] - sum(p["time_s"] for p in parts)) < 1e-9
    assert record["verified"] is True
    assert "step 2" in out.stdout and "step 4" in out.stdout


def test_each_checkpoint_holds_its_own_steps_values(tmp_path: Path) -> None:
    assert run_ranks(3, [*S3D, "--quiet"], cwd=tmp_path).status == 0
    # Swap the two checkpoints: each still has the right size, but the other step's values.
    a, b = tmp_path / "s3d.dat.step000002", tmp_path / "s3d.dat.step000004"
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    out = run_ranks(3, [*S3D, "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status != 0
    assert "checkpoint" in out.stderr and "s3d.dat.step000002" in out.stderr


def test_a_missing_checkpoint_fails_on_every_rank(tmp_path: Path) -> None:
    assert run_ranks(3, [*S3D, "--quiet"], cwd=tmp_path).status == 0
    (tmp_path / "s3d.dat.step000004").unlink()
    out = run_ranks(3, [*S3D, "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status != 0
    assert "s3d.dat.step000004" in out.stderr


def test_a_single_checkpoint_holds_its_steps_values(tmp_path: Path) -> None:
    """One checkpoint (--steps 1): the buffer is filled once, with that step's values, so the
    read-back verifies (it once held step 0's values and failed in every backend)."""
    one = ["run", "s3d", "--grid", "12x12x12", "--steps", "1", "--backend", "posix", "--output", "s3d.dat"]
    out = run_ranks(2, [*one, "--write", "--read", "--verify", "--repetitions", "2", "--json", "r.json"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True
    assert [c["step"] for c in record["repetitions"][1]["checkpoints"]] == [1]
