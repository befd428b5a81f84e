"""strata advise (the table, the JSON, bad input on every rank) and the advice strata run applies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_ranks


def fs_type_of(path: Path) -> str:
    out = run_ranks(1, ["info", str(path), "--json", str(path / "info.json")])
    assert out.status == 0, out.stderr
    return json.loads((path / "info.json").read_text())["fs"]["type"]


def test_this_machine_gets_no_striping_but_collective_buffering(tmp_path: Path) -> None:
    fs = fs_type_of(tmp_path)
    assert fs not in ("lustre", "beegfs"), "this test expects a machine without a striped file system"
    out = run_ranks(2, ["advise", "--path", str(tmp_path), "--block-size", "1M", "--json", str(tmp_path / "a.json")])
    assert out.status == 0, out.stderr
    advice = json.loads((tmp_path / "a.json").read_text())
    assert advice["fs_type"] == fs
    assert advice["striping_applies"] is False
    assert advice["stripe_count"] == 0 and advice["stripe_size_bytes"] == 0
    assert advice["lfs_setstripe"] == ""
    # why: the first reason names the file system and says striping does not apply
    first = advice["reasons"][0]
    assert first["rule"] == "striping" and "does not apply" in first["advice"] and fs in first["advice"]
    assert f"striping              does not apply on {fs}" in out.stdout
    assert "no storage targets to stripe over" in out.stdout
    # still collective-buffering advice: 2 ranks on one node, a 2 MiB dataset over 2 aggregators
    hints = advice["hints"]
    assert hints["romio_cb_write"] == "enable"
    assert hints["cb_config_list"] == "*:*"
    assert hints["cb_buffer_size"] == str(1024 * 1024)
    assert "striping_factor" not in hints and "striping_unit" not in hints
    assert "collective_buffering" not in hints  # inverted in Open MPI 4.1.4
    assert advice["ompio_mca"]["io_ompio_bytes_per_agg"] == str(1024 * 1024)
    assert all(r["source"] for r in advice["reasons"])
    assert out.stdout.count("Strata advisor:") == 1  # rank 0 alone prints


def test_lustre_json_fields_and_table(tmp_path: Path) -> None:
    out = run_ranks(
        1,
        [
            "advise",
            "--fs",
            "lustre",
            "--osts",
            "54",
            "--nodes",
            "6",
            "--ppn",
            "24",
            "--block-size",
            "4096K",
            "--json",
            str(tmp_path / "a.json"),
        ],
    )
    assert out.status == 0, out.stderr
    advice = json.loads((tmp_path / "a.json").read_text())
    assert advice["stripe_count"] == 39  # 5.6 x 6 + 4.9 = 38.5, halves up
    assert advice["stripe_size_bytes"] == 1024 * 1024
    assert advice["hints"]["striping_factor"] == "39"
    assert advice["hints"]["striping_unit"] == "1048576"
    assert advice["hints"]["cb_buffer_size"] == "1048576"
    assert advice["hints"]["cb_nodes"] == "39"
    assert advice["hints"]["cb_config_list"] == "*:7"
    assert advice["ompio_hints"]["stripe_width"] == "39"
    assert advice["ompio_mca"]["fs_lustre_stripe_size"] == "1048576"
    assert advice["lfs_setstripe"] == "lfs setstripe -c 39 -S 1M DIR"
    assert advice["mpich_mpiio_hints"].startswith("*:")
    rules = [r["rule"] for r in advice["reasons"]]
    for rule in ("stripe count", "stripe size", "collective buffer", "aggregators", "lock-ahead", "layout"):
        assert rule in rules
    sources = {r["rule"]: r["source"] for r in advice["reasons"]}
    assert "5.1.1" in sources["stripe count"] and "5.1.2" in sources["stripe size"]
    assert "Table 4" in sources["collective buffer"]
    assert "lfs setstripe -c 39 -S 1M DIR" in out.stdout
    assert "[Hazel Hen striping paper, sec. 5.1.1 and 6]" in out.stdout


@pytest.mark.parametrize(
    "args, stripe_count, stripe_size",
    [
        (["--nodes", "9", "--block-size", "64K"], 54, 64 * 1024),
        (["--nodes", "1", "--block-size", "100000", "--stripe-ratio", "1"], 11, 128 * 1024),
        (["--nodes", "4", "--block-size", "4M", "--stripe-fit", "5n+3"], 23, 1024 * 1024),
        (
            [
                "--nodes",
                "16",
                "--ppn",
                "32",
                "--block-size",
                "64M",
                "--osts",
                "64",
                "--variables",
                "400",
                "--dataset-size",
                "128M",
            ],
            64,
            2 * 1024 * 1024,
        ),
    ],
)
def test_lustre_rules_through_the_command(tmp_path: Path, args: list[str], stripe_count: int, stripe_size: int) -> None:
    base = ["advise", "--fs", "lustre", "--osts", "54", "--ppn", "24", "--json", str(tmp_path / "a.json"), "--quiet"]
    out = run_ranks(1, base + args)
    assert out.status == 0, out.stderr
    assert out.stdout.count("Strata advisor") == 0  # --quiet
    advice = json.loads((tmp_path / "a.json").read_text())
    assert (advice["stripe_count"], advice["stripe_size_bytes"]) == (stripe_count, stripe_size)


def test_lock_ahead_only_at_scale(tmp_path: Path) -> None:
    out = run_ranks(
        1,
        [
            "advise",
            "--fs",
            "lustre",
            "--osts",
            "54",
            "--nodes",
            "128",
            "--ppn",
            "24",
            "--block-size",
            "4M",
            "--json",
            str(tmp_path / "a.json"),
        ],
    )
    assert out.status == 0, out.stderr
    advice = json.loads((tmp_path / "a.json").read_text())
    assert advice["lock_ahead_multiplier"] == 32
    assert "cray_cb_nodes_multiplier=32" in advice["mpich_mpiio_hints"]
    out = run_ranks(
        1,
        [
            "advise",
            "--fs",
            "lustre",
            "--osts",
            "54",
            "--nodes",
            "128",
            "--ppn",
            "24",
            "--block-size",
            "2M",
            "--json",
            str(tmp_path / "b.json"),
        ],
    )
    advice = json.loads((tmp_path / "b.json").read_text())
    assert advice["lock_ahead_multiplier"] == 0 and advice["cray_hints"] == {}


def test_nodes_and_ranks_per_node_default_to_the_run(tmp_path: Path) -> None:
    out = run_ranks(
        4,
        ["advise", "--fs", "gpfs", "--block-size", "64M", "--json", str(tmp_path / "a.json")],
        env={"STRATA_RANKS_PER_NODE": "2"},
    )
    assert out.status == 0, out.stderr
    advice = json.loads((tmp_path / "a.json").read_text())
    assert advice["input"]["nodes"] == 2 and advice["input"]["ranks_per_node"] == 2
    assert advice["cb_nodes"] == 2  # one aggregator per node where nothing is striped
    assert advice["cb_config_list"] == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["--fs", "ext4", "--nodes", "0", "--block-size", "1M"], "--nodes must be at least 1"),
        (["--fs", "ext4", "--block-size", "0"], "--block-size must be more than 0"),
        (["--fs", "zork", "--block-size", "1M"], 'unknown file system "zork"'),
        (["--fs", "lustre", "--osts", "-3", "--block-size", "1M"], "--osts must not be negative"),
        (["--fs", "ext4"], "needs --block-size"),
        (["--fs", "ext4", "--block-size", "1M", "--stripe-ratio", "1/3"], "--stripe-ratio must be 1, 1/2 or 1/4"),
        (["--fs", "ext4", "--path", ".", "--block-size", "1M"], "give --path or --fs, not both"),
        (["--fs", "ext4", "--block-size", "1M", "--strategy", "sometimes"], "--strategy must be"),
    ],
)
def test_bad_input_is_a_usage_error_on_every_rank(args: list[str], message: str) -> None:
    out = run_ranks(3, ["advise", *args])
    assert out.status == 2, out.statuses
    assert out.stderr.count("strata: error:") == 1, out.stderr
    assert message in out.stderr, out.stderr


def test_advise_help() -> None:
    out = run_ranks(1, ["advise", "--help"])
    assert out.status == 0
    assert "usage:" in out.stdout and "--block-size" in out.stdout and "--osts" in out.stdout
    assert "advise" in run_ranks(1, ["--help"]).stdout


def run_record(tmp_path: Path, extra: list[str], io: str | None = None, env: dict[str, str] | None = None) -> dict:
    out = run_ranks(
        3,
        [
            "run",
            "ior",
            "--block-size",
            "64K",
            "--transfer-size",
            "64K",
            "--segments",
            "2",
            "--backend",
            "mpiio-coll",
            "--verify",
            "--output",
            "x.dat",
            "--json",
            "r.json",
            *extra,
        ],
        io=io,
        env=env,
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    return json.loads((tmp_path / "r.json").read_text())


def test_run_applies_the_advice_under_romio(tmp_path: Path) -> None:
    record = run_record(tmp_path, [], io="romio")
    assert record["io_component"] == "romio" and record["verified"] is True
    advice = record["advice"]
    assert advice["applied"] is True and advice["striping_applies"] is False
    assert advice["hints"]["cb_config_list"] == "*:*"
    assert advice["hints"]["romio_cb_write"] == "enable"
    assert any(r["rule"] == "striping" and "does not apply" in r["advice"] for r in advice["reasons"])
    # read back from the open file: ROMIO now lets every rank aggregate
    assert record["hints"]["cb_config_list"] == "*:*"
    assert record["hints"]["cb_nodes"] == "3"
    assert record["hints"]["romio_cb_write"] == "enable"
    assert record["hints"]["cb_buffer_size"] == advice["hints"]["cb_buffer_size"]
    assert record["hints_requested"] == {}


def test_run_applies_the_advice_under_ompio(tmp_path: Path) -> None:
    record = run_record(tmp_path, [], io="ompio")
    assert record["io_component"] == "ompio"
    advice = record["advice"]
    assert advice["applied"] is True
    assert set(advice["hints"]) == {"cb_buffer_size"}  # OMPIO reads no romio_* or cb_config_list
    assert record["hints"]["cb_buffer_size"] == advice["hints"]["cb_buffer_size"]


def test_no_advice_turns_it_off(tmp_path: Path) -> None:
    record = run_record(tmp_path, ["--no-advice"], io="romio")
    assert record["advice"] == {"applied": False, "not_applied_because": "--no-advice"}
    assert record["hints"]["cb_config_list"] == "*:1"  # ROMIO's default
    assert record["hints"]["cb_nodes"] == "1"


def test_explicit_hints_win_over_advice(tmp_path: Path) -> None:
    record = run_record(tmp_path, ["--hints", "cb_buffer_size=1048576,cb_config_list=*:2"], io="romio")
    advice = record["advice"]
    assert sorted(advice["overridden_by_explicit_hints"]) == ["cb_buffer_size", "cb_config_list"]
    assert "cb_buffer_size" not in advice["hints"] and "cb_config_list" not in advice["hints"]
    assert advice["hints"]["romio_cb_write"] == "enable"
    assert record["hints"]["cb_buffer_size"] == "1048576"
    assert record["hints"]["cb_config_list"] == "*:2"
    # STRATA_HINTS wins as well
    hints_file = tmp_path / "hints.txt"
    hints_file.write_text("cb_buffer_size 2097152\n")
    record = run_record(tmp_path, [], io="romio", env={"STRATA_HINTS": str(hints_file)})
    assert record["hints"]["cb_buffer_size"] == "2097152"
    assert record["advice"]["overridden_by_explicit_hints"] == ["cb_buffer_size"]


def test_posix_has_nothing_to_apply(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", "array1d", "--backend", "posix", "--output", "a.dat", "--json", "r.json"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["advice"]["applied"] is False
    assert "posix" in record["advice"]["not_applied_because"]
    assert "advice applied" not in out.stdout


def test_run_table_says_what_advice_was_applied(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", "array1d", "--backend", "mpiio-coll", "--output", "a.dat"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert "advice applied: cb_buffer_size=" in out.stdout
    assert os.path.exists(tmp_path / "a.dat")
