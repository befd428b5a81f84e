"""E3SM-IO's own decomposition files (FILE.nc from its utils/dat2nc) given to `--maps` write the same
bytes as the PIO .dat maps they were made from: the real F case (map_f_case_16p.nc from the E3SM-IO
archive against the three .dat maps), and random maps turned into .nc here the way dat2nc does."""

from __future__ import annotations

import filecmp
import random
import tarfile
from pathlib import Path

import numpy as np
import pytest
from conftest import run_ranks
from scipy.io import netcdf_file

E3SM_MAPS = Path("/work/shared/e3sm-maps")
E3SM_IO = Path("/work/shared/peers/e3sm-io-edb414b.tar.gz")
F_MAPS = [f"piodecomp16tasks16io0{d}dims_ioid_{i}.dat" for d, i in ((1, 514), (1, 516), (2, 548))]


def write(tmp_path: Path, maps: str, out: str, ranks: int = 3, backend: str = "posix") -> Path:
    result = run_ranks(
        ranks,
        ["run", "e3sm", "--maps", maps, "--backend", backend, "--output", out, "--verify", "--quiet"],
        cwd=tmp_path,
    )
    assert result.status == 0, result.stderr
    return tmp_path / out


@pytest.mark.skipif(not (E3SM_MAPS.is_dir() and E3SM_IO.is_file()), reason="E3SM-IO's maps are not on this machine")
def test_the_f_case_nc_writes_what_its_three_dat_maps_write(tmp_path: Path) -> None:
    with tarfile.open(E3SM_IO) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("datasets/map_f_case_16p.nc"))
        (tmp_path / "map_f_case_16p.nc").write_bytes(archive.extractfile(member).read())
    dat = write(tmp_path, ",".join(str(E3SM_MAPS / m) for m in F_MAPS), "from-dat")
    nc = write(tmp_path, "map_f_case_16p.nc", "from-nc")
    assert dat.stat().st_size == (866 + 866 + 866 * 72) * 4
    assert filecmp.cmp(dat, nc, shallow=False)


def dat_text(npes: int, dims: list[int], offsets: list[list[int]]) -> str:
    lines = [f"version 2001 npes {npes} ndims {len(dims)} ", " ".join(map(str, dims)) + " "]
    for r, offs in enumerate(offsets):
        lines += [f"{r} {len(offs)}", " ".join(map(str, offs))]
    return "\n".join(lines) + "\n"


def dat2nc(path: Path, maps: list[tuple[int, list[int], list[list[int]]]], fill: bool) -> None:
    """What E3SM-IO's dat2nc writes for these maps: 0-based runs merged within a row, padding
    dropped, and with `fill` (its -f) requests after fill_starts that cover the array's gaps."""
    nc = netcdf_file(path, "w", version=2)
    nc.createDimension("num_decomp", len(maps))
    nc.createDimension("decomp_nprocs", maps[0][0])
    for i, (_, dims, offsets) in enumerate(maps, start=1):
        total = int(np.prod(dims))
        row = dims[0]  # PIO's fastest dimension
        offs, lens, nreqs = [], [], []
        covered = np.zeros(total, dtype=bool)
        for rank_offsets in offsets:
            runs: list[list[int]] = []
            for o in (o - 1 for o in rank_offsets if o > 0):
                covered[o] = True
                if runs and runs[-1][0] + runs[-1][1] == o and o % row != 0:
                    runs[-1][1] += 1
                else:
                    runs.append([o, 1])
            nreqs.append(len(runs))
            offs.append([r[0] for r in runs])
            lens.append([r[1] for r in runs])
        fill_starts = list(nreqs)
        if fill:  # every gap to the last process, as extra requests
            gaps = [j for j in range(total) if not covered[j]]
            offs[-1] += gaps
            lens[-1] += [1] * len(gaps)
            nreqs[-1] += len(gaps)
        flat_offs, flat_lens = sum(offs, []), sum(lens, [])
        d = f"D{i}."
        nc.createDimension(d + "total_nreqs", len(flat_offs))
        for name, dim, values in (
            (d + "nreqs", "decomp_nprocs", nreqs),
            (d + "fill_starts", "decomp_nprocs", fill_starts),
            (d + "offsets", d + "total_nreqs", flat_offs),
            (d + "lengths", d + "total_nreqs", flat_lens),
        ):
            var = nc.createVariable(name, "i4", (dim,))
            var[:] = np.array(values, dtype=np.int32)
        setattr(nc, d + "ndims", np.int32(len(dims)))
        setattr(nc, d + "dims", np.array(dims[::-1], dtype=np.int32))  # C order
    nc.close()


def random_map(rng: random.Random, npes: int, dims: list[int]) -> list[list[int]]:
    """Each element to a random process (some to none: holes), in a shuffled order, with padding."""
    owned: list[list[int]] = [[] for _ in range(npes)]
    for element in range(1, int(np.prod(dims)) + 1):
        if rng.random() < 0.9:
            owned[rng.randrange(npes)].append(element)
    for offs in owned:
        rng.shuffle(offs)
        for _ in range(rng.randrange(3)):
            offs.insert(rng.randrange(len(offs) + 1), 0)
    return owned


@pytest.mark.parametrize("seed", [1, 2])
def test_random_maps_as_nc_write_what_their_dat_maps_write(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    maps = [(5, [37], random_map(rng, 5, [37])), (5, [13, 4], random_map(rng, 5, [13, 4]))]
    for k, (npes, dims, offsets) in enumerate(maps):
        (tmp_path / f"m{k}.dat").write_text(dat_text(npes, dims, offsets))
    dat2nc(tmp_path / "maps.nc", maps, fill=seed == 2)
    dat = write(tmp_path, "m0.dat,m1.dat", "from-dat", ranks=2)
    nc = write(tmp_path, "maps.nc", "from-nc", ranks=2)
    assert filecmp.cmp(dat, nc, shallow=False)


def test_a_nc_that_is_no_map_is_a_clear_error(tmp_path: Path) -> None:
    nc = netcdf_file(tmp_path / "other.nc", "w")
    nc.createDimension("x", 3)
    nc.close()
    out = run_ranks(2, ["run", "e3sm", "--maps", "other.nc", "--backend", "posix"], cwd=tmp_path)
    assert out.status == 2 and 'E3SM-IO map "other.nc"' in out.stderr and "num_decomp" in out.stderr, out.stderr
