"""Every backend's file spans the decomposition, trailing elements that no rank owns included,
and a write is checked before it is reported (issue 17: never a short file, never a false success)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import built_backends, catalogue, run_ranks

# A PIO map over a 12 x 4 array whose last five elements (44-48, 1-based) belong to no rank, as
# the land-only cells at the end of a real land-model map do; element 20 is a hole inside.
TRAILING_MAP = """version 2001 npes 4 ndims 2
12 4
0 11
1 2 3 4 5 6 7 8 9 10 11
1 8
12 13 14 15 16 17 18 19
2 11
21 22 23 24 25 26 27 28 29 30 31
3 12
32 33 34 35 36 37 38 39 40 41 42 43
"""
ELEMENTS = 48

# The backends whose file holds raw bytes (the others are containers: HDF5, netCDF).
RAW = [b for b in built_backends() if catalogue().backend(b)["raw_file"]]


@pytest.mark.parametrize("backend", RAW)
def test_trailing_unowned_elements_are_in_the_file(tmp_path: Path, backend: str) -> None:
    """The file is exactly as long as the array (a reader sizes it by the decomposition), reads
    back and verifies in the same launch and in a later one."""
    (tmp_path / "trailing.map").write_text(TRAILING_MAP)
    args = [
        "run",
        "e3sm",
        "--maps",
        "trailing.map",
        "--map-vars",
        "1",
        "--seed",
        "3",
        "--backend",
        backend,
        "--output",
        "t.dat",
        "--json",
        "r.json",
        "--quiet",
    ]
    out = run_ranks(4, [*args, "--write", "--verify"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["verified"] is True
    size = (tmp_path / "t.dat").stat().st_size
    assert size % ELEMENTS == 0 and size // ELEMENTS in (4, 8), size
    assert (tmp_path / "t.dat").read_bytes()[-5 * (size // ELEMENTS) :] == bytes(5 * (size // ELEMENTS))
    # A read alone, by other rank counts: the writers' layout (--writer-ranks; for the engine, its
    # index's written ranges) says which elements nobody owned, and those are not checked.
    for readers in (3, 4):
        out = run_ranks(readers, [*args, "--read", "--verify"], cwd=tmp_path)
        assert out.status == 0, out.stderr


@pytest.mark.parametrize("backend", RAW)
def test_per_node_files_span_every_rank_of_the_node(tmp_path: Path, backend: str) -> None:
    """One file per (virtual) node: each is as long as the sum of its ranks' data, the last rank's
    share included."""
    args = [
        "run",
        "array1d",
        "--dist",
        "random",
        "--size",
        "8K",
        "--seed",
        "5",
        "--backend",
        backend,
        "--file-per-node",
        "--output",
        "n.dat",
        "--json",
        "r.json",
        "--verify",
        "--quiet",
    ]
    out = run_ranks(4, args, cwd=tmp_path, env={"STRATA_RANKS_PER_NODE": "2"})
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    files = sorted(tmp_path.glob("n.dat.node?????"))
    assert len(files) == 2
    assert sum(f.stat().st_size for f in files) == record["global_bytes"]
