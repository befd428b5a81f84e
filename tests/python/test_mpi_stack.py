"""What differs between MPI libraries lives in cmake/StrataMPI.cmake (the ctest launches) and
strata/mpi_stack.py (the Python tests and benches): both must say the same thing for each library,
and the launch commands must be the ones each launcher accepts. No MPICH is needed here: the
launch lines are checked from each launcher's --version text; `make test-mpich` runs them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import MPI, ROOT
from strata.mpi_stack import FLAVOURS, ComponentUnavailable, MpiStack, flavour_of

CMAKE = (ROOT / "cmake" / "StrataMPI.cmake").read_text()
OPEN_MPI_VERSION = "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n"
MPICH_VERSION = "HYDRA build details:\n    Version:                                 4.0.2\n"


def cmake_setting(flavour: str, key: str) -> list[str]:
    m = re.search(rf"^set\(_strata_{flavour}_{key} (.*)\)$", CMAKE, re.M)
    assert m, f"cmake/StrataMPI.cmake sets no _strata_{flavour}_{key}"
    value = m.group(1).strip().strip('"')
    return [w for w in re.split(r"[ ;]", value) if w]


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_cmake_and_python_agree(flavour) -> None:
    assert "set(_strata_flavours openmpi mpich)" in CMAKE
    assert cmake_setting(flavour.name, "preflags") == list(flavour.oversubscribe)
    romio = list(flavour.io_components["romio"])
    # CMake's ROMIO flags are empty where ROMIO is the default (the first component).
    assert cmake_setting(flavour.name, "romio_flags") == ([] if next(iter(flavour.io_components)) == "romio" else romio)
    env = [f"{k}={v}" for k, v in flavour.env.items()]
    assert cmake_setting(flavour.name, "env") == env
    pattern = re.search(rf'^set\(_strata_{flavour.name}_version_pattern "(.*)"\)$', CMAKE, re.M)
    assert pattern and pattern.group(1) == flavour.version_pattern


def test_each_launcher_is_recognised_by_its_version_text() -> None:
    assert flavour_of(OPEN_MPI_VERSION).name == "openmpi"
    assert flavour_of(MPICH_VERSION).name == "mpich"
    assert flavour_of("Intel(R) MPI Library for Linux") is None


def test_open_mpi_launch_line() -> None:
    stack = MpiStack("mpirun", flavour_of(OPEN_MPI_VERSION))
    cmd = stack.command(4, ["strata", "info"], io="romio", exports=["STRATA_X"], timeout=60)
    assert cmd == [
        "mpirun",
        "--mca",
        "io",
        "romio321",
        "-x",
        "STRATA_X",
        "--timeout",
        "60",
        "-n",
        "4",
        "--oversubscribe",
        "strata",
        "info",
    ]
    assert stack.command(1, ["a"], io="ompio") == ["mpirun", "-n", "1", "--oversubscribe", "a"]
    env = stack.environment({}, {"A": "1"}, timeout=60)
    assert env == {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "A": "1"}


def test_mpich_launch_line() -> None:
    """Hydra passes the whole environment, has no --oversubscribe (it runs any count on one
    host), takes its time limit from MPIEXEC_TIMEOUT, and ROMIO is its only MPI-IO."""
    stack = MpiStack("mpiexec.mpich", flavour_of(MPICH_VERSION))
    assert stack.command(4, ["strata", "info"], io="romio", exports=["STRATA_X"], timeout=60) == [
        "mpiexec.mpich",
        "-n",
        "4",
        "strata",
        "info",
    ]
    assert stack.environment({}, timeout=60) == {"MPIEXEC_TIMEOUT": "60"}
    assert stack.default_io == "romio" and not stack.has_io("ompio")
    with pytest.raises(ComponentUnavailable, match="MPICH has no MPI-IO component 'ompio'"):
        stack.command(2, ["a"], io="ompio")


def test_the_launcher_under_test_runs_a_job_on_more_ranks_than_cores() -> None:
    """The stack the tests use ($STRATA_MPIEXEC, else mpirun) launches with its own flags."""
    cmd = MPI.command(3, ["bash", "-c", f'echo "rank ${MPI.flavour.rank_variable}"'])
    out = subprocess.run(cmd, capture_output=True, text=True, env=MPI.environment(), timeout=60)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.split("\n")[:-1]) == ["rank 0", "rank 1", "rank 2"]


@pytest.mark.skipif(shutil.which("mpiexec.mpich") is None, reason="MPICH is not installed (setup.sh --with-mpich)")
def test_mpich_is_recognised_when_installed() -> None:
    from strata.mpi_stack import mpi_stack

    assert mpi_stack(shutil.which("mpiexec.mpich")).name == "mpich"
    assert Path(shutil.which("mpiexec.mpich")).exists()


def test_make_test_mpich_names_files_that_exist() -> None:
    """Every script and test list `make test-mpich` runs is in the tree (no MPICH needed to check)."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^test-mpich:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe, "the Makefile has no test-mpich target"
    named = set(re.findall(r"\btests/[\w/.-]+\.(?:py|sh|txt)\b", recipe.group(1) + makefile))
    assert "tests/mpi/cross_mpi_identical.py" in named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"the Makefile names files that do not exist: {missing}"
