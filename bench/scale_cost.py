#!/usr/bin/env python3
"""What a 1 000-node run of each paper study costs, on paper (docs/scaling.md).

Each study's grid at cluster scale — the cells, variants and per-rank sizes of its paper, with
the ranks per node the paper used — is multiplied out into runs, bytes written, files created and
node-hours, under stated assumptions about the machine (aggregate file-system bandwidth, file
creation rate, the fixed cost of one launch) that the options change:

  .venv/bin/python bench/scale_cost.py                       # the table of docs/scaling.md
  .venv/bin/python bench/scale_cost.py --write-gbs 200 --launches 3 --json cost.json

A run's time = launch overhead + bytes / write bandwidth + bytes / read bandwidth (the verified
read-back reads everything again) + files / creation rate. Node-hours = runs x time x nodes.
The data of a run is removed after it (keep_data = false), so the storage a study needs at once
is its largest run.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

KIB, MIB = 1024, 1024**2


@dataclass
class Config:
    """One cell x variant of a study: its bytes and files per run."""

    study: str
    what: str
    ranks: int
    bytes: float
    files: int


def mslio(nodes: int) -> list[Config]:
    # Table I of the MSLIO paper: (ccross, sub-elements) -> total MB; 4^ccross files in the
    # file-per-problem modes. 2 processes per node, 18 threads each (PlaFRIM).
    table = {
        (3, 64): 1.7,
        (3, 128): 6.6,
        (4, 32): 1.8,
        (4, 64): 6.8,
        (4, 128): 26.6,
        (4, 1024): 1668.9,
        (5, 32): 7.1,
        (5, 64): 27.2,
        (5, 128): 106.4,
        (5, 512): 1673.8,
        (6, 32): 28.5,
        (6, 64): 108.9,
        (6, 128): 425.8,
        (6, 256): 1683.5,
        (7, 32): 113.9,
        (7, 64): 435.7,
        (7, 128): 1703.2,
        (8, 32): 455.8,
        (8, 64): 1742.8,
        (8, 128): 6815.7,
        (9, 32): 1823.2,
    }
    out = []
    for (ccross, sub), mb in table.items():
        for mode in ("original", "buffered", "shared", "hdf5", "strata"):
            files = 4**ccross if mode in ("original", "buffered") else 1
            out.append(Config("MSLIO (Table I)", f"ccross {ccross} x {sub} {mode}", 2 * nodes, mb * 1e6, files))
    return out


def striping(nodes: int) -> list[Config]:
    # mpiiotester / PACE3D on Hazel Hen: 24 ranks per node, 20 frames, block sizes 64 KB to 32 MB,
    # stripe counts 1 and 8..54, stripe size = block / {1, 2, 4}, the three styles.
    ranks = 24 * nodes
    out = []
    for block in (64 * KIB, 512 * KIB, 4 * MIB, 32 * MIB):
        for stripes in (1, 8, 16, 24, 32, 40, 48, 54):
            for ratio in (1, 2, 4):
                for style, files in (("sf", 1), ("mf", 20), ("mf-wo", 20)):
                    out.append(
                        Config(
                            "Lustre striping",
                            f"block {block // KIB}K stripes {stripes} SS=BS/{ratio} " f"{style}",
                            ranks,
                            ranks * block * 20.0,
                            files,
                        )
                    )
    return out


def tapioca(nodes: int) -> list[Config]:
    # 16 ranks per node (Mira, Theta). 1D-Array 100 KB a rank (uniform, random ~50 KB mean, normal);
    # HACC-IO 25 000 to 100 000 particles of 38 B (AoS, SoA); S3D-IO; IOR 200 KB to 4 MB a rank.
    # Each against the MPI-IO collective; the 1D-Array also on the three tiers (DRAM, HBM, SSD).
    ranks = 16 * nodes
    out = []
    for dist, per in (("uniform", 100e3), ("random", 50e3), ("normal", 100e3)):
        for variant in ("mpiio-coll", "strata dram", "strata hbm", "strata ssd"):
            out.append(Config("TAPIOCA", f"array1d {dist} {variant}", ranks, ranks * per, 1))
    for particles in (25_000, 50_000, 100_000):
        for layout in ("aos", "soa"):
            for variant in ("mpiio-coll", "strata"):
                out.append(
                    Config("TAPIOCA", f"hacc {particles} {layout} {variant}", ranks, ranks * particles * 38.0, 1)
                )
    for variant in ("mpiio-coll", "strata"):  # S3D: 50^3 points a rank, 4 float64 fields x 2 checkpoints
        out.append(Config("TAPIOCA", f"s3d {variant}", ranks, ranks * 50**3 * 8 * 4 * 2.0, 2))
    for per in (200e3, 1e6, 4e6):
        for variant in ("mpiio-coll", "strata"):
            out.append(Config("TAPIOCA", f"ior {per / 1e3:.0f} KB {variant}", ranks, ranks * per, 1))
    return out


def multidataset(nodes: int) -> list[Config]:
    # E3SM-IO F (21 632 ranks, 402 variables, ~15 GB) and G (9 600 ranks, 41 variables, ~85 GB)
    # on their production maps: their rank counts are fixed by the maps, whatever the node count.
    # noncontig3d scales with the ranks: 16 a node, 8^3 blocks of 8 B, 64 a rank in 8 datasets.
    variants = ("per-dataset", "multi-dataset", "pnetcdf", "strata raw", "strata hdf5")
    out = []
    for case, ranks, size in (("e3sm F", 21_632, 15e9), ("e3sm G", 9_600, 85e9)):
        for v in variants:
            out.append(Config("multi-dataset HDF5", f"{case} {v}", ranks, size, 1))
    for v in variants:
        out.append(Config("multi-dataset HDF5", f"noncontig3d {v}", 16 * nodes, 16 * nodes * 64 * 512 * 8.0, 1))
    return out


STUDIES = {
    "MSLIO (Table I)": mslio,
    "Lustre striping": striping,
    "TAPIOCA": tapioca,
    "multi-dataset HDF5": multidataset,
}


def cost(configs: list[Config], args: argparse.Namespace) -> dict:
    def run_s(c: Config) -> float:
        return (
            args.launch_s
            + c.bytes / (args.write_gbs * 1e9)
            + c.bytes / (args.read_gbs * 1e9)
            + c.files / args.creates_per_s
        )

    runs = len(configs) * args.launches
    seconds = sum(run_s(c) for c in configs) * args.launches
    return {
        "configurations": len(configs),
        "runs": runs,
        "bytes_written": sum(c.bytes for c in configs) * args.launches,
        "files_created": sum(c.files for c in configs) * args.launches,
        "largest_run_bytes": max(c.bytes for c in configs),
        "ranks": sorted({c.ranks for c in configs}),
        "hours": seconds / 3600,
        "node_hours": seconds / 3600 * args.nodes,
        "overhead_share": runs * args.launch_s / seconds,
    }


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1000:
            return f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} EB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--launches", type=int, default=6, help="launches per configuration (6: a 95 %% interval)")
    ap.add_argument("--write-gbs", type=float, default=50.0, help="aggregate write bandwidth, GB/s (default 50)")
    ap.add_argument("--read-gbs", type=float, default=50.0, help="aggregate read bandwidth, GB/s (default 50)")
    ap.add_argument("--creates-per-s", type=float, default=20_000.0, help="file creations a second (default 20000)")
    ap.add_argument(
        "--launch-s",
        type=float,
        default=60.0,
        help="fixed seconds a launch: srun, MPI_Init and wire-up, teardown, wait_s (default 60)",
    )
    ap.add_argument("--json", help="also write the table as JSON to this file")
    args = ap.parse_args()

    rows = {name: cost(make(args.nodes), args) for name, make in STUDIES.items()}
    print(
        f"{args.nodes} nodes, {args.launches} launches a configuration; file system {args.write_gbs:g} GB/s write, "
        f"{args.read_gbs:g} GB/s read, {args.creates_per_s:g} creates/s; {args.launch_s:g} s a launch"
    )
    print(
        f"{'study':20s} {'configs':>7s} {'runs':>6s} {'ranks':>14s} {'written':>10s} {'files':>11s} "
        f"{'largest run':>11s} {'hours':>7s} {'node-hours':>10s} {'fixed':>6s}"
    )
    for name, r in rows.items():
        ranks = "-".join(str(x) for x in (r["ranks"][0], r["ranks"][-1])) if len(r["ranks"]) > 1 else str(r["ranks"][0])
        print(
            f"{name:20s} {r['configurations']:7d} {r['runs']:6d} {ranks:>14s} {human(r['bytes_written']):>10s} "
            f"{r['files_created']:11,d} {human(r['largest_run_bytes']):>11s} {r['hours']:7.1f} "
            f"{r['node_hours']:10,.0f} {r['overhead_share']:6.0%}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "assumptions": {k: v for k, v in vars(args).items() if k != "json"},
                    "studies": rows,
                    "configurations": {n: [asdict(c) for c in make(args.nodes)] for n, make in STUDIES.items()},
                },
                f,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
