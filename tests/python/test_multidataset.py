"""Multi-dataset I/O (issue 6): the engine's HDF5 container read by h5py and h5dump, MDIO and
IDIO writing the same bytes, PIO maps (hand-written, real E3SM ones, malformed ones),
`strata decomp`, and the collective-call report."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest
from app_values import values
from conftest import ROOT, STRATA, built_backends, requires_backend, run_ranks

F_SMALL = ["e3sm", "--case", "f", "--vars", "24", "--ncol", "96", "--lev", "6"]
G_SMALL = ["e3sm", "--case", "g", "--vars", "12", "--ncol", "64", "--lev", "10"]
N3D_SMALL = ["noncontig3d", "--datasets", "5", "--grid", "16x8x8", "--block", "4", "--type", "uint8"]
HAND_MAP = ROOT / "tests" / "data" / "pio_4ranks.dat"
E3SM_MAPS = ROOT / "tests" / "data" / "e3sm"  # the real F case maps (their README says whence)
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def write(tmp_path: Path, np_: int, kernel: list[str], backend: list[str], out: str, seed: int = 3) -> dict:
    result = run_ranks(
        np_,
        [
            "run",
            *kernel,
            *backend,
            "--verify",
            "--seed",
            str(seed),
            "--output",
            out,
            "--json",
            out + ".json",
            "--quiet",
        ],
        cwd=tmp_path,
    )
    assert result.status == 0, result.stderr
    record = json.loads((tmp_path / (out + ".json")).read_text())
    assert record["verified"] is True
    return record


def check_every_element(path: Path, seed: int) -> int:
    with h5py.File(path, "r") as f:
        names = list(f.keys())
        for name in names:
            ds = f[name]
            data = ds[...].reshape(-1)
            want = values(name, ds.dtype, data.size, seed)
            bad = np.nonzero(data != want)[0]
            assert bad.size == 0, f"{path.name}:{name}: {bad.size} elements differ, first at {bad[0]}"
    return len(names)


@requires_backend("hdf5")
@pytest.mark.parametrize(
    "kernel,datasets", [(F_SMALL, 24), (G_SMALL, 12), (N3D_SMALL, 5)], ids=["f", "g", "noncontig3d"]
)
def test_hdf5_container_opens_in_h5py_with_every_element_right(
    tmp_path: Path, kernel: list[str], datasets: int
) -> None:
    record = write(tmp_path, 3, kernel, ["--backend", "strata", "--container", "hdf5"], "c.h5")
    assert check_every_element(tmp_path / "c.h5", 3) == datasets
    assert record["repetitions"][0]["write"]["collective"]["calls"] == 1


@requires_backend("hdf5")
@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump is not installed")
def test_h5dump_lists_every_dataset(tmp_path: Path) -> None:
    write(tmp_path, 4, F_SMALL, ["--backend", "strata", "--container", "hdf5"], "c.h5")
    header = subprocess.run(["h5dump", "-H", str(tmp_path / "c.h5")], capture_output=True, text=True, check=True)
    listed = [line.split('"')[1] for line in header.stdout.splitlines() if line.strip().startswith("DATASET")]
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert sorted(listed) == sorted(f.keys())
    assert len(listed) == 24


@requires_backend("hdf5")
def test_mdio_writes_the_same_bytes_as_idio(tmp_path: Path) -> None:
    # HDF5 containers: the engine's (MDIO) and HDF5's own, one H5Dwrite per dataset (IDIO).
    write(tmp_path, 4, F_SMALL, ["--backend", "strata", "--container", "hdf5"], "mdio.h5")
    write(tmp_path, 4, F_SMALL, ["--backend", "hdf5"], "idio.h5")
    with h5py.File(tmp_path / "mdio.h5", "r") as m, h5py.File(tmp_path / "idio.h5", "r") as i:
        assert sorted(m.keys()) == sorted(i.keys())
        raw_m, raw_i = (tmp_path / "mdio.h5").read_bytes(), (tmp_path / "idio.h5").read_bytes()
        for name in m:
            a, b = m[name], i[name]
            n = a.id.get_storage_size()
            assert n == b.id.get_storage_size() == a.size * a.dtype.itemsize
            oa, ob = a.id.get_offset(), b.id.get_offset()
            assert raw_m[oa : oa + n] == raw_i[ob : ob + n], name
    # Raw files: the engine's one phase and one MPI_File_write_at_all per variable.
    write(tmp_path, 3, N3D_SMALL, ["--backend", "strata"], "mdio.dat")
    write(tmp_path, 3, N3D_SMALL, ["--backend", "mpiio-coll", "--per-variable"], "idio.dat")
    assert filecmp.cmp(tmp_path / "mdio.dat", tmp_path / "idio.dat", shallow=False)


@pytest.mark.parametrize(
    "np_,backend",
    [
        pytest.param(4, ["--backend", "strata", "--container", "hdf5"], marks=requires_backend("hdf5")),
        pytest.param(3, ["--backend", "hdf5", "--per-block"], marks=requires_backend("hdf5")),
        pytest.param(2, ["--backend", "pnetcdf"], marks=requires_backend("pnetcdf")),
    ],
)
def test_handwritten_pio_map_loads_and_verifies(tmp_path: Path, np_: int, backend: list[str]) -> None:
    kernel = ["e3sm", "--maps", str(HAND_MAP), "--map-vars", "2"]
    record = write(tmp_path, np_, kernel, backend, "m.out")
    assert record["params"]["maps"][0]["npes"] == 4 and record["params"]["maps"][0]["dims"] == [10, 3]
    if "--per-block" in backend:
        # 3 ranks: rank 0 takes map ranks 0 and 3 (6 + 3 blocks), the others 3 each; 2 variables.
        assert record["repetitions"][0]["write"]["collective"]["calls"] == 2 * 9
    if "hdf5" in backend:
        assert check_every_element(tmp_path / "m.out", 3) == 2
        with h5py.File(tmp_path / "m.out", "r") as f:
            assert all(f[n].shape == (1, 3, 10) for n in f)


def test_decomp_describes_the_handwritten_map(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(STRATA), "decomp", "describe", str(HAND_MAP), "--json", "d.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["blocks"] == 15
    assert d["blocks_per_rank"] == {"min": 3, "median": 3, "max": 6}
    assert d["coverage"] == {"held": 30, "missing": 0, "held_twice": 0, "padding": 3, "fraction": 1.0}
    assert "coverage: 30 of 30 elements held (100.0 %)" in out.stdout


def test_decomp_generate_writes_the_kernels_map(tmp_path: Path) -> None:
    gen = subprocess.run(
        [
            str(STRATA),
            "decomp",
            "generate",
            "--map",
            "d3",
            "--ncol",
            "50",
            "--lev",
            "4",
            "--npes",
            "3",
            "--output",
            "d3.dat",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert gen.returncode == 0, gen.stderr
    assert (tmp_path / "d3.dat").read_text().startswith("version 2001 npes 3 ndims 2 \n50 4 \n0 ")
    desc = subprocess.run(
        [str(STRATA), "decomp", "describe", "d3.dat", "--json", "d.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert desc.returncode == 0, desc.stderr
    d = json.loads((tmp_path / "d.json").read_text())
    assert d["coverage"]["held"] == 200 and d["coverage"]["held_twice"] == 0
    # The generated map runs through the kernel and verifies.
    write(tmp_path, 3, ["e3sm", "--maps", "d3.dat", "--map-vars", "3"], ["--backend", "strata"], "g.out")


# (id, map text, message); also run by the bad-input suite (test_bad_input_suite.py).
MALFORMED_MAPS = [
    ("bad-header", "version 2001 npes 4\n10 3\n", "line 1: bad header"),
    (
        "offset-beyond",
        "version 2001 npes 1 ndims 2\n10 3\n0 3\n1 2 31\n",
        "offset 31 of rank 0 is beyond the dimensions (30 elements)",
    ),
    (
        "count-mismatch",
        "version 2001 npes 2 ndims 1\n10\n0 3\n1 2\n1 1\n4\n",
        "count mismatch: rank 0 declares 3 offsets",
    ),
]


@pytest.mark.parametrize("text,message", [m[1:] for m in MALFORMED_MAPS], ids=[m[0] for m in MALFORMED_MAPS])
def test_malformed_maps_are_clear_errors_on_every_rank(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "bad.dat").write_text(text)
    out = run_ranks(2, ["run", "e3sm", "--maps", "bad.dat", "--backend", "strata"], cwd=tmp_path)
    assert out.status == 2
    assert message in out.stderr and 'PIO map "bad.dat"' in out.stderr, out.stderr


@requires_backend("hdf5")
def test_real_e3sm_f_case_maps_verify(tmp_path: Path) -> None:
    maps = [E3SM_MAPS / f"piodecomp16tasks16io0{d}dims_ioid_{i}.dat" for d, i in ((1, 514), (1, 516), (2, 548))]
    kernel = ["e3sm", "--maps", ",".join(map(str, maps)), "--map-vars", "1,3,2"]
    record = write(tmp_path, 4, kernel, ["--backend", "strata", "--container", "hdf5"], "f.h5")
    assert [m["dims"] for m in record["params"]["maps"]] == [[866], [866], [866, 72]]
    with h5py.File(tmp_path / "f.h5", "r") as f:
        assert len(f) == 6 and f["map005"].shape == (1, 72, 866)


@requires_backend("hdf5")
def test_collective_report_counts_calls_per_strategy(tmp_path: Path) -> None:
    calls = {}
    for label, backend in [
        ("idio", ["--backend", "hdf5"]),
        ("per-var", ["--backend", "mpiio-coll", "--per-variable"]),
        ("one", ["--backend", "mpiio-coll"]),
        ("mdio", ["--backend", "strata"]),
    ]:
        record = write(tmp_path, 3, F_SMALL, backend, label + ".out")
        c = record["repetitions"][0]["write"]["collective"]
        assert set(c["split_s"]) == {"io", "comm", "collective_overhead", "library"}
        # Equation 1's parts split the transfer: together no more than it took.
        xfer_s = record["repetitions"][0]["write"]["xfer_s"]
        assert sum(c["split_s"].values()) <= xfer_s + 1e-9, (label, c["split_s"], xfer_s)
        assert c["rounds"] >= 1
        calls[label] = c["calls"]
    assert calls == {"idio": 24, "per-var": 24, "one": 1, "mdio": 1}
    table = run_ranks(2, ["run", *F_SMALL, "--backend", "hdf5", "--output", "t.h5"], cwd=tmp_path).stdout
    assert "collective, last write: 24 call(s)" in table and "collective overhead" in table


def test_strategy_options_are_checked(tmp_path: Path) -> None:
    out = run_ranks(2, ["run", *F_SMALL, "--backend", "strata", "--per-block"], cwd=tmp_path)
    assert out.status == 2 and "--per-block applies to backend hdf5 only" in out.stderr
    if "hdf5-multi" not in built_backends():  # built where HDF5 >= 1.14 is (test_hdf5_multi.py)
        out = run_ranks(2, ["run", *F_SMALL, "--backend", "hdf5-multi"], cwd=tmp_path)
        assert out.status == 2 and "needs HDF5 >= 1.14" in out.stderr and "--container hdf5" in out.stderr
        assert "make build-hdf5-114" in out.stderr
    out = run_ranks(2, ["run", *F_SMALL, "--backend", "strata", "--container", "zarr"], cwd=tmp_path)
    assert out.status == 2 and 'unknown container "zarr"' in out.stderr
    out = run_ranks(
        2, ["run", *F_SMALL, "--backend", "strata", "--container", "hdf5", "--file-per-process"], cwd=tmp_path
    )
    assert out.status == 2 and "--container hdf5 is one shared file" in out.stderr


@pytest.mark.parametrize("kernel", ["e3sm", "noncontig3d"])
def test_kernel_help_lists_its_options(kernel: str) -> None:
    out = subprocess.run([str(STRATA), "run", kernel, "--help"], capture_output=True, text=True, env=ENV)
    assert out.returncode == 0, out.stderr
    assert f"{kernel} options" in out.stdout and "--container" in out.stdout and "--per-block" in out.stdout
