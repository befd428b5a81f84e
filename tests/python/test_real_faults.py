"""Real faults, not injected ones (issue 17): a full file system — a 2 MiB tmpfs mounted by the
test — under every backend and both MPI-IO components. Every run must fail on every rank with a
message that names the full disk, within the timeout, never report success; the engine must
leave the previous output whole and verifiable."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import built_backends, run_ranks

BIG = ["--dist", "uniform", "--size", "4000000"]  # 2 x 7.6 MiB: more than the file system holds
SMALL = ["--dist", "uniform", "--size", "40000"]  # fits
ROMIO = ["--mca", "io", "romio321"]
# HDF5 1.10 closes a file left open inside MPI_Finalize (an attribute callback on MPI_COMM_SELF),
# outside the watchdog's reach, where it has crashed (ROMIO, status 139) or hung (OMPIO). The hdf5
# backend now writes its metadata before the data, so a failed data write leaves the file
# closable; these cells keep a short mpirun time limit and a non-strict xfail as a guard while the
# rest of issue 17's matrix is built (they passed 15 times of 15 here).
HDF5_AT_FINALIZE = "HDF5 1.10 may crash or hang in MPI_Finalize closing a file a failed write left open"


@pytest.fixture()
def full_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, mounted for the test (skipped where mounting is refused)."""
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


CELLS = [(b, "ompio", 2) for b in built_backends()] + [(b, "romio", n) for b in built_backends() for n in (2, 3)]


@pytest.mark.parametrize("backend,component,ranks", CELLS)
def test_a_full_file_system_is_an_error_naming_it(full_fs: Path, backend: str, component: str, ranks: int,
                                                   request: pytest.FixtureRequest) -> None:
    if backend == "hdf5":
        request.applymarker(pytest.mark.xfail(reason=HDF5_AT_FINALIZE, strict=False))
    # mpirun's own time limit ends a job that hangs where the watchdog cannot see (MPI_Finalize).
    launcher = [*(ROMIO if component == "romio" else []), "--timeout", "20" if backend == "hdf5" else "90"]
    out = run_ranks(ranks, ["run", "array1d", *BIG, "--backend", backend, "--output", str(full_fs / "o"), "--quiet"],
                    mca=launcher, env={"STRATA_TIMEOUT": "30"}, timeout=120)
    assert set(out.statuses.values()) == {1}, (out.statuses, out.stderr)
    errors = [line for line in out.stderr.splitlines() if line.startswith("strata: error:")]
    assert len(errors) == 1, out.stderr
    assert "No space left on device" in errors[0] or "is full" in errors[0], errors[0]


@pytest.mark.parametrize("component", ["ompio", "romio"])
def test_the_engine_keeps_the_previous_output_when_the_disk_fills(full_fs: Path, component: str) -> None:
    mca = ROMIO if component == "romio" else None
    target = str(full_fs / "e")
    good = ["run", "array1d", *SMALL, "--backend", "strata", "--output", target, "--quiet"]
    assert run_ranks(2, good, mca=mca).status == 0
    before = {p.name: p.read_bytes() for p in full_fs.iterdir()}
    out = run_ranks(2, ["run", "array1d", *BIG, "--backend", "strata", "--output", target, "--quiet"], mca=mca,
                    env={"STRATA_TIMEOUT": "30"}, timeout=120)
    assert set(out.statuses.values()) == {1} and "No space left on device" in out.stderr, out.stderr
    assert {p.name: p.read_bytes() for p in full_fs.iterdir()} == before, "the previous output changed"
    assert run_ranks(2, ["verify", target], mca=mca).status == 0
    assert run_ranks(2, [*good, "--read", "--verify"], mca=mca).status == 0
