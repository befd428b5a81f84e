"""bench/write_loop.c, the plain writer `make bench-peers` runs beside each IOR pattern: it builds
the way bench/peers.py builds it and writes through each of its calls (pwrite, the collective
MPI-IO write, the collective H5Dwrite), so the benchmark's calibration rows cannot rot unseen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
from conftest import ROOT, run_ranks

sys.path.insert(0, str(ROOT / "bench"))
import peers  # noqa: E402  (bench/peers.py, after the path above)


@pytest.fixture(scope="module")
def write_loop(tmp_path_factory) -> Path:
    return peers.build_loop(tmp_path_factory.mktemp("loop"), lambda _: None)


BLOCK, TRANSFER, SEGMENTS, REPS, RANKS = 64 * 1024, 16 * 1024, 2, 2, 3


def rank_bytes(rank: int, rep: int, n: int) -> bytes:
    """What write_loop.c puts in a rank's buffer of n bytes in repetition rep: the 64-bit little-endian
    (rank << 40) ^ (rep << 32) ^ k at every byte k that is a multiple of 8."""
    k = np.arange(0, n, 8, dtype=np.uint64)
    words = (np.uint64(rank) << np.uint64(40)) ^ (np.uint64(rep) << np.uint64(32)) ^ k
    return words.astype("<u8").tobytes()[:n]


def expected_file(rank: int | None, reuse: bool) -> bytes:
    """The last repetition's bytes: of one rank's file (file per process) or of the shared file,
    where segment s of rank r lands at (s * ranks + r) * block."""
    local = BLOCK * SEGMENTS
    out = bytearray()
    for s in range(SEGMENTS):
        for r in range(RANKS) if rank is None else [rank]:
            data = rank_bytes(r, REPS - 1, TRANSFER if reuse else local)
            out += data * (BLOCK // TRANSFER) if reuse else data[s * BLOCK : (s + 1) * BLOCK]
    return bytes(out)


def written_data(path: Path, api: str, total: int) -> bytes:
    """The data the loop wrote, as its API lays it out: raw for posix and MPI-IO, the dataset's
    values for HDF5, and for PnetCDF the one fixed-size variable, which follows the header and ends
    the file (no fill, no record variables)."""
    if api == "hdf5":
        with h5py.File(path, "r") as f:
            return f["data"][()].tobytes()
    raw = path.read_bytes()
    if api == "pnetcdf":
        assert raw[:4] == b"CDF\x05", "not a CDF-5 file"
        return raw[-total:]
    return raw


@pytest.mark.parametrize("api", list(peers.LOOP_APIS))
@pytest.mark.parametrize("data", ["--reuse", "--distinct"])
def test_write_loop_writes_through_each_call(write_loop: Path, tmp_path: Path, api: str, data: str) -> None:
    sizes = ["-b", str(BLOCK), "-t", str(TRANSFER), "-s", str(SEGMENTS), "-i", str(REPS)]
    path = tmp_path / "loop.dat"
    out = run_ranks(RANKS, ["--api", api, data, *sizes, "-o", str(path), "--keep"], program=write_loop, timeout=60)
    assert out.status == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("{"))
    result = json.loads(line)
    assert result["bytes"] == RANKS * SEGMENTS * BLOCK
    assert len(result["seconds"]) == REPS and all(s > 0 for s in result["seconds"])
    assert written_data(path, api, result["bytes"]) == expected_file(None, data == "--reuse")


@pytest.mark.parametrize("api", ["posix", "mpiio-coll"])
def test_write_loop_writes_a_file_per_process(write_loop: Path, tmp_path: Path, api: str) -> None:
    sizes = ["-b", str(BLOCK), "-t", str(TRANSFER), "-s", str(SEGMENTS), "-i", str(REPS)]
    path = tmp_path / "loop.dat"
    out = run_ranks(RANKS, ["--api", api, "--distinct", "-F", *sizes, "-o", str(path), "--keep"], program=write_loop)
    assert out.status == 0, out.stderr
    for r in range(RANKS):
        assert (tmp_path / f"loop.dat.{r:08d}").read_bytes() == expected_file(r, False)


def test_write_loop_removes_its_file_unless_kept(write_loop: Path, tmp_path: Path) -> None:
    path = tmp_path / "loop.dat"
    out = run_ranks(2, ["--api", "posix", "--reuse", "-b", "4k", "-t", "4k", "-o", str(path)], program=write_loop)
    assert out.status == 0, out.stderr
    assert not path.exists()


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


def test_every_mpi_io_variant_runs_under_romio_too() -> None:
    """bench/peers.py's E3SM multi-dataset comparison: hdf5-multi goes through MPI-IO as E3SM-IO's
    -a hdf5_md does, so both run under ROMIO too and are compared there (OMPIO alone made
    hdf5-multi 10x slower on the real F maps at 16 ranks, 36 s against 3.6 s)."""
    w = {"variants": [], "pairs": [], "engine": "strata strata (engine)"}
    peers.add_hdf5_multi(w, Path("strata"))
    w = peers.with_romio(w, {"ompio", "romio"})
    labels = {v["label"] for v in w["variants"]}
    assert {"strata hdf5-multi [romio]", peers.under_romio(peers.HDF5_MD_PEER)} <= labels
    assert (peers.under_romio(peers.HDF5_MD_PEER), "strata hdf5-multi [romio]") in w["pairs"]
    assert "strata strata --container hdf5 [romio]" not in labels  # the engine moves its own bytes
