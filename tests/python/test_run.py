"""strata run and strata info: records, tables and help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_ranks


def test_array1d_random_json_record(tmp_path: Path) -> None:
    """The issue's acceptance command, word for word (with the output kept in tmp_path)."""
    out = run_ranks(4, ["run", "array1d", "--dist", "random", "--backend", "mpiio-coll", "--verify",
                        "--json", "r.json"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True
    for key in ("kernel", "backend", "params", "ranks", "nodes", "hints", "mpi", "io_component", "fs_type",
                "verified", "repetitions", "summary"):
        assert key in record, key
    assert record["kernel"] == "array1d" and record["backend"] == "mpiio-coll"
    assert record["ranks"] == 4 and record["nodes"] == 1
    assert record["params"]["dist"] == "random"
    assert record["mpi"]["library"] and record["mpi"]["version"]
    assert record["io_component"] in ("ompio", "romio")
    rep = record["repetitions"][0]["write"]
    for key in ("bytes", "time_s", "bandwidth_mib_s", "open_s", "xfer_s", "close_s"):
        assert key in rep
    assert rep["bytes"] == record["params"]["total_bytes"] == (tmp_path / "strata-array1d.dat").stat().st_size
    assert rep["time_s"] >= rep["xfer_s"] > 0
    bw = record["summary"]["write"]["bandwidth_mib_s"]
    assert bw["min"] <= bw["median"] <= bw["max"]


def test_table_and_summary_over_repetitions(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", "ior", "--block-size", "32K", "--transfer-size", "8K", "--segments", "2",
                        "--backend", "posix", "--write", "--read", "--verify", "--repetitions", "3",
                        "--json", "r.json", "--output", "ior.dat"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert out.stdout.count("write ") >= 3 and out.stdout.count("read ") >= 3
    assert "Summary of 3 repetition(s)" in out.stdout
    assert "verification: passed" in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert len(record["repetitions"]) == 3
    assert all("write" in r and "read" in r for r in record["repetitions"])
    s = record["summary"]["read"]["bandwidth_mib_s"]
    values = sorted(r["read"]["bandwidth_mib_s"] for r in record["repetitions"])
    assert s["min"] == values[0] and s["max"] == values[-1] and s["median"] == values[1]


def test_unverified_runs_say_so(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", "array1d", "--backend", "posix", "--output", "a.dat", "--json", "r.json"],
                    cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert "NOT verified" in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is False and record["verify_requested"] is False


def test_romio_hints_in_effect_are_the_ones_romio_uses(tmp_path: Path) -> None:
    """ROMIO on one host keeps one aggregator (cb_config_list *:1) whatever cb_nodes asks;
    the record must say what ROMIO uses, not echo the request. (--no-advice: the advice would set
    cb_config_list=*:* itself.)"""
    out = run_ranks(3, ["run", "ior", "--block-size", "16K", "--transfer-size", "16K", "--backend", "mpiio-coll",
                        "--hints", "cb_nodes=2", "--json", "r.json", "--output", "x", "--quiet", "--no-advice"],
                    mca=["--mca", "io", "romio321"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["io_component"] == "romio"
    assert record["hints_requested"] == {"cb_nodes": "2"}
    assert record["hints"]["cb_config_list"] == "*:1"
    assert record["hints"]["cb_nodes"] == "1"
    out = run_ranks(3, ["run", "ior", "--block-size", "16K", "--transfer-size", "16K", "--backend", "mpiio-coll",
                        "--hints", "cb_nodes=2,cb_config_list=*:*", "--json", "r.json", "--output", "x", "--quiet"],
                    mca=["--mca", "io", "romio321"], cwd=tmp_path)
    assert json.loads((tmp_path / "r.json").read_text())["hints"]["cb_nodes"] == "2"


def test_info_reports_component_nodes_and_file_system(tmp_path: Path) -> None:
    out = run_ranks(2, ["info", str(tmp_path), "--json", str(tmp_path / "i.json")])
    assert out.status == 0, out.stderr
    info = json.loads((tmp_path / "i.json").read_text())
    assert info["ranks"] == 2 and info["nodes"] == 1
    assert info["io_component"] == "ompio" and info["io_component_confirmed"] is True
    assert info["fs"]["block_size"] > 0 and info["fs"]["type"] != ""
    assert info["hardware"]["pus"] >= 1
    assert "MPI-IO component ompio" in out.stdout
    romio = run_ranks(1, ["info", str(tmp_path), "--json", str(tmp_path / "j.json")], mca=["--mca", "io", "romio321"])
    assert json.loads((tmp_path / "j.json").read_text())["io_component"] == "romio"
    assert "cb_buffer_size=16777216" in romio.stdout


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["run", "ior", "--help"], ["info", "--help"]])
def test_help(args: list[str]) -> None:
    out = run_ranks(1, args)
    assert out.status == 0
    assert "usage:" in out.stdout


def test_run_help_lists_kernel_options() -> None:
    out = run_ranks(1, ["run", "array1d", "--help"])
    assert "--dist" in out.stdout and "--backend" in out.stdout and "pnetcdf" in out.stdout
