"""Shared fixtures: where the strata binary is, what it offers (its catalogue: the lists of
kernels and backends tests iterate over), and how to run it under mpirun so that every rank's
own exit status is seen (not just the first non-zero one mpirun passes on)."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRATA = Path(os.environ.get("STRATA_BIN", ROOT / "build" / "bin" / "strata"))
# The harness package (python/strata), importable even when the venv lacks its editable install.
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

from strata.catalogue import StrataCatalogue  # noqa: E402  (after the path above)
from strata.mpi_stack import ComponentUnavailable, mpi_stack  # noqa: E402

# The MPI the tests launch: $STRATA_MPIEXEC (make test-mpich: mpiexec.mpich), else mpirun.
# What differs between MPI libraries is strata/mpi_stack.py.
MPI = mpi_stack()
MPIRUN = MPI.launcher
# Tests do not learn from one another: no earlier job's write ratios seed a test's predictions
# (engine/write_history.hpp); the tests of that file name one of their own.
BASE_ENV = MPI.environment({"STRATA_WRITE_HISTORY": "off", **os.environ})


def requires_io(component: str) -> pytest.MarkDecorator:
    """Skips a test of MPI-IO component `component` where the MPI under test has none."""
    return pytest.mark.skipif(
        not MPI.has_io(component), reason=f"{MPI.flavour.library} has no MPI-IO component {component}"
    )


def launch(
    np: int,
    program: list[str],
    io: str | None = None,
    exports: list[str] | tuple[str, ...] = (),
    timeout: float | None = None,
) -> list[str]:
    """The launcher's command for `program` on `np` ranks (skips the test when `io` is a component
    the MPI under test lacks)."""
    try:
        return MPI.command(np, program, io=io, exports=exports, timeout=timeout)
    except ComponentUnavailable as e:
        pytest.skip(str(e))


@functools.cache
def catalogue() -> StrataCatalogue:
    """`strata info --catalogue --json` of the binary under test."""
    return StrataCatalogue.from_binary(STRATA)


def built_backends() -> list[str]:
    """The backends of this build, in the table's order (none when the binary is missing: the
    strata_is_built fixture then says why)."""
    return list(catalogue().backends) if STRATA.exists() else []


def requires_backend(name: str) -> pytest.MarkDecorator:
    """Skips a test of backend `name` (or of what only it reads and writes) when it is built out."""
    return pytest.mark.skipif(name not in built_backends(), reason=f"backend {name} is not built in")


@dataclass
class Outcome:
    statuses: dict[int, int]  # rank -> exit status
    stdout: str
    stderr: str
    launcher_status: int = 0  # mpirun's own

    @property
    def status(self) -> int:
        values = set(self.statuses.values())
        assert len(values) == 1, f"ranks disagree on the exit status: {self.statuses}\n{self.stderr}"
        return values.pop()


def run_ranks(
    np: int,
    args: list[str],
    env: dict[str, str] | None = None,
    timeout: float = 90,
    io: str | None = None,
    cwd: Path | None = None,
    program: Path = STRATA,
    allow_missing: bool = False,
    mpi_timeout: float | None = None,
) -> Outcome:
    """Runs `strata ARGS` (or `program ARGS`) on `np` ranks; each rank reports its own exit status
    (`allow_missing`: ranks the launcher killed report none, as after an MPI_Abort). `io` selects an
    MPI-IO component ("romio", "ompio"; the test is skipped where the MPI has none such),
    `mpi_timeout` the launcher's own time limit."""
    full_env = MPI.environment(BASE_ENV, env, timeout=mpi_timeout)
    wrapper = (
        'status=0; "$0" "$@" || status=$?; ' 'echo "STRATA-RANK-EXIT ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} $status"'
    )
    cmd = launch(np, ["bash", "-c", wrapper, str(program), *args], io=io, exports=list(env or {}), timeout=mpi_timeout)
    with MPI.own_session(full_env) as session_env:  # tests launch side by side
        proc = subprocess.run(cmd, capture_output=True, text=True, env=session_env, timeout=timeout, cwd=cwd)
    statuses = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"STRATA-RANK-EXIT (\d+) (\d+)", proc.stdout)}
    assert (
        allow_missing or len(statuses) == np
    ), f"expected {np} rank reports, got {statuses}\n{proc.stdout}\n{proc.stderr}"
    return Outcome(statuses, proc.stdout, proc.stderr, proc.returncode)


@pytest.fixture(scope="session", autouse=True)
def strata_is_built() -> None:
    assert STRATA.exists(), f"{STRATA} is missing: run `make build` first"
