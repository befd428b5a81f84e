"""What differs between the MPI libraries Strata runs under, in one place for the Python side (the
tests, the benches): each library's launcher flags, the environment it needs, how a run selects an
MPI-IO component, how a launch is given a time limit, which variable holds a process's rank and how
an MPI_Abort reads. The CMake side of the same facts is cmake/StrataMPI.cmake.

The launcher is $STRATA_MPIEXEC when set (`make test-mpich` sets it to mpiexec.mpich), else
`mpirun`; its `--version` says which library it is:

    >>> stack = mpi_stack()                     # Open MPI's mpirun here
    >>> stack.command(4, ["strata", "info"], io="romio")
    ['mpirun', '--mca', 'io', 'romio321', '-n', '4', '--oversubscribe', 'strata', 'info']
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field


class ComponentUnavailable(LookupError):
    """The launch asked for an MPI-IO component this MPI library does not have (OMPIO under MPICH)."""


@dataclass(frozen=True)
class MpiFlavour:
    name: str  # "openmpi", "mpich"
    library: str  # as MPI_Get_library_version names it (a run record's mpi.library)
    version_pattern: str  # matches the launcher's --version output
    oversubscribe: tuple[str, ...]  # flags that allow more ranks than cores
    env: Mapping[str, str]  # the environment every launch needs (Open MPI: run as root)
    io_components: Mapping[str, tuple[str, ...]]  # MPI-IO component -> flags selecting it; first is the default
    export_flag: str | None  # flag that passes one variable to the ranks (None: all are passed)
    timeout_flag: str | None  # flag giving the launch a time limit in seconds
    timeout_variable: str | None  # else the variable that does
    rank_variable: str  # a launched process's rank
    abort_text: str  # what the launcher prints after an MPI_Abort
    # The variable that gives a launch a session folder of its own (None: the library needs none).
    # Open MPI 4.1 keeps every job's session files under one shared $TMPDIR/ompi.<host>.<uid>; when two
    # jobs start at once, one's cleanup can remove that folder while the other creates its own inside
    # it, and the second dies in orte_init ("orte_session_dir failed", open-mpi/ompi#8510).
    session_variable: str | None = None


FLAVOURS: tuple[MpiFlavour, ...] = (
    MpiFlavour(
        name="openmpi",
        library="Open MPI",
        version_pattern=r"Open MPI|OpenRTE",
        oversubscribe=("--oversubscribe",),
        env={"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
        io_components={"ompio": (), "romio": ("--mca", "io", "romio321")},
        export_flag="-x",
        timeout_flag="--timeout",
        timeout_variable=None,
        rank_variable="OMPI_COMM_WORLD_RANK",
        abort_text="MPI_ABORT was invoked",
        session_variable="OMPI_MCA_orte_tmpdir_base",
    ),
    MpiFlavour(
        # Hydra runs any number of ranks on one host and passes the whole environment on.
        name="mpich",
        library="MPICH",
        version_pattern=r"HYDRA|MPICH",
        oversubscribe=(),
        env={},
        io_components={"romio": ()},  # ROMIO is MPICH's only MPI-IO
        export_flag=None,
        timeout_flag=None,
        timeout_variable="MPIEXEC_TIMEOUT",
        rank_variable="PMI_RANK",
        abort_text="application called MPI_Abort",
    ),
)


@dataclass(frozen=True)
class MpiStack:
    launcher: str
    flavour: MpiFlavour
    version: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return self.flavour.name

    @property
    def default_io(self) -> str:
        return next(iter(self.flavour.io_components))

    def has_io(self, component: str) -> bool:
        return component in self.flavour.io_components

    def io_flags(self, component: str | None) -> list[str]:
        """Launcher flags selecting MPI-IO component `component` (None: the library's default)."""
        if component is None:
            return []
        if component not in self.flavour.io_components:
            raise ComponentUnavailable(
                f"{self.flavour.library} has no MPI-IO component {component!r} "
                f"(it has {', '.join(self.flavour.io_components)})"
            )
        return list(self.flavour.io_components[component])

    def environment(
        self,
        base: Mapping[str, str] | None = None,
        extra: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env.update(self.flavour.env)
        env.update(extra or {})
        if timeout is not None and self.flavour.timeout_variable:
            env[self.flavour.timeout_variable] = str(int(timeout))
        return env

    @contextlib.contextmanager
    def own_session(self, env: Mapping[str, str]) -> Iterator[dict[str, str]]:
        """`env` with a session folder of the launch's own (removed after it), for launches that run
        side by side (see MpiFlavour.session_variable). Short, under /tmp: it holds sockets, whose
        paths are limited to 107 bytes."""
        if self.flavour.session_variable is None:
            yield dict(env)
            return
        base = tempfile.mkdtemp(prefix="strata-ompi.", dir="/tmp")
        try:
            yield dict(env, **{self.flavour.session_variable: base})
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def command(
        self,
        np: int,
        program: Sequence[str],
        io: str | None = None,
        exports: Sequence[str] = (),
        timeout: float | None = None,
    ) -> list[str]:
        """The launch of `program` on `np` ranks (run it with environment()): `exports` are the
        variables the ranks must see, `timeout` the launcher's own limit (seconds)."""
        cmd = [self.launcher, *self.io_flags(io)]
        if self.flavour.export_flag:
            for key in exports:
                cmd += [self.flavour.export_flag, key]
        if timeout is not None and self.flavour.timeout_flag:
            cmd += [self.flavour.timeout_flag, str(int(timeout))]
        return [*cmd, "-n", str(np), *self.flavour.oversubscribe, *program]


def flavour_of(version_text: str) -> MpiFlavour | None:
    for f in FLAVOURS:
        if re.search(f.version_pattern, version_text):
            return f
    return None


@functools.cache
def mpi_stack(launcher: str | None = None) -> MpiStack:
    """The MPI behind `launcher` (default: $STRATA_MPIEXEC, else mpirun)."""
    launcher = launcher or os.environ.get("STRATA_MPIEXEC") or shutil.which("mpirun") or "mpirun"
    try:
        proc = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=30)
        text = proc.stdout + proc.stderr
    except OSError as e:
        raise RuntimeError(f"cannot run the MPI launcher {launcher!r}: {e}") from e
    flavour = flavour_of(text)
    if flavour is None:
        raise RuntimeError(f"{launcher} is neither Open MPI's nor MPICH's launcher:\n{text.strip()[:300]}")
    return MpiStack(launcher, flavour, text.strip().splitlines()[0] if text.strip() else "")
