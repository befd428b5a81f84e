"""The engine through `strata run --backend strata`: statistics, reading with another rank count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_ranks

BLOCKS = ["blocks", "--vars", "4", "--shape", "30x20x9", "--tiles-per-rank", "3"]


def test_engine_statistics_in_table_and_json(tmp_path: Path) -> None:
    out = run_ranks(
        4,
        [
            "run",
            *BLOCKS,
            "--backend",
            "strata",
            "--write",
            "--read",
            "--verify",
            "--hints",
            "cb_buffer_size=16K,strata_buffers=3,strata_aggregators=2",
            "--json",
            "r.json",
            "--output",
            "e.dat",
        ],
        cwd=tmp_path,
    )
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


@pytest.mark.parametrize(
    "case,env,hints,copied",
    [
        ("one node", {}, "", True),
        ("copies refused", {}, ",strata_copy=false", False),
        ("virtual nodes", {"STRATA_RANKS_PER_NODE": "2"}, "", False),
    ],
)
def test_ranks_of_one_node_copy_into_shared_buffers(
    tmp_path: Path, case: str, env: dict[str, str], hints: str, copied: bool
) -> None:
    """On one node the aggregation window is shared memory and the owners copy their runs into the
    aggregators' buffers (no one-sided operation); a write and a read verify either way."""
    args = ["run", *BLOCKS, "--backend", "strata", "--write", "--read", "--verify", "--output", "c.dat"]
    args += ["--hints", "strata_strategy=aggregate,cb_buffer_size=16K,strata_aggregators=2,strata_stage=false" + hints]
    out = run_ranks(4, [*args, "--json", "r.json"], env=env, cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    for access in ("write", "read"):
        engine = record["repetitions"][0][access]["engine"]
        assert engine["strategy"].endswith(" copied") == copied, (case, engine["strategy"])
        assert (engine["operations"] == 0) == copied, (case, engine["operations"])
        assert engine["rounds"] > 1
    assert record["verified"] is True


@pytest.mark.parametrize("writer,reader", [("strata", "strata"), ("strata", "posix"), ("mpiio-coll", "strata")])
@pytest.mark.parametrize("writers,readers", [(5, 3), (2, 7)])
def test_read_with_another_rank_count(tmp_path: Path, writer: str, reader: str, writers: int, readers: int) -> None:
    args = ["run", "array1d", "--dist", "random", "--size", "24K", "--seed", "9", "--output", "a.dat"]
    assert run_ranks(writers, [*args, "--backend", writer, "--quiet"], cwd=tmp_path).status == 0
    out = run_ranks(
        readers,
        [
            *args,
            "--backend",
            reader,
            "--read",
            "--verify",
            "--writer-ranks",
            str(writers),
            "--json",
            "r.json",
            "--quiet",
        ],
        cwd=tmp_path,
    )
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


# A PIO map over a 12 x 4 array whose interior elements 9-14 and 31-33 belong to no rank.
HOLED_MAP = """version 2001 npes 4 ndims 2
12 4
0 10
1 2 3 4 5 6 7 8 15 16
1 10
17 18 19 20 21 22 23 24 25 26
2 10
27 28 29 30 34 35 36 37 38 39
3 9
40 41 42 43 44 45 46 47 48
"""


def _holed_write(tmp_path: Path, backend: str, hints: str | None = None, repetitions: int = 1) -> bytes:
    """The file after writing the holed map (seed 2) through `backend` over a previous output of
    0xAB bytes: the engine's first commit retires it and its second write recycles it as the
    partial file, so after two repetitions the output is the recycled file."""
    target = tmp_path / "holes.dat"
    for p in tmp_path.glob("holes.dat*"):
        p.unlink()
    target.write_bytes(b"\xab" * 4096)
    args = [
        "run",
        "e3sm",
        "--maps",
        str(tmp_path / "holed.map"),
        "--map-vars",
        "1",
        "--seed",
        "2",
        "--backend",
        backend,
        "--output",
        str(target),
        "--repetitions",
        str(repetitions),
        "--quiet",
    ]
    if hints:
        args += ["--hints", hints]
    out = run_ranks(4, args)
    assert out.status == 0, out.stderr
    return target.read_bytes()


@pytest.mark.parametrize("strategy", ["direct", "aggregate"])
def test_holes_are_never_written(tmp_path: Path, strategy: str) -> None:
    """A map whose interior elements belong to no rank: the engine's committed file (a new file,
    or the previous output recycled) holds zeros in the holes, never the old bytes, and exactly
    posix's bytes elsewhere; the file is as long as the array."""
    (tmp_path / "holed.map").write_text(HOLED_MAP)
    reference = _holed_write(tmp_path, "posix")
    elem = len(reference) // 48
    assert elem in (4, 8) and len(reference) == 48 * elem
    holes = [i for e in (*range(8, 14), *range(30, 33)) for i in range(e * elem, (e + 1) * elem)]
    assert all(reference[i] == 0 for i in holes) and any(reference[i] != 0 for i in range(8 * elem))
    forced = f"strata_strategy={strategy},strata_spans=true"
    assert _holed_write(tmp_path, "strata", forced, repetitions=2) == reference
    assert _holed_write(tmp_path, "strata", f"{forced},strata_commit=in-place") == reference


def test_synced_write_in_pieces_is_exact(tmp_path: Path) -> None:
    """--fsync starts writeback every 16 MiB as it writes: spans longer than that, direct and
    aggregated, still land byte for byte."""
    args = [
        "run",
        "ior",
        "--block-size",
        "20M",
        "--transfer-size",
        "20M",
        "--segments",
        "1",
        "--fsync",
        "--write",
        "--read",
        "--verify",
        "--output",
        "s.dat",
        "--json",
        "r.json",
        "--quiet",
    ]
    for hints in ("strata_strategy=direct", "strata_strategy=aggregate,cb_buffer_size=40M,strata_aggregators=1"):
        out = run_ranks(2, [*args, "--backend", "strata", "--hints", hints], cwd=tmp_path)
        assert out.status == 0, out.stderr
        record = json.loads((tmp_path / "r.json").read_text())
        assert record["verified"] is True
        assert record["repetitions"][0]["write"]["engine"]["fs_requests"] >= 3  # 40 MiB in <= 16 MiB pieces


def test_reader_takes_the_layout_from_the_index(tmp_path: Path) -> None:
    args = ["run", "array1d", "--dist", "random", "--size", "20K", "--seed", "4", "--output", "x.dat"]
    assert run_ranks(5, [*args, "--backend", "strata", "--quiet"], cwd=tmp_path).status == 0
    index = json.loads((tmp_path / "x.dat.strata-index.json").read_text())
    assert index["writer_ranks"] == 5 and index["variables"][0]["name"] == "array"
    for backend in ("strata", "mpiio-coll"):
        out = run_ranks(
            3, [*args, "--backend", backend, "--read", "--verify", "--json", "r.json", "--quiet"], cwd=tmp_path
        )
        assert out.status == 0, out.stderr
        record = json.loads((tmp_path / "r.json").read_text())
        assert record["params"]["layout_from"] == "index" and record["params"]["writer_ranks"] == 5
    # Any other write of the output drops the engine's index, which would be stale.
    assert run_ranks(2, [*args, "--backend", "posix", "--quiet"], cwd=tmp_path).status == 0
    assert not (tmp_path / "x.dat.strata-index.json").exists()


def test_subfiles_read_back_by_another_rank_count(tmp_path: Path) -> None:
    args = ["run", *BLOCKS, "--output", "ckpt"]
    out = run_ranks(
        6, [*args, "--backend", "strata", "--hints", "strata_subfiling=2,strata_aggregators=4", "--quiet"], cwd=tmp_path
    )
    assert out.status == 0, out.stderr
    assert sorted(p.name for p in tmp_path.glob("ckpt.subfile.*")) == ["ckpt.subfile.00000", "ckpt.subfile.00001"]
    index = json.loads((tmp_path / "ckpt.strata-index.json").read_text())
    assert [f["path"] for f in index["files"]] == ["ckpt.subfile.00000", "ckpt.subfile.00001"]
    assert index["files"][0]["end"] == index["files"][1]["begin"]
    out = run_ranks(
        4, [*args, "--backend", "strata", "--read", "--verify", "--json", "r.json", "--quiet"], cwd=tmp_path
    )
    assert out.status == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["verified"] is True
    # Damage a subfile: the read detects it.
    sub = tmp_path / "ckpt.subfile.00001"
    data = bytearray(sub.read_bytes())
    data[len(data) // 2] ^= 0xFF
    sub.write_bytes(bytes(data))
    out = run_ranks(4, [*args, "--backend", "strata", "--read", "--verify"], cwd=tmp_path)
    assert out.status == 3 and "verification failed" in out.stderr
