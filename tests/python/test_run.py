"""strata run and strata info: records, tables and help."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import MPI, catalogue, run_ranks


def test_array1d_random_json_record(tmp_path: Path) -> None:
    """The issue's acceptance command, word for word (with the output kept in tmp_path)."""
    out = run_ranks(
        4,
        ["run", "array1d", "--dist", "random", "--backend", "mpiio-coll", "--verify", "--json", "r.json"],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True
    for key in (
        "kernel",
        "backend",
        "params",
        "ranks",
        "nodes",
        "hints",
        "mpi",
        "io_component",
        "fs_type",
        "verified",
        "repetitions",
        "summary",
    ):
        assert key in record, key
    assert record["kernel"] == "array1d" and record["backend"] == "mpiio-coll"
    assert record["ranks"] == 4 and record["nodes"] == 1
    assert record["params"]["dist"] == "random"
    assert record["mpi"]["library"] and record["mpi"]["version"]
    assert record["io_component"] in ("ompio", "romio")
    allocator = record["allocator"]  # the strata program keeps freed memory (docs/backends.md)
    assert allocator["kept_freed_memory"] is True
    assert allocator["glibc_tunables"] == (
        f"glibc.malloc.trim_threshold={allocator['trim_threshold']}"
        f":glibc.malloc.mmap_threshold={allocator['mmap_threshold']}"
    )
    rep = record["repetitions"][0]["write"]
    for key in ("bytes", "time_s", "bandwidth_mib_s", "open_s", "xfer_s", "close_s"):
        assert key in rep
    assert rep["bytes"] == record["params"]["total_bytes"] == (tmp_path / "strata-array1d.dat").stat().st_size
    assert rep["time_s"] >= rep["xfer_s"] > 0
    bw = record["summary"]["write"]["bandwidth_mib_s"]
    assert bw["min"] <= bw["median"] <= bw["max"]


def test_allocator_left_alone_when_asked(tmp_path: Path) -> None:
    """STRATA_KEEP_FREED_MEMORY=0, or the user's own malloc settings, leave glibc's defaults; the
    record and strata info say so."""
    for env, why in (
        ({"STRATA_KEEP_FREED_MEMORY": "0"}, "STRATA_KEEP_FREED_MEMORY=0"),
        ({"MALLOC_TRIM_THRESHOLD_": "131072"}, "the user's malloc settings"),
    ):
        out = run_ranks(2, ["run", "array1d", "--backend", "posix", "--json", "r.json"], env=env, cwd=tmp_path)
        assert out.status == 0, out.stderr
        allocator = json.loads((tmp_path / "r.json").read_text())["allocator"]
        assert allocator["kept_freed_memory"] is False and allocator["glibc_tunables"] == ""
        assert why in allocator["summary"], allocator
    info = run_ranks(1, ["info"], env={"STRATA_KEEP_FREED_MEMORY": "0"}, cwd=tmp_path)
    assert "allocator defaults (STRATA_KEEP_FREED_MEMORY=0)" in info.stdout


def test_table_and_summary_over_repetitions(tmp_path: Path) -> None:
    out = run_ranks(
        2,
        [
            "run",
            "ior",
            "--block-size",
            "32K",
            "--transfer-size",
            "8K",
            "--segments",
            "2",
            "--backend",
            "posix",
            "--write",
            "--read",
            "--verify",
            "--repetitions",
            "3",
            "--json",
            "r.json",
            "--output",
            "ior.dat",
        ],
        cwd=tmp_path,
    )
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
    out = run_ranks(2, ["run", "array1d", "--backend", "posix", "--output", "a.dat", "--json", "r.json"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert "NOT verified" in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is False and record["verify_requested"] is False


def test_romio_hints_in_effect_are_the_ones_romio_uses(tmp_path: Path) -> None:
    """ROMIO on one host keeps one aggregator (cb_config_list *:1) whatever cb_nodes asks;
    the record must say what ROMIO uses, not echo the request. (--no-advice: the advice would set
    cb_config_list=*:* itself.)"""
    out = run_ranks(
        3,
        [
            "run",
            "ior",
            "--block-size",
            "16K",
            "--transfer-size",
            "16K",
            "--backend",
            "mpiio-coll",
            "--hints",
            "cb_nodes=2",
            "--json",
            "r.json",
            "--output",
            "x",
            "--quiet",
            "--no-advice",
        ],
        io="romio",
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["io_component"] == "romio"
    assert record["hints_requested"] == {"cb_nodes": "2"}
    assert record["hints"]["cb_config_list"] == "*:1"
    assert record["hints"]["cb_nodes"] == "1"
    out = run_ranks(
        3,
        [
            "run",
            "ior",
            "--block-size",
            "16K",
            "--transfer-size",
            "16K",
            "--backend",
            "mpiio-coll",
            "--hints",
            "cb_nodes=2,cb_config_list=*:*",
            "--json",
            "r.json",
            "--output",
            "x",
            "--quiet",
        ],
        io="romio",
        cwd=tmp_path,
    )
    assert json.loads((tmp_path / "r.json").read_text())["hints"]["cb_nodes"] == "2"


@pytest.mark.parametrize("component", ["ompio", "romio"])
def test_hints_a_component_ignores_are_not_shown_in_effect(tmp_path: Path, component: str) -> None:
    """A key the MPI-IO component does not read is listed as not recognised, never as in effect
    (OMPIO's get_info echoes every key it was given); the keys it reads stay in effect."""
    out = run_ranks(
        2,
        [
            "run",
            "ior",
            "--block-size",
            "16K",
            "--transfer-size",
            "16K",
            "--backend",
            "mpiio-coll",
            "--hints",
            "cb_nodes=1,no_such_hint=7",
            "--json",
            "r.json",
            "--output",
            "x",
        ],
        io=component,
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["io_component"] == component
    assert record["hints_not_recognised"] == {"no_such_hint": "7"}
    assert "no_such_hint" not in record["hints"] and record["hints"]["cb_nodes"] == "1"
    assert f"hints not recognised by {component} (ignored): no_such_hint=7" in out.stdout


def test_info_reports_component_nodes_and_file_system(tmp_path: Path) -> None:
    out = run_ranks(2, ["info", str(tmp_path), "--json", str(tmp_path / "i.json")])
    assert out.status == 0, out.stderr
    info = json.loads((tmp_path / "i.json").read_text())
    assert info["ranks"] == 2 and info["nodes"] == 1
    assert info["io_component"] == MPI.default_io and info["io_component_confirmed"] is True
    assert info["fs"]["block_size"] > 0 and info["fs"]["type"] != ""
    assert info["hardware"]["pus"] >= 1
    assert f"MPI-IO component {MPI.default_io}" in out.stdout
    romio = run_ranks(1, ["info", str(tmp_path), "--json", str(tmp_path / "j.json")], io="romio")
    assert json.loads((tmp_path / "j.json").read_text())["io_component"] == "romio"
    assert "cb_buffer_size=16777216" in romio.stdout


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["run", "ior", "--help"], ["info", "--help"]])
def test_help(args: list[str]) -> None:
    out = run_ranks(1, args)
    assert out.status == 0
    assert "usage:" in out.stdout


def test_run_help_is_the_catalogue() -> None:
    """Help lists the backend table's rows, in order with their summaries, and exactly the options
    the catalogue gives the kernel (the run options of its kind and its own)."""
    cat = catalogue()
    out = run_ranks(1, ["run", "array1d", "--help"])
    section = out.stdout.split("\nbackends:\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in section] == list(cat.backends)
    for line, row in zip(section, cat.raw["backends"], strict=True):
        assert line.split(None, 1)[1] == row["summary"]
    assert set(re.findall(r"^  (?:-\w, )?--([a-z0-9-]+)", out.stdout, flags=re.M)) == set(cat.kernel_options["array1d"])
    app = run_ranks(1, ["run", "pace3d", "--help"])
    assert set(re.findall(r"^  --([a-z0-9-]+)", app.stdout, flags=re.M)) == set(cat.kernel_options["pace3d"])
    assert "--backend" not in app.stdout and "--style" in app.stdout


def test_catalogue_lists_what_runs(tmp_path: Path) -> None:
    """Every kernel of the catalogue runs; every backend row writes strata-KERNEL<its extension> by
    default, writes and verifies every layout its row lists and refuses the others."""
    cat = catalogue()
    kinds = {k["name"]: k["kind"] for k in cat.raw["kernels"]}
    assert set(kinds) == set(cat.kernels) and set(kinds.values()) == {"decomposition", "application"}
    assert {lay["name"] for lay in cat.raw["layouts"]} == {"shared", "file-per-process", "file-per-node"}
    assert "strata_fsync" in {h["name"] for h in cat.raw["hints"]["engine"]}
    ior = ["run", "ior", "--block-size", "8K", "--transfer-size", "4K", "--quiet"]

    def backend_row(row: dict) -> None:  # in a folder of its own: rows may share an extension
        name = row["name"]
        here = tmp_path / name
        here.mkdir()
        out = run_ranks(2, [*ior, "--backend", name], cwd=here)
        assert out.status == 0, out.stderr
        assert (here / f"strata-ior{row['file_extension']}").exists(), name
        for layout in ("file-per-process", "file-per-node"):
            out = run_ranks(
                2,
                [
                    *ior,
                    "--backend",
                    name,
                    f"--{layout}",
                    "--write",
                    "--read",
                    "--verify",
                    "--output",
                    f"{name}-{layout}",
                ],
                cwd=here,
            )
            if layout in row["layouts"]:
                assert out.status == 0, (name, layout, out.stderr)
            else:
                assert out.status == 2 and f"cannot express --{layout}" in out.stderr, (name, layout, out.stderr)

    # The rows side by side, three at a time (each launch waits on its start more than on the cores).
    with ThreadPoolExecutor(max_workers=3) as pool:
        for done in [pool.submit(backend_row, row) for row in cat.raw["backends"]]:
            done.result()
