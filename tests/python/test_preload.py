"""The drop-in layer's proof (issue 29), quick part (`make test`): programs nobody here wrote in
Strata's style (tests/preload/programs: parallel HDF5 and PnetCDF in C, MPI-IO through `mpif.h`
and `mpi_f08`, PnetCDF from Fortran), a fuzzer of random file views, the calls the layer must pass
through, a short IOR and a full disk, each run with and without libstrata_preload.so under OMPIO
and under ROMIO:

  - the program succeeds both ways and writes the same file (`cmp`; for HDF5, `h5diff` and no more
    differing bytes than its time stamps hold);
  - the layer's report (STRATA_PRELOAD_REPORT) says the engine ran: engine_calls > 0;
  - calls the engine must not take (atomic mode, shared file pointers, external32, nonblocking
    collectives) are counted with their reason;
  - a full disk (a 2 MiB tmpfs) gives an MPI error on every rank, and the program ends.

Until the library is part of this tree (src/preload), each case checks that the plain runs are
deterministic (the baseline the comparison needs) and then skips saying so; once it is, a missing
build/lib/libstrata_preload.so fails every case. The peers' longer runs (E3SM-IO, more IOR
patterns, more fuzzer seeds) are tests/preload/test_peers.py (`make test-preload`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from strata.preload_runs import (
    Runner,
    built_peers,
    compare_files,
    engine_calls,
    library_path,
    passthrough_reasons,
)

PROGRAMS = ROOT / "build" / "tests" / "preload" / "programs"
RANKS = 4
COMPONENTS = ("ompio", "romio")
# Seeds whose plain runs MPI-IO itself gets right under both components (view_fuzzer checks the file
# against what its writes put there, worked out with MPI's datatype engine apart from MPI-IO).
QUICK_SEEDS = (2, 3)

# Seeds of `view_fuzzer --more` at 3 ranks (a second handle, set_size cutting the file mid-run,
# preallocate) that plain MPI-IO gets right under both components; a layer that let a cut's
# gathered bytes reach the file after the cut fails seed 5.
MORE_SEEDS = (5,)

# case id -> (program and arguments, with {out} for the output; an HDF5 file?)
CASES: dict[str, tuple[list[str], bool]] = {
    "h5_timesteps": (["h5_timesteps", "{out}", "4"], True),
    "pnc_records": (["pnc_records", "{out}", "5"], False),
    "mpiio_mpifh": (["mpiio_mpifh", "{out}", "3"], False),
    "mpiio_f08": (["mpiio_f08", "{out}", "3"], False),
    "pnc_fortran": (["pnc_fortran", "{out}", "4"], False),
}


def program(name: str) -> Path:
    path = PROGRAMS / name
    if not path.exists():
        pytest.skip(f"{path} is not built (its library or compiler is absent: see the cmake output)")
    return path


def fuzzer_args(seed: int, component: str) -> list[str]:
    # OMPIO 4.1.4 lets an independent write that follows a collective one on the same bytes land
    # first (docs/testing.md): --settle syncs between them, in both runs.
    return ["view_fuzzer", str(seed), "{out}", *(["--settle"] if component == "ompio" else [])]


def require_layer() -> None:
    """The drop-in layer is part of this tree: a build without it fails the test, never skips it."""
    if not library_path(ROOT).exists():
        pytest.fail(f"{library_path(ROOT)} is missing: build it (make build)")


def argv(args: list[str], out: Path) -> list[str]:
    exe = program(args[0])
    return [str(exe), *[str(out) if a == "{out}" else a for a in args[1:]]]


def prove(
    args: list[str], component: str, tmp: Path, hdf5: bool = False, ranks: int = RANKS, timeout: float = 120
) -> dict:
    """Runs the program plainly and through the layer; asserts both succeed, the files are the same
    and the engine ran."""
    runner = Runner(ROOT)
    plain_out = tmp / "plain.out"
    plain = runner.launch(argv(args, plain_out), ranks, component, preload=False, timeout=timeout)
    assert plain.returncode == 0, f"the program fails without the preload:\n{plain.why()}"
    require_layer()
    pre_out = tmp / "preload.out"
    pre = runner.launch(argv(args, pre_out), ranks, component, preload=True, timeout=timeout)
    assert pre.returncode == 0, f"the program fails with the preload:\n{pre.why()}"
    differs = compare_files(plain_out, pre_out, hdf5=hdf5)
    assert differs is None, f"the preload changed the output: {differs}\n{pre.why()}"
    assert pre.report is not None, f"no report at STRATA_PRELOAD_REPORT:\n{pre.why()}"
    assert engine_calls(pre.report) > 0, f"the engine never ran (everything passed through): {pre.report}"
    return pre.report


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("case", list(CASES))
def test_a_program_writes_the_same_file_through_the_engine(case: str, component: str, tmp_path: Path) -> None:
    args, hdf5 = CASES[case]
    prove(args, component, tmp_path, hdf5=hdf5)


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_random_file_views_write_the_same_file(seed: int, component: str, tmp_path: Path) -> None:
    prove(fuzzer_args(seed, component), component, tmp_path)


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("seed", MORE_SEEDS)
def test_resizes_and_a_second_handle_write_the_same_file(seed: int, component: str, tmp_path: Path) -> None:
    prove([*fuzzer_args(seed, component), "--more"], component, tmp_path, ranks=3)


@pytest.mark.parametrize("component", COMPONENTS)
def test_each_synced_record_reuses_the_plan_moved(component: str, tmp_path: Path) -> None:
    """A PnetCDF program that syncs every record: each record is an engine phase of its own, the
    same layout one record further on; after the first records' fresh plans the engine moves the
    plan it has (plan_shift) instead of planning again, and the file is still the same."""
    records = 6
    report = prove(["pnc_records", "{out}", str(records), "--sync"], component, tmp_path)
    # Record 0 also holds the fixed-size variable (its own layout), record 1 is the first of the
    # records' layout: the other records reuse its plan.
    assert report["engine_phases"] >= records, report
    assert report["plans_reused"] >= records - 2, report


def test_a_view_of_fortran_90_types_is_gathered(tmp_path: Path) -> None:
    """Odd ranks tile their view with a Fortran 90 integer type (predefined: the layer decodes it
    and must never free it, which crashed before). OMPIO only: ROMIO 3.2.1 itself frees the type
    when it flattens the view (MPI_ERR_TYPE in MPI_Type_free without the layer)."""
    report = prove(["ineligible", "f90", "{out}"], "ompio", tmp_path)
    assert not passthrough_reasons(report), report


# mode -> what its reason must mention
INELIGIBLE = {
    "atomic": r"atomic",
    "shared": r"shared|ordered|sequential",
    "external32": r"external32|datarep|representation",
    "nonblocking": r"nonblocking|non-blocking|iwrite|request",
}


@pytest.mark.parametrize("component", COMPONENTS)
def test_ineligible_calls_pass_through_with_their_reason(component: str, tmp_path: Path) -> None:
    # Open MPI 4.1's romio321 crashes (SIGSEGV) in MPI_File_iwrite_all even without the preload.
    modes = [m for m in INELIGIBLE if not (component == "romio" and m == "nonblocking")]
    report = prove(["ineligible", ",".join(modes), "{out}"], component, tmp_path)
    reasons = passthrough_reasons(report)
    assert int(report.get("passthrough_calls", 0)) > 0, f"nothing passed through: {report}"
    for mode in modes:
        assert any(
            re.search(INELIGIBLE[mode], r, re.I) for r in reasons
        ), f"no passed-through call counted for {mode} (reasons {reasons}; report {report})"


def ior_binary() -> Path:
    found = built_peers(ROOT / "build-peers", "ior-*/ior/src/ior")
    if not found:
        pytest.skip("IOR is not built (make peers builds it into build-peers/)")
    return found[-1]


@pytest.mark.parametrize("component", COMPONENTS)
def test_ior_mpiio_collective_writes_the_same_file(component: str, tmp_path: Path) -> None:
    ior = ior_binary()
    # -G: a fixed time-stamp signature (IOR's data otherwise holds the start time); -k keeps the file
    args = [
        str(ior),
        "-a",
        "MPIIO",
        "-c",
        "-b",
        "64k",
        "-t",
        "4k",
        "-s",
        "2",
        "-w",
        "-k",
        "-G",
        "271828",
        "-o",
        "{out}",
    ]
    runner = Runner(ROOT)
    outs = {}
    require_layer()
    for preload in (False, True):
        out = tmp_path / f"ior.{len(outs)}"
        run = runner.launch([str(out) if a == "{out}" else a for a in args], RANKS, component, preload=preload)
        assert run.returncode == 0, run.why()
        outs[len(outs)] = (out, run)
    differs = compare_files(outs[0][0], outs[1][0])
    assert differs is None, differs
    assert engine_calls(outs[1][1].report) > 0, outs[1][1].report


def test_strata_exec_runs_a_program_through_the_layer(tmp_path: Path) -> None:
    """The launcher, `strata exec -- PROGRAM`, instead of LD_PRELOAD."""
    require_layer()
    runner = Runner(ROOT)
    plain = runner.launch(argv(["mpiio_mpifh", "{out}", "3"], tmp_path / "a"), RANKS, "ompio", preload=False)
    assert plain.returncode == 0, plain.why()
    run = runner.launch(
        argv(["mpiio_mpifh", "{out}", "3"], tmp_path / "b"), RANKS, "ompio", preload=True, via_exec=True
    )
    assert run.returncode == 0, run.why()
    assert compare_files(tmp_path / "a", tmp_path / "b") is None
    assert engine_calls(run.report) > 0, run.report


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_full_disk_is_an_mpi_error_on_every_rank(component: str, tmp_path: Path) -> None:
    """3 ranks write 4 MiB each into a 2 MiB tmpfs. Without the layer OMPIO can hang here
    (../shared/MPI-IO-NOTES.md), so only the preloaded run is required to end with the error."""
    exe = program("fill_disk")
    require_layer()
    mount = tmp_path / "full"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        run = Runner(ROOT).launch([str(exe), str(mount / "out"), "4"], 3, component, preload=True, timeout=90)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    assert not run.timed_out, f"the program hung on a full disk:\n{run.why()}"
    errors = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"rank (\d+): errors (\d+)", run.stdout)}
    assert sorted(errors) == [0, 1, 2], f"not every rank reached the end:\n{run.why()}"
    assert all(n > 0 for n in errors.values()), f"a rank saw no MPI error: {errors}\n{run.why()}"
