"""Shared fixtures: where the strata binary is, what it offers (its catalogue: the lists of
kernels and backends tests iterate over), and how to run it under mpirun so that every rank's
own exit status is seen (not just the first non-zero one mpirun passes on)."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRATA = Path(os.environ.get("STRATA_BIN", ROOT / "build" / "bin" / "strata"))
MPIRUN = shutil.which("mpirun") or "mpirun"
# The harness package (python/strata), importable even when the venv lacks its editable install.
if str(ROOT / "python") not in sys.path:
    sys.path.insert(0, str(ROOT / "python"))

from strata.catalogue import StrataCatalogue  # noqa: E402  (after the path above)

BASE_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


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
    mca: list[str] | None = None,
    cwd: Path | None = None,
    program: Path = STRATA,
    allow_missing: bool = False,
) -> Outcome:
    """Runs `strata ARGS` (or `program ARGS`) on `np` ranks; each rank reports its own exit status
    (`allow_missing`: ranks the launcher killed report none, as after an MPI_Abort)."""
    full_env = dict(BASE_ENV)
    exports: list[str] = []
    for key, value in (env or {}).items():
        full_env[key] = value
        exports += ["-x", key]
    wrapper = (
        'status=0; "$0" "$@" || status=$?; ' 'echo "STRATA-RANK-EXIT ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} $status"'
    )
    cmd = [MPIRUN, *(mca or []), *exports, "-n", str(np), "--oversubscribe", "bash", "-c", wrapper, str(program), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=timeout, cwd=cwd)
    statuses = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"STRATA-RANK-EXIT (\d+) (\d+)", proc.stdout)}
    assert (
        allow_missing or len(statuses) == np
    ), f"expected {np} rank reports, got {statuses}\n{proc.stdout}\n{proc.stderr}"
    return Outcome(statuses, proc.stdout, proc.stderr, proc.returncode)


@pytest.fixture(scope="session", autouse=True)
def strata_is_built() -> None:
    assert STRATA.exists(), f"{STRATA} is missing: run `make build` first"
