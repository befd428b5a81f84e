"""strata run mslio: its text files parse back to the generated values, its calls and volumes are
the paper's, each mode's layout is what it says, and errors are collective."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from app_values import float64_values
from conftest import built_backends, requires_backend, run_ranks

# The modes the tests below run: original, the shared file, the engine, and hdf5 when built in.
RUN_MODES = ["original", "shared", "strata"] + (["hdf5"] if "hdf5" in built_backends() else [])


def points(subelements: int) -> int:
    return math.ceil((0.443 * subelements**2 + 1.32 * subelements + 1) / 2)


def expected_text(values: np.ndarray, problem: int, npoints: int, dims: int) -> str:
    """Local problem `problem`'s file: dimension by dimension, 13 characters and a newline each."""
    mine = values[problem * npoints * dims : (problem + 1) * npoints * dims].reshape(npoints, dims)
    return "".join(f"{mine[p, d]:13.6e}\n" for d in range(dims) for p in range(npoints))


def test_original_files_parse_back_to_the_generated_values(tmp_path: Path) -> None:
    ccross, sub, dims, seed = 1, 8, 3, 4
    out = run_ranks(
        3,
        [
            "run",
            "mslio",
            "--ccross",
            str(ccross),
            "--subelements",
            str(sub),
            "--dims",
            str(dims),
            "--seed",
            str(seed),
            "--threads",
            "2",
            "--output",
            "out",
            "--json",
            "r.json",
        ],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    n, npoints = 4**ccross, points(sub)
    values = float64_values("solution", n * npoints * dims, seed)
    for k in range(n):
        text = (tmp_path / "out" / f"lp{k:07d}" / "solution.txt").read_text()
        assert text == expected_text(values, k, npoints, dims)
        parsed = np.array([float(x) for x in text.split()]).reshape(dims, npoints).T
        want = values[k * npoints * dims : (k + 1) * npoints * dims].reshape(npoints, dims)
        assert np.allclose(parsed, want, rtol=5.0000001e-7, atol=0)
    record = json.loads((tmp_path / "r.json").read_text())
    calls = record["repetitions"][0]["write"]["kernel"]["calls"]
    # As the paper traced it: each file opened and closed once, one 14-byte write per value.
    assert calls == {"open": n, "write": n * npoints * dims, "close": n}
    assert record["files"] == n and record["layout"] == "file per local problem"
    assert record["repetitions"][0]["write"]["bytes"] == n * npoints * dims * 14


# Table I cells written here; all four acceptance cells, (6, 256) included, are computed in
# tests/unit/mslio_test.cpp (1.7 GB is too much to write in a test).
@pytest.mark.parametrize("ccross,sub,mb,files", [(3, 64, 1.7, 64), (4, 128, 26.6, 256), (5, 32, 7.1, 1024)])
def test_written_volume_and_file_count_match_table_one(
    tmp_path: Path, ccross: int, sub: int, mb: float, files: int
) -> None:
    out = run_ranks(
        2,
        ["run", "mslio", "--ccross", str(ccross), "--subelements", str(sub), "--output", "t", "--json", "r.json"],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    written = list((tmp_path / "t").glob("lp*/solution.txt"))
    assert len(written) == files == record["files"]
    total = sum(p.stat().st_size for p in written)
    assert total == record["params"]["text_bytes"] == record["repetitions"][0]["write"]["bytes"]
    assert total / 1e6 == pytest.approx(mb, rel=0.02)


def test_buffered_mode_writes_one_call_per_full_buffer(tmp_path: Path) -> None:
    out = run_ranks(
        2,
        [
            "run",
            "mslio",
            "--ccross",
            "1",
            "--subelements",
            "16",
            "--mode",
            "buffered",
            "--buffer-size",
            "700",
            "--output",
            "b",
            "--json",
            "r.json",
            "--verify",
        ],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    record = json.loads((tmp_path / "r.json").read_text())
    per_buffer = 700 // 14
    values = 2 * points(16)
    assert record["repetitions"][0]["write"]["kernel"]["calls"]["write"] == 4 * math.ceil(values / per_buffer)


def test_shared_and_strata_files_hold_each_problem_as_a_chunk(tmp_path: Path) -> None:
    seed, n, npoints = 3, 16, points(16)
    values = float64_values("solution", n * npoints * 2, seed)
    for mode, extra, stride in (("shared", [], npoints * 2 * 14), ("strata", ["--align", "4K"], 4096)):
        out = run_ranks(
            3,
            [
                "run",
                "mslio",
                "--ccross",
                "2",
                "--subelements",
                "16",
                "--mode",
                mode,
                *extra,
                "--seed",
                str(seed),
                "--output",
                mode,
                "--verify",
            ],
            cwd=tmp_path,
        )
        assert out.status == 0, out.stderr
        data = (tmp_path / mode / "solutions.txt").read_bytes()
        for k in range(n):
            chunk = data[k * stride : k * stride + npoints * 2 * 14].decode()
            assert chunk == expected_text(values, k, npoints, 2), f"{mode}: local problem {k}"


@requires_backend("hdf5")  # the hdf5 mode is built with the HDF5 backend
@pytest.mark.skipif(shutil.which("h5dump") is None, reason="needs HDF5's tools (hdf5-tools)")
def test_hdf5_mode_has_a_dataset_per_dimension(tmp_path: Path) -> None:
    seed, n, npoints, dims = 2, 16, points(16), 3
    out = run_ranks(
        4,
        [
            "run",
            "mslio",
            "--ccross",
            "2",
            "--subelements",
            "16",
            "--dims",
            str(dims),
            "--mode",
            "hdf5",
            "--seed",
            str(seed),
            "--output",
            "h",
            "--verify",
        ],
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    values = float64_values("solution", n * npoints * dims, seed).reshape(n * npoints, dims)
    # Read with HDF5's own tools: h5ls lists the datasets, h5dump gives their raw values.
    listing = subprocess.run(
        ["h5ls", str(tmp_path / "h" / "solutions.h5")], capture_output=True, text=True, check=True
    ).stdout.split()
    assert listing == [w for d in range(dims) for w in (f"dim{d}", "Dataset", f"{{{n * npoints}}}")]
    for d in range(dims):
        raw = tmp_path / f"dim{d}.bin"
        subprocess.run(
            ["h5dump", "-d", f"/dim{d}", "-b", "LE", "-o", str(raw), str(tmp_path / "h" / "solutions.h5")],
            capture_output=True,
            check=True,
        )
        assert np.array_equal(np.fromfile(raw, dtype="<f8"), values[:, d])


def test_corrupted_text_is_found_on_every_rank(tmp_path: Path) -> None:
    args = ["run", "mslio", "--ccross", "1", "--subelements", "8", "--output", "c"]
    assert run_ranks(2, args, cwd=tmp_path).status == 0
    path = tmp_path / "c" / "lp0000003" / "solution.txt"
    text = bytearray(path.read_bytes())
    text[14 * 5 + 3] = ord("9") if text[14 * 5 + 3] != ord("9") else ord("8")
    path.write_bytes(bytes(text))
    out = run_ranks(2, [*args, "--read", "--verify"], cwd=tmp_path)
    assert out.status == 3
    assert 'lp0000003/solution.txt": local problem 3, dimension 0, point 5' in out.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["--ccross", "13"], "--ccross must be between 0 and 12"),
        (["--mode", "fast"], 'unknown --mode "fast"'),
        (["--mode", "buffered", "--buffer-size", "10"], "--buffer-size must hold at least one value"),
        (["--buffer-size", "1K"], "--buffer-size applies to --mode buffered or shared"),
        (["--align", "4K"], "--align applies to --mode strata"),
        (["--backend", "posix"], "--backend"),
    ],
)
def test_bad_parameters_fail_alike_on_every_rank(tmp_path: Path, args: list[str], message: str) -> None:
    out = run_ranks(3, ["run", "mslio", *args, "--output", "x"], cwd=tmp_path)
    assert out.status == 2
    assert message in out.stderr
    assert not (tmp_path / "x").exists()


def test_help_lists_the_modes() -> None:
    out = run_ranks(1, ["run", "mslio", "--help"])
    assert out.status == 0
    assert "modes (--mode):" in out.stdout
    for mode in ("original", "buffered", "shared", "strata", "hdf5"):
        assert f"  {mode} " in out.stdout
    out = run_ranks(1, ["run", "--help"])
    assert "  mslio " in out.stdout and "  pace3d " in out.stdout


@pytest.mark.parametrize("mode", RUN_MODES)
def test_missing_output_is_a_runtime_error_on_every_rank(tmp_path: Path, mode: str) -> None:
    out = run_ranks(
        3,
        [
            "run",
            "mslio",
            "--ccross",
            "1",
            "--subelements",
            "4",
            "--mode",
            mode,
            "--read",
            "--output",
            str(tmp_path / "none"),
        ],
    )
    assert out.status == 1
    assert "strata: error:" in out.stderr and "none" in out.stderr


def test_unwritable_output_is_a_runtime_error_on_every_rank(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = run_ranks(3, ["run", "mslio", "--ccross", "1", "--output", str(blocker / "out")])
    assert out.status == 1
    assert "strata: error:" in out.stderr and "file/out" in out.stderr


def test_more_ranks_than_local_problems(tmp_path: Path) -> None:
    for mode in RUN_MODES:
        out = run_ranks(
            3,
            [
                "run",
                "mslio",
                "--ccross",
                "0",
                "--subelements",
                "4",
                "--mode",
                mode,
                "--write",
                "--read",
                "--verify",
                "--output",
                mode,
            ],
            cwd=tmp_path,
        )
        assert out.status == 0, out.stderr
