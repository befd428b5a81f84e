"""HACC-IO and S3D-IO reject bad parameters on every rank alike, with a message naming the fix."""

from __future__ import annotations

from pathlib import Path

from conftest import built_backends, catalogue, run_ranks
from test_bad_input import USAGE, assert_clean_failure

# Run on 1 and 3 ranks over a previous output by the bad-input suite (test_bad_input_suite.py).
CASES = [
    ("hacc zero particles", ["hacc", "--backend", "posix", "--particles", "0"], ["--particles"]),
    ("hacc unknown layout", ["hacc", "--backend", "posix", "--layout", "csv"], ["--layout must be aos or soa"]),
    ("s3d two grid values", ["s3d", "--backend", "posix", "--grid", "8x8"], ["--grid needs 3"]),
    ("s3d zero grid value", ["s3d", "--backend", "posix", "--grid", "8x0x8"], ["greater than zero"]),
    ("s3d process grid of another size", ["s3d", "--backend", "posix", "--procs", "2x2x2"], ["makes 8 ranks"]),
    (
        "s3d interval past the steps",
        ["s3d", "--backend", "posix", "--grid", "12x12x12", "--steps", "3", "--interval", "4"],
        ["no checkpoint"],
    ),
]
# Per-node files through a backend of this build that cannot write them (from its catalogue row).
_UNABLE = [b for b in built_backends() if "file-per-node" not in catalogue().backend(b)["layouts"]]
if _UNABLE:
    CASES.append(
        (
            f"hacc per node through {_UNABLE[0]}",
            ["hacc", "--backend", _UNABLE[0], "--file-per-node"],
            ["cannot express --file-per-node"],
        )
    )


def test_s3d_grid_not_divisible_by_the_process_grid(tmp_path: Path) -> None:
    outcome = run_ranks(3, ["run", "s3d", "--backend", "posix", "--grid", "10x12x12", "--output", "out"], cwd=tmp_path)
    assert_clean_failure(outcome, USAGE, "X = 10 is not divisible by 3")
