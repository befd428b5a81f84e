"""bench/write_loop.c, the plain writer `make bench-peers` runs beside each IOR pattern: it builds
the way bench/peers.py builds it and writes through each of its calls (pwrite, the collective
MPI-IO write, the collective H5Dwrite), so the benchmark's calibration rows cannot rot unseen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_ranks

sys.path.insert(0, str(ROOT / "bench"))
import peers  # noqa: E402  (bench/peers.py, after the path above)


@pytest.fixture(scope="module")
def write_loop(tmp_path_factory) -> Path:
    return peers.build_loop(tmp_path_factory.mktemp("loop"), lambda _: None)


@pytest.mark.parametrize("api", list(peers.LOOP_APIS))
@pytest.mark.parametrize("data", ["--reuse", "--distinct"])
def test_write_loop_writes_through_each_call(write_loop: Path, tmp_path: Path, api: str, data: str) -> None:
    out = run_ranks(
        3,
        ["--api", api, data, "-b", "64k", "-t", "16k", "-s", "2", "-i", "2", "-o", str(tmp_path / "loop.dat")],
        program=write_loop,
        timeout=60,
    )
    assert out.status == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("{"))
    result = json.loads(line)
    assert result["bytes"] == 3 * 2 * 64 * 1024
    assert len(result["seconds"]) == 2 and all(s > 0 for s in result["seconds"])
    assert not (tmp_path / "loop.dat").exists()  # removed after the last write


def test_write_loop_refuses_a_file_per_process_for_hdf5(write_loop: Path, tmp_path: Path) -> None:
    out = run_ranks(
        2,
        [
            "--api",
            "hdf5",
            "--reuse",
            "-b",
            "64k",
            "-t",
            "16k",
            "-s",
            "1",
            "-F",
            "-i",
            "1",
            "-o",
            str(tmp_path / "loop.dat"),
        ],
        program=write_loop,
        timeout=60,
        allow_missing=True,
    )
    assert "usage: write_loop" in out.stderr
