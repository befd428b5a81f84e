"""The hdf5-multi backend (HDF5 >= 1.14's H5Dwrite_multi / H5Dread_multi), where it is built in:
`make test-hdf5-114` runs this file against build-hdf5-114/bin/strata (elsewhere it is skipped).
On the E3SM F and G cases and the multidataset paper's 3-D kernel, at 1 to 16 ranks: written,
read back and verified by Strata, every element read by h5py equal to the kernel's values and to
the hdf5 backend's file (one H5Dwrite per dataset), in one collective call per write where hdf5
makes one per dataset."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import pytest
import test_first_hour as first_hour
from conftest import built_backends, catalogue, run_ranks
from test_multidataset import F_SMALL, G_SMALL, N3D_SMALL, check_every_element, write

pytestmark = pytest.mark.skipif(
    "hdf5-multi" not in built_backends(), reason="hdf5-multi is not built in (HDF5 >= 1.14: make build-hdf5-114)"
)

CASES = {"f": (F_SMALL, 24), "g": (G_SMALL, 12), "noncontig3d": (N3D_SMALL, 5)}


def test_catalogue_lists_it_as_one_call_for_all_datasets() -> None:
    row = catalogue().backend("hdf5-multi")
    assert row["call_per_variable"] is False and row["mpi_io"] is True
    assert catalogue().backends.index("hdf5-multi") == catalogue().backends.index("hdf5") + 1


@pytest.mark.parametrize("ranks", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("case", list(CASES))
def test_writes_what_hdf5_writes_in_one_call(tmp_path: Path, case: str, ranks: int) -> None:
    kernel, datasets = CASES[case]
    multi = write(tmp_path, ranks, kernel, ["--backend", "hdf5-multi"], "multi.h5")
    single = write(tmp_path, ranks, kernel, ["--backend", "hdf5"], "single.h5")
    assert check_every_element(tmp_path / "multi.h5", 3) == datasets
    with h5py.File(tmp_path / "multi.h5", "r") as a, h5py.File(tmp_path / "single.h5", "r") as b:
        assert sorted(a) == sorted(b)
        for name in a:
            assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape, name
            assert np.array_equal(a[name][...], b[name][...]), name
    calls = multi["repetitions"][0]["write"]["collective"]["calls"]
    assert calls == 1, f"hdf5-multi made {calls} collective calls"
    assert single["repetitions"][0]["write"]["collective"]["calls"] == datasets


def test_transfer_steps_make_one_call_per_step(tmp_path: Path) -> None:
    """A transfer size cuts the data into steps: one H5Dwrite_multi per step, verified on read, and
    the file the hdf5 backend writes in the same steps."""
    kernel = ["blocks", "--vars", "3", "--shape", "10x9x7", "--tiles-per-rank", "3", "--transfer-size", "72"]
    record = write(tmp_path, 3, kernel, ["--backend", "hdf5-multi"], "steps.h5")
    single = write(tmp_path, 3, kernel, ["--backend", "hdf5"], "single.h5")
    with h5py.File(tmp_path / "steps.h5", "r") as a, h5py.File(tmp_path / "single.h5", "r") as b:
        assert sorted(a) == sorted(b) and len(a) == 3
        assert all(np.array_equal(a[n][...], b[n][...]) for n in a)
    calls = record["repetitions"][0]["write"]["collective"]["calls"]  # one per step (max over ranks)
    assert calls > 1 and record["repetitions"][0]["write"]["requests"] == 3 * calls  # summed over 3 ranks
    assert single["repetitions"][0]["write"]["collective"]["calls"] == 3 * calls  # one per step and dataset


def test_independent_transfers(tmp_path: Path) -> None:
    write(tmp_path, 3, G_SMALL, ["--backend", "hdf5-multi", "--independent"], "ind.h5")
    assert check_every_element(tmp_path / "ind.h5", 3) == 12


def test_a_file_with_a_dataset_missing_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path, 2, G_SMALL, ["--backend", "hdf5-multi"], "m.h5")
    with h5py.File(tmp_path / "m.h5", "a") as f:
        del f[sorted(f)[0]]
    out = run_ranks(
        2,
        [
            "run",
            *G_SMALL,
            "--backend",
            "hdf5-multi",
            "--read",
            "--verify",
            "--seed",
            "3",
            "--output",
            "m.h5",
            "--quiet",
        ],
        cwd=tmp_path,
    )
    assert out.status != 0 and "has no dataset" in out.stderr


def test_per_block_is_refused(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", *F_SMALL, "--backend", "hdf5-multi", "--per-block"], cwd=tmp_path)
    assert out.status == 2 and "--per-block" in out.stderr
    options = catalogue().backend("hdf5-multi")["options"]
    assert "per-block" not in options and "independent" in options, options


def test_deadline_stops_the_steps_together(tmp_path: Path) -> None:
    """--deadline (IOR -D): the step's one H5Dwrite_multi is collective, so the ranks stop together,
    as the hdf5 backend's calls do (test_first_hour's deadline test, through hdf5-multi)."""
    assert "deadline" in catalogue().backend("hdf5-multi")["options"]
    first_hour.test_deadline_stops_each_phase_and_reports_what_moved(tmp_path, ["hdf5-multi"])
