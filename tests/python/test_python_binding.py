"""The Python binding (`import strata`; strata.Phase over the engine: python/ext/phase_module.cpp)
under mpirun with the venv's Python: the example's file equals the C++ example's byte for byte
and the values it should hold; HDF5 containers read back with h5py; bad declarations raise
strata.Error on every rank and leave no file; statistics, extents and strided memory work."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT, STRATA, run_ranks

PYTHON = Path(sys.executable)
EXAMPLE = ROOT / "examples" / "python" / "phase.py"
CASES = Path(__file__).with_name("phase_cases.py")
FIELD3D = STRATA.parent / "field3d"  # docs/examples/field3d.cpp
SHAPE = (20, 12, 10)


def expected_fields(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """What the examples write, computed here from their definition."""
    index = np.arange(int(np.prod(shape))).reshape(shape)
    return 0.5 * index.astype(np.float64), (index % 1000).astype(np.float32) + np.float32(0.25)


def cases(np_: int, which: str, folder: Path) -> dict[str, dict[int, str]]:
    """Runs phase_cases.py WHICH on np_ ranks, its files in `folder`: per case, each rank's outcome."""
    outcomes = folder.parent / f"{folder.name}.outcomes"
    folder.mkdir()
    outcomes.mkdir()
    out = run_ranks(np_, [str(CASES), which, str(folder), str(outcomes)], program=PYTHON, timeout=60)
    assert out.status == 0, out.stdout + out.stderr
    found: dict[str, dict[int, str]] = {}
    for rank in range(np_):
        for name, outcome in json.loads((outcomes / f"rank{rank}.json").read_text()).items():
            found.setdefault(name, {})[rank] = outcome
    return found


def test_binding_is_the_package_class() -> None:
    import strata

    assert strata.Phase.__module__ == "strata" and strata.Phase.__name__ == "Phase"
    assert issubclass(strata.Error, RuntimeError)


@pytest.mark.parametrize("np_", [1, 3])
def test_example_equals_the_cpp_example(tmp_path: Path, np_: int) -> None:
    out = run_ranks(np_, [str(EXAMPLE), str(tmp_path / "py.dat")], program=PYTHON, timeout=60)
    assert out.status == 0, out.stdout + out.stderr
    assert "read back and checked" in out.stdout
    temperature, pressure = expected_fields(SHAPE)
    data = (tmp_path / "py.dat").read_bytes()
    assert data == temperature.tobytes() + pressure.tobytes()
    if np_ == 3:  # the C++ path, same declaration: the same bytes
        cpp = run_ranks(np_, [str(tmp_path / "cpp.dat")], program=FIELD3D, timeout=60)
        assert cpp.status == 0, cpp.stdout + cpp.stderr
        assert (tmp_path / "cpp.dat").read_bytes() == data


def test_example_hdf5_container_reads_back_with_h5py(tmp_path: Path) -> None:
    h5py = pytest.importorskip("h5py")
    out = run_ranks(
        4, [str(EXAMPLE), str(tmp_path / "f.h5"), "--shape", "9x7x5", "--container", "hdf5"], program=PYTHON, timeout=60
    )
    assert out.status == 0, out.stdout + out.stderr
    assert "read back and checked, and with h5py" in out.stdout
    temperature, pressure = expected_fields((9, 7, 5))
    with h5py.File(tmp_path / "f.h5", "r") as f:
        assert f["temperature"].dtype == np.float64 and f["pressure"].dtype == np.float32
        assert np.array_equal(f["temperature"][...], temperature)
        assert np.array_equal(f["pressure"][...], pressure)


def test_bad_declarations_raise_on_every_rank_and_leave_no_file(tmp_path: Path) -> None:
    found = cases(3, "errors", tmp_path / "files")
    want = {
        "past_the_end": "reaches past",
        "wrong_dtype": "float32, another dtype than the variable's float64",
        "byte_order": "byte order",
        "bad_hint": "strata_fsync",
        "scattered_hdf5": "evenly spaced",
        "overlap_hdf5": "overlap",
        "read_only": "read-only",
    }
    for name, fragment in want.items():
        outcome = found.get(name, {})
        assert sorted(outcome) == [0, 1, 2], f"{name}: {outcome}"
        assert all(line.startswith("RAISED ") for line in outcome.values()), f"{name}: {outcome}"
        assert len(set(outcome.values())) == 1, f"{name}: ranks differ: {outcome}"  # same status and message
        assert fragment in outcome[0], f"{name}: {outcome[0]}"
        assert outcome[0].split()[1:3] == ["2", "usage"], f"{name}: {outcome[0]}"
    left = sorted(p.name for p in (tmp_path / "files").iterdir())
    assert left == ["ro.dat", "ro.dat.strata-index.json"], left  # only the good write of read_only


def test_statistics_extents_and_strided_memory(tmp_path: Path) -> None:
    found = cases(4, "api", tmp_path / "files")
    stats = found["statistics"]
    assert sorted(stats) == [0, 1, 2, 3] and len(set(stats.values())) == 1, stats  # the same phase-wide figures
    first = json.loads(stats[0].removeprefix("OK "))
    assert first["bytes"] == 4 * 1000 * 8 and first["local"] == 1000 * 8
    assert first["executions"] == 1 and first["strategy"]
    assert first["buffers"] == 3, first  # strata_buffers=3, whatever strategy the plan chose
    assert np.array_equal(np.fromfile(tmp_path / "files" / "ints.dat", dtype=np.int64), np.arange(4000))
    assert found["records"] == {r: "OK true" for r in range(4)}
    raw = np.fromfile(tmp_path / "files" / "rec.dat", dtype=np.int64)
    assert np.array_equal(raw[:4000], np.arange(4000))
    assert np.array_equal(raw[4000:].view(np.float64), np.arange(4000) * 0.5)
