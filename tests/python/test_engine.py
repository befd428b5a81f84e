"""The engine through `strata run --backend strata`: statistics, reading with another rank count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_ranks

BLOCKS = ["blocks", "--vars", "4", "--shape", "30x20x9", "--tiles-per-rank", "3"]


def test_engine_statistics_in_table_and_json(tmp_path: Path) -> None:
    out = run_ranks(4, ["run", *BLOCKS, "--backend", "strata", "--write", "--read", "--verify", "--hints",
                        "cb_buffer_size=16K,strata_buffers=3,strata_aggregators=2", "--json", "r.json",
                        "--output", "e.dat"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert "engine, last write: plan" in out.stdout
    record = json.loads((tmp_path / "r.json").read_text())
    engine = record["repetitions"][0]["write"]["engine"]
    assert engine["aggregators"] == 2 and engine["buffers"] == 3 and engine["buffer_bytes"] == 16384
    total = record["repetitions"][0]["write"]["bytes"]
    assert engine["bytes"] == total
    assert engine["rounds"] >= total // (2 * 16384)  # two aggregators, 16 KiB per round each
    assert engine["fs_requests"] >= engine["rounds"]
    assert record["verified"] is True


@pytest.mark.parametrize("writer,reader", [("strata", "strata"), ("strata", "posix"), ("mpiio-coll", "strata")])
@pytest.mark.parametrize("writers,readers", [(5, 3), (2, 7)])
def test_read_with_another_rank_count(tmp_path: Path, writer: str, reader: str, writers: int, readers: int) -> None:
    args = ["run", "array1d", "--dist", "random", "--size", "24K", "--seed", "9", "--output", "a.dat"]
    assert run_ranks(writers, [*args, "--backend", writer, "--quiet"], cwd=tmp_path).status == 0
    out = run_ranks(readers, [*args, "--backend", reader, "--read", "--verify", "--writer-ranks", str(writers),
                              "--json", "r.json", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True and record["params"]["writer_ranks"] == writers
    assert record["repetitions"][0]["read"]["bytes"] == (tmp_path / "a.dat").stat().st_size


def test_read_with_another_rank_count_detects_corruption(tmp_path: Path) -> None:
    args = ["run", "ior", "--block-size", "8K", "--transfer-size", "8K", "--segments", "2", "--output", "i.dat"]
    assert run_ranks(4, [*args, "--backend", "strata", "--quiet"], cwd=tmp_path).status == 0
    data = bytearray((tmp_path / "i.dat").read_bytes())
    data[3 * 8192 + 17] ^= 1
    (tmp_path / "i.dat").write_bytes(bytes(data))
    out = run_ranks(3, [*args, "--backend", "strata", "--read", "--verify", "--writer-ranks", "4"], cwd=tmp_path)
    assert out.status == 3 and "verification failed" in out.stderr


def test_holes_are_never_written(tmp_path: Path) -> None:
    """The engine writes only declared bytes (a committed write is a new file, its holes read as
    zeros; written in place, holes keep the old bytes: tests/mpi/engine_property.cpp checks both)."""
    target = tmp_path / "holes.dat"
    # IOR's strided layout with 2 of 4 ranks' data: write 4 ranks first with posix, then
    # overwrite with a different seed through the engine using 4 ranks: every byte changes.
    args = ["run", "ior", "--block-size", "8K", "--transfer-size", "4K", "--segments", "3", "--output", str(target)]
    assert run_ranks(4, [*args, "--backend", "posix", "--seed", "1", "--quiet"]).status == 0
    before = target.read_bytes()
    assert run_ranks(4, [*args, "--backend", "strata", "--seed", "2", "--quiet"]).status == 0
    assert target.read_bytes() != before
    # The engine through a file-per-node layout keeps each node's bytes together.
    out = run_ranks(4, [*args, "--backend", "strata", "--file-per-node", "--write", "--read", "--verify",
                        "--quiet"], env={"STRATA_RANKS_PER_NODE": "2"})
    assert out.status == 0, out.stderr
    nodes = sorted(p.name for p in tmp_path.glob("holes.dat.node*") if not p.name.endswith(".json"))
    assert nodes == ["holes.dat.node00000", "holes.dat.node00001"]


def test_reader_takes_the_layout_from_the_index(tmp_path: Path) -> None:
    args = ["run", "array1d", "--dist", "random", "--size", "20K", "--seed", "4", "--output", "x.dat"]
    assert run_ranks(5, [*args, "--backend", "strata", "--quiet"], cwd=tmp_path).status == 0
    index = json.loads((tmp_path / "x.dat.strata-index.json").read_text())
    assert index["writer_ranks"] == 5 and index["variables"][0]["name"] == "array"
    for backend in ("strata", "mpiio-coll"):
        out = run_ranks(3, [*args, "--backend", backend, "--read", "--verify", "--json", "r.json", "--quiet"],
                        cwd=tmp_path)
        assert out.status == 0, out.stderr
        record = json.loads((tmp_path / "r.json").read_text())
        assert record["params"]["layout_from"] == "index" and record["params"]["writer_ranks"] == 5
    # Any other write of the output drops the engine's index, which would be stale.
    assert run_ranks(2, [*args, "--backend", "posix", "--quiet"], cwd=tmp_path).status == 0
    assert not (tmp_path / "x.dat.strata-index.json").exists()


def test_subfiles_read_back_by_another_rank_count(tmp_path: Path) -> None:
    args = ["run", *BLOCKS, "--output", "ckpt"]
    out = run_ranks(6, [*args, "--backend", "strata", "--hints", "strata_subfiling=2,strata_aggregators=4",
                        "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert sorted(p.name for p in tmp_path.glob("ckpt.subfile.*")) == ["ckpt.subfile.00000", "ckpt.subfile.00001"]
    index = json.loads((tmp_path / "ckpt.strata-index.json").read_text())
    assert [f["path"] for f in index["files"]] == ["ckpt.subfile.00000", "ckpt.subfile.00001"]
    assert index["files"][0]["end"] == index["files"][1]["begin"]
    out = run_ranks(4, [*args, "--backend", "strata", "--read", "--verify", "--json", "r.json", "--quiet"],
                    cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["verified"] is True
    # Damage a subfile: the read detects it.
    sub = tmp_path / "ckpt.subfile.00001"
    data = bytearray(sub.read_bytes())
    data[len(data) // 2] ^= 0xFF
    sub.write_bytes(bytes(data))
    out = run_ranks(4, [*args, "--backend", "strata", "--read", "--verify"], cwd=tmp_path)
    assert out.status == 3 and "verification failed" in out.stderr
