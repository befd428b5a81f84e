"""The drop-in layer's proof on the real peers (issue 29), the long part (`make test-preload`, which
builds them first with `make peers`): E3SM-IO's PnetCDF and HDF5 paths on its own F-case map
(16 ranks), IOR -a MPIIO with and without -c over several -b/-t/-s, and the view fuzzer over many
seeds and rank counts, each with and without libstrata_preload.so, under OMPIO and ROMIO: the same
file both ways (cmp; h5diff for HDF5) and engine_calls > 0 in the layer's report. Skips, saying
why, where the peers are not built. The quick part is tests/python/test_preload.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
from strata.preload_runs import (  # noqa: E402  (after the path above)
    Runner,
    built_peers,
    compare_files,
    engine_calls,
    library_in_tree,
    library_path,
)

pytestmark = pytest.mark.timeout(1800)
PEERS = ROOT / "build-peers"
PROGRAMS = ROOT / "build" / "tests" / "preload" / "programs"
COMPONENTS = ("ompio", "romio")


def peer(pattern: str, what: str) -> Path:
    found = built_peers(PEERS, pattern)
    if not found:
        pytest.skip(f"{what} is not built in {PEERS} (make peers)")
    return found[-1]


def layer() -> bool:
    if library_path(ROOT).exists():
        return True
    if library_in_tree(ROOT):
        pytest.fail(f"{library_path(ROOT)} is missing: src/preload is in this tree, build it (make build)")
    return False


def both_ways(
    argv_for, ranks: int, component: str, tmp: Path, outputs: list[str] | None, hdf5: bool = False, timeout: float = 900
) -> None:
    """Runs argv_for(folder) plainly and through the layer (or plainly twice without it), compares
    every output named in `outputs` (None: every file the plain run made) and asserts the engine
    ran."""
    runner = Runner(ROOT)
    have = layer()
    runs = {}
    for way, pre in (("plain", False), ("preload" if have else "again", have)):
        folder = tmp / way
        folder.mkdir()
        run = runner.launch(argv_for(folder), ranks, component, preload=pre, timeout=timeout)
        assert run.returncode == 0, f"{way} run failed:\n{run.why()}"
        runs[way] = (folder, run)
    second = "preload" if have else "again"
    if outputs is None:
        outputs = sorted(p.name for p in runs["plain"][0].iterdir())
        assert outputs, "the program wrote no file"
    for name in outputs:
        differs = compare_files(runs["plain"][0] / name, runs[second][0] / name, hdf5=hdf5)
        assert differs is None, f"{name}: {differs}"
    if not have:
        pytest.skip(f"plain runs deterministic; {library_path(ROOT).name} is not part of this tree yet")
    report = runs["preload"][1].report
    assert engine_calls(report) > 0, f"the engine never ran: {report}"


E3SM_PATHS = {  # id -> E3SM-IO's arguments, its output's name, HDF5?
    "pnetcdf": (["-a", "pnetcdf", "-x", "canonical"], "e3sm.nc", False),
    "hdf5": (["-a", "hdf5", "-x", "canonical"], "e3sm.h5", True),
}


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("path", list(E3SM_PATHS))
def test_e3sm_io_writes_the_same_files(path: str, component: str, tmp_path: Path) -> None:
    root = peer("e3sm-io-*/e3sm-io", "E3SM-IO")
    api, name, hdf5 = E3SM_PATHS[path]
    exe, map_nc = root / "src" / "e3sm_io", root / "datasets" / "map_f_case_16p.nc"

    def argv(folder: Path) -> list[str]:
        return [str(exe), str(map_nc), *api, "-k", "-o", str(folder / name)]

    # E3SM-IO names its files after -o (one per history file, h0 and h1) and deletes them at exit
    # unless -k: every file the plain run made
    both_ways(argv, 16, component, tmp_path, outputs=None, hdf5=hdf5)


IOR_PATTERNS = [
    (4, "64k", "4k", 3),
    (4, "1m", "256k", 2),
    (8, "256k", "4k", 5),
    (4, "4m", "1m", 2),
    (3, "100k", "20k", 2),
]


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("collective", (True, False), ids=("c", "independent"))
@pytest.mark.parametrize("pattern", IOR_PATTERNS, ids=lambda p: f"np{p[0]}-b{p[1]}-t{p[2]}-s{p[3]}")
def test_ior_mpiio_writes_the_same_file(pattern: tuple, collective: bool, component: str, tmp_path: Path) -> None:
    ior = peer("ior-*/ior/src/ior", "IOR")
    ranks, b, t, s = pattern

    def argv(folder: Path) -> list[str]:
        return [
            str(ior),
            "-a",
            "MPIIO",
            *(["-c"] if collective else []),
            "-b",
            b,
            "-t",
            t,
            "-s",
            str(s),
            "-w",
            "-k",
            "-G",
            "271828",
            "-o",
            str(folder / "ior.dat"),
        ]

    if not collective and layer():
        # independent writes only: the layer passes them through; the file must still be the same
        runner = Runner(ROOT)
        for way, pre in (("plain", False), ("preload", True)):
            (tmp_path / way).mkdir()
            run = runner.launch(argv(tmp_path / way), ranks, component, preload=pre)
            assert run.returncode == 0, run.why()
        assert compare_files(tmp_path / "plain" / "ior.dat", tmp_path / "preload" / "ior.dat") is None
        return
    both_ways(argv, ranks, component, tmp_path, outputs=["ior.dat"])


# Seeds the plain MPI-IO itself gets wrong are skipped with the reason (view_fuzzer checks the file
# against what its writes put there, worked out apart from MPI-IO).
FUZZ_SEEDS = list(range(2, 22))


@pytest.mark.parametrize("more", (False, True), ids=("views", "more"))
@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("ranks", (3, 5))
@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_random_file_views(seed: int, ranks: int, component: str, more: bool, tmp_path: Path) -> None:
    """`more`: also a second handle on the file, set_size cutting it mid-run and preallocate."""
    exe = PROGRAMS / "view_fuzzer"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    extra = (["--settle"] if component == "ompio" else []) + (["--more"] if more else [])
    runner = Runner(ROOT)
    plain = runner.launch(
        [str(exe), str(seed), str(tmp_path / "plain"), "--scale", "3", *extra], ranks, component, preload=False
    )
    if plain.returncode != 0:
        pytest.skip(
            f"MPI-IO ({component}) gets seed {seed} at {ranks} ranks wrong without the preload: "
            f"{plain.why()[-300:]}"
        )
    if not layer():
        pytest.skip(f"{library_path(ROOT).name} is not part of this tree yet")
    pre = runner.launch(
        [str(exe), str(seed), str(tmp_path / "preload"), "--scale", "3", *extra], ranks, component, preload=True
    )
    assert pre.returncode == 0, f"seed {seed}: {pre.why()}"
    differs = compare_files(tmp_path / "plain", tmp_path / "preload")
    assert differs is None, f"seed {seed}, {ranks} ranks, {component}: {differs}"
    assert engine_calls(pre.report) > 0, pre.report
