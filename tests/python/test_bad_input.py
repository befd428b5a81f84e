"""Bad input gives a clear message, the same non-zero status on every rank, no hang, no trace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import built_backends, catalogue, requires_backend, run_ranks

USAGE, RUNTIME, VERIFICATION = 2, 1, 3
BACKENDS = built_backends()
# Backends whose output is the raw layout: a file too short for the data is theirs to detect.
RAW_BACKENDS = [b for b in BACKENDS if catalogue().backend(b)["file_extension"] == ".dat"]
SMALL_IOR = ["--block-size", "16K", "--transfer-size", "4K"]


def assert_clean_failure(outcome, status: int, *fragments: str) -> None:
    assert outcome.status == status, outcome.stderr
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("strata: error:")]
    assert len(errors) == 1, f"expected one error line (rank 0), got:\n{outcome.stderr}"
    for fragment in fragments:
        assert fragment in errors[0], f"{fragment!r} not in {errors[0]!r}"
    for bad in ("Traceback", "terminate called", "MPI_ABORT", "Segmentation", "internal error"):
        assert bad not in outcome.stderr, outcome.stderr


# Run on 1 and 3 ranks, each over a previous output it must leave alone, by the bad-input suite
# (test_bad_input_suite.py), with the cases of the other categories.
CASES = [
    ("unknown kernel", ["run", "nosuchkernel", "--backend", "posix"], USAGE, ['unknown kernel "nosuchkernel"', "ior"]),
    ("unknown backend", ["run", "ior", "--backend", "nfs4"], USAGE, ['unknown backend "nfs4"', "mpiio-coll"]),
    ("unknown command", ["frobnicate"], USAGE, ['unknown command "frobnicate"']),
    ("unknown option", ["run", "ior", "--backend", "posix", "--blocksize", "4K"], USAGE, ['"--blocksize"']),
    ("missing backend", ["run", "ior"], USAGE, ["--backend"]),
    ("missing value", ["run", "ior", "--backend"], USAGE, ["--backend needs a value"]),
    (
        "negative block size",
        ["run", "ior", "--backend", "posix", "--block-size", "-4K"],
        USAGE,
        ["--block-size", "negative"],
    ),
    (
        "zero block size",
        ["run", "ior", "--backend", "posix", "--block-size", "0"],
        USAGE,
        ["--block-size must be greater than zero"],
    ),
    ("zero array size", ["run", "array1d", "--backend", "posix", "--size", "0"], USAGE, ["--size"]),
    ("zero segments", ["run", "ior", "--backend", "posix", "--segments", "0"], USAGE, ["--segments"]),
    ("bad unit", ["run", "ior", "--backend", "posix", "--block-size", "4X"], USAGE, ["unknown unit"]),
    (
        "transfer does not divide block",
        ["run", "ior", "--backend", "mpiio-coll", "--block-size", "64K", "--transfer-size", "24K"],
        USAGE,
        ["must divide --block-size"],
    ),
    (
        "transfer larger than block",
        ["run", "ior", "--backend", "posix", "--block-size", "16K", "--transfer-size", "32K"],
        USAGE,
        ["larger than --block-size"],
    ),
    ("unknown distribution", ["run", "array1d", "--backend", "posix", "--dist", "zipf"], USAGE, ["--dist"]),
    ("zero repetitions", ["run", "ior", "--backend", "posix", "--repetitions", "0"], USAGE, ["--repetitions"]),
    (
        "malformed hints: no equals",
        ["run", "ior", "--backend", "mpiio-coll", "--hints", "cb_nodes"],
        USAGE,
        ["malformed hint", "key=value"],
    ),
    (
        "malformed hints: empty value",
        ["run", "ior", "--backend", "mpiio-coll", "--hints", "cb_nodes="],
        USAGE,
        ["empty value"],
    ),
    (
        "malformed hints: trailing comma",
        ["run", "ior", "--backend", "mpiio-coll", "--hints", "cb_nodes=2,"],
        USAGE,
        ["malformed"],
    ),
    (
        "two layouts",
        ["run", "ior", "--backend", "posix", "--file-per-node", "--file-per-process"],
        USAGE,
        ["choose one"],
    ),
    (
        "engine buffer below 4 KiB",
        ["run", "ior", "--backend", "strata", "--hints", "cb_buffer_size=1K"],
        USAGE,
        ["below the 4 KiB minimum"],
    ),
    (
        "engine without buffers",
        ["run", "array1d", "--backend", "strata", "--hints", "strata_buffers=0"],
        USAGE,
        ["strata_buffers"],
    ),
    (
        "engine with zero aggregators",
        ["run", "array1d", "--backend", "strata", "--hints", "strata_aggregators=0"],
        USAGE,
        ["strata_aggregators"],
    ),
    (
        "writer ranks while writing",
        ["run", "ior", "--backend", "posix", "--writer-ranks", "4"],
        USAGE,
        ["--writer-ranks applies to reading"],
    ),
    ("info with two paths", ["info", "/tmp", "/var"], USAGE, ["at most one PATH"]),
]
# A layout that a backend of this build cannot express (its catalogue row says which it can).
for _layout in ("file-per-process", "file-per-node"):
    _unable = [b for b in BACKENDS if _layout not in catalogue().backend(b)["layouts"]]
    if _unable:
        CASES.append(
            (
                f"{_layout} through {_unable[0]}",
                ["run", "ior", "--backend", _unable[0], f"--{_layout}"],
                USAGE,
                [f"cannot express --{_layout}"],
            )
        )


def test_unknown_hints_file(tmp_path: Path) -> None:
    outcome = run_ranks(
        3,
        ["run", "ior", *SMALL_IOR, "--backend", "mpiio-coll", "--output", str(tmp_path / "x")],
        env={"STRATA_HINTS": str(tmp_path / "no-such-hints")},
    )
    assert_clean_failure(outcome, USAGE, "cannot read hints file", "no-such-hints")


def test_malformed_hints_file(tmp_path: Path) -> None:
    hints = tmp_path / "hints"
    hints.write_text("cb_nodes 2\nthis line has three\n")
    outcome = run_ranks(
        2,
        ["run", "ior", *SMALL_IOR, "--backend", "mpiio-coll", "--output", str(tmp_path / "x")],
        env={"STRATA_HINTS": str(hints)},
    )
    assert_clean_failure(outcome, USAGE, f"{hints}:2")


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_bad_ranks_per_node(tmp_path: Path, value: str) -> None:
    outcome = run_ranks(
        3,
        ["run", "ior", *SMALL_IOR, "--backend", "posix", "--output", str(tmp_path / "x")],
        env={"STRATA_RANKS_PER_NODE": value},
    )
    assert_clean_failure(outcome, USAGE, "STRATA_RANKS_PER_NODE")


@pytest.mark.parametrize("value", ["0,0", "0,-1,1", "0,x,1"])
def test_bad_node_map(tmp_path: Path, value: str) -> None:
    outcome = run_ranks(
        3,
        ["run", "ior", *SMALL_IOR, "--backend", "posix", "--output", str(tmp_path / "x")],
        env={"STRATA_NODE_MAP": value},
    )
    assert_clean_failure(outcome, USAGE, "STRATA_NODE_MAP")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unwritable_output(tmp_path: Path, backend: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    target = blocker / "out"  # a path through a regular file: ENOTDIR even for root
    outcome = run_ranks(3, ["run", "ior", *SMALL_IOR, "--backend", backend, "--output", str(target)])
    assert_clean_failure(outcome, RUNTIME, str(target))


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_of_missing_file(tmp_path: Path, backend: str) -> None:
    target = tmp_path / "never-written"
    outcome = run_ranks(3, ["run", "array1d", "--backend", backend, "--read", "--verify", "--output", str(target)])
    assert_clean_failure(outcome, RUNTIME, str(target))
    assert not target.exists()


@pytest.mark.parametrize("backend", RAW_BACKENDS)
def test_read_of_short_file(tmp_path: Path, backend: str) -> None:
    target = tmp_path / "short"
    target.write_bytes(b"\0" * 1000)
    outcome = run_ranks(3, ["run", "ior", *SMALL_IOR, "--backend", backend, "--read", "--output", str(target)])
    assert_clean_failure(outcome, RUNTIME, "the file is shorter than the")


@pytest.mark.parametrize("backend", BACKENDS)
def test_corrupt_byte_fails_verification(tmp_path: Path, backend: str) -> None:
    target = tmp_path / "data"
    args = [
        "run",
        "ior",
        "--block-size",
        "8K",
        "--transfer-size",
        "8K",
        "--segments",
        "2",
        "--backend",
        backend,
        "--output",
        str(target),
    ]
    written = run_ranks(3, [*args, "--quiet"])
    assert written.status == 0, written.stderr
    clean = run_ranks(3, [*args, "--read", "--verify", "--quiet"])
    assert clean.status == 0, clean.stderr
    # Flip one bit in the last byte of the data (at the end of the raw file; HDF5 and netCDF
    # keep the dataset's raw data after their headers, so the last byte is data there too).
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0x10
    target.write_bytes(bytes(raw))
    outcome = run_ranks(3, [*args, "--read", "--verify"])
    assert_clean_failure(outcome, VERIFICATION, "verification failed", 'variable "ior"', "expected", "found")
    # The global index of the corrupted byte is the array's last element: 3 ranks x 2 segments x 8192 bytes.
    assert "[49151]" in outcome.stderr, outcome.stderr


@requires_backend("hdf5")
def test_read_with_a_different_decomposition(tmp_path: Path) -> None:
    target = tmp_path / "shape.h5"
    assert run_ranks(2, ["run", "ior", *SMALL_IOR, "--backend", "hdf5", "--output", str(target), "--quiet"]).status == 0
    outcome = run_ranks(3, ["run", "ior", *SMALL_IOR, "--backend", "hdf5", "--read", "--output", str(target)])
    assert_clean_failure(outcome, RUNTIME, "has shape")
