#!/usr/bin/env python3
"""Issue 20: Strata's backends against the real programs users run today, IOR and E3SM-IO, built
from their public sources in ../shared/peers (never copied into Strata).

Build: each archive (ior-*.tar.gz, e3sm-io-*.tar.gz) is unpacked and built into build-peers/
(ignored by git) with the steps of ../shared/peers/README.md, once: a stamp named after the
archive skips the build next time (delete build-peers/ to rebuild). The tools they need (libtool,
autoconf, automake) come from scripts/setup.sh.

Workloads, each an interleaved set of launches (every round runs every variant once, in an order
shuffled with a recorded seed, each launch after a sync()):
  IOR patterns  -b 1m -t 64k -s 4 (4 ranks); -b 4m -t 1m -s 2 (4 ranks, a shared file, and -F a file
                per process); -b 256k -t 4k -s 5 (8 ranks). IOR -a POSIX, -a MPIIO, -a MPIIO -c,
                -a HDF5 -c, -a NCMPI -c against `strata run ior` with posix, mpiio-ind, mpiio-coll,
                hdf5, pnetcdf (for -F: the backends that write a file per process), and the engine
                (backend strata) against the fastest peer variant. -w -i R in IOR, --repetitions R
                in Strata (R = 5; 2 with --quick).
  E3SM F case   E3SM-IO's own map (datasets/map_f_case_16p.nc, 16 ranks, h0 file only: -f 0) with
                -a pnetcdf -x canonical -j, -a hdf5 -x canonical -j (float, as Strata writes) and
                -a hdf5 -x canonical (double: HDF5 1.10 falls back to independent I/O when it
                converts double to float, so this is its collective path, writing twice the bytes)
                against `strata run e3sm` on the same decomposition (the archive's PIO .dat maps,
                --map-vars 1,323,63) through every backend and the engine; one write per launch.
                Where HDF5 1.14 is built (make build-hdf5-114: --hdf5-114, --strata-hdf5-114),
                also E3SM-IO's multi-dataset path, -a hdf5_md (H5Dwrite_multi; E3SM-IO built a
                second time, against that HDF5), beside Strata's hdf5-multi backend and the
                engine's HDF5 container (--backend strata --container hdf5) and its raw file.

MPI-IO components: every variant that goes through MPI-IO (IOR's MPIIO, HDF5 and NCMPI paths,
E3SM-IO's three, Strata's mpiio-ind, mpiio-coll, hdf5 and pnetcdf backends and the plain loops over
them) runs under OMPIO, Open MPI's default, and again under ROMIO (--mca io romio321; labels end in
[romio]); the fastest peer is the fastest of all of them (--components ompio|romio runs one).

Timing, both ways, medians over every write of every round. Every ratio compares the wall time
from the earliest open to the latest close on both sides:
  the peer      its own figure: IOR's bandwidth (-O summaryFormat=JSON: aggregate bytes over latest
                close - earliest open); E3SM-IO's "end-to-end time" max (from its barrier before the
                create to after its collective close; its "open-to-close" bandwidth).
  Strata        its JSON's time_s: the slowest rank's open to close after a barrier. Every step of a
                Strata write ends in an agreement (MPI_Allreduce), so the ranks end together and the
                slowest rank's time is the span (Strata's JSON has no per-rank start times).
  also shown    IOR's slowest rank alone (-O saveRankPerformanceDetailsCSV): IOR -a POSIX ranks never
                synchronise between open and close, and with more ranks than cores they run one after
                another, so a rank's own time understates the span; E3SM-IO's phase maxima added up.
Ratio = Strata / peer bandwidth (for E3SM: peer seconds / Strata seconds, the same work; bytes
differ, said in the table). Ratios below 0.9 are marked. fsync is not included anywhere; the MPI
settings Strata applies to itself (its mpi_workarounds, e.g. OMPIO data sieving off) and its
allocator's (freed memory kept: the record's allocator.glibc_tunables) are given to the peers too.
Beside each IOR pattern, bench/write_loop.c (a plain pwrite, MPI_File_write_at_all, collective
H5Dwrite or ncmpi_put_vara_all loop, timed as strata times a write) runs from one reused transfer
buffer (as IOR) and from distinct data (as Strata): the data's share of a gap. Verification:
round 1 of every IOR and Strata variant reads back and checks (IOR -W, strata --verify;
untimed); E3SM-IO has no check. Before each launch the script waits (up to
--quiet-wait seconds) for other programs' load to end, and the table says how busy the machine
was. Writes bench-output/peers.{txt,json}.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STRATA = ROOT / "build" / "bin" / "strata"
sys.path.insert(0, str(ROOT / "python"))
from strata.catalogue import StrataCatalogue  # noqa: E402  (the harness package, after the path above)

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
MIB = 1048576.0
SLOW = 0.9  # ratios below this are marked
E3SM_MAPS = (
    "piodecomp16tasks16io01dims_ioid_514.dat",
    "piodecomp16tasks16io01dims_ioid_516.dat",
    "piodecomp16tasks16io02dims_ioid_548.dat",
)
E3SM_MAP_VARS = "1,323,63"  # E3SM-IO's h0 file: 1 variable on D1, 323 on D2, 63 on D3


# ---------------------------------------------------------------------------------------------
# Building the peers


def hdf5_dir() -> Path:
    """Debian's parallel HDF5 (libhdf5-openmpi-dev)."""
    arch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()
    path = Path("/usr/lib") / (arch or "x86_64-linux-gnu") / "hdf5" / "openmpi"
    if not (path / "include" / "hdf5.h").exists():
        sys.exit(f"peers: no parallel HDF5 in {path} (install libhdf5-openmpi-dev: make setup)")
    return path


def peer_specs(jobs: int, hdf5_114: Path | None = None) -> dict[str, dict]:
    """The peers and their build steps; `hdf5_114`: the prefix of an HDF5 >= 1.14 (make
    build-hdf5-114), against which E3SM-IO is built a second time for its -a hdf5_md path."""
    h5 = hdf5_dir()
    specs = {
        "ior": {
            "glob": "ior-*.tar.gz",
            "top": "ior",
            "binary": "src/ior",
            "steps": [
                "./bootstrap",
                f"./configure --with-hdf5 --with-ncmpi CC=mpicc CPPFLAGS=-I{h5}/include LDFLAGS=-L{h5}/lib",
                f"make -j{jobs}",
            ],
        },
        "e3sm-io": {
            "glob": "e3sm-io-*.tar.gz",
            "top": "e3sm-io",
            "binary": "src/e3sm_io",
            # configure copies a Debian-only --version-script from libhdf5.settings into LDFLAGS:
            # make's LDFLAGS override drops it (../shared/peers/README.md).
            "steps": [
                "autoreconf -i",
                f"./configure --with-pnetcdf=/usr --with-hdf5={h5} CC=mpicc CXX=mpicxx",
                f'make -j{jobs} LDFLAGS="-L/usr/lib -L{h5}/lib"',
            ],
        },
    }
    if hdf5_114 is not None:
        # The same archive, unpacked beside the first ("tag"), against HDF5 1.14 (rpath: the
        # program finds that library, not Debian's 1.10, at run time).
        specs["e3sm-io-hdf5-114"] = {
            "glob": "e3sm-io-*.tar.gz",
            "top": "e3sm-io",
            "binary": "src/e3sm_io",
            "tag": "-hdf5-114",
            "steps": [
                "autoreconf -i",
                f"./configure --with-pnetcdf=/usr --with-hdf5={hdf5_114} CC=mpicc CXX=mpicxx",
                f'make -j{jobs} LDFLAGS="-L/usr/lib -L{hdf5_114}/lib -Wl,-rpath,{hdf5_114}/lib"',
            ],
        }
    return specs


def build_peers(
    peers_dir: Path, build_dir: Path, jobs: int, log, hdf5_114: Path | None = None, names: set[str] | None = None
) -> dict[str, dict]:
    """Unpacks and builds each peer once (`names`: only those); returns name -> {archive, root,
    binary, built_now}."""
    missing = [t for t in ("autoreconf", "automake", "libtoolize", "mpicc", "mpicxx") if shutil.which(t) is None]
    out: dict[str, dict] = {}
    build_dir.mkdir(parents=True, exist_ok=True)
    for name, spec in peer_specs(jobs, hdf5_114).items():
        if names is not None and name not in names:
            continue
        archives = sorted(peers_dir.glob(spec["glob"]))
        if not archives:
            sys.exit(f"peers: no {spec['glob']} in {peers_dir} (point --peers at the folder of the peers' archives)")
        archive = archives[-1]
        stem = archive.name.removesuffix(".tar.gz") + spec.get("tag", "")
        root = build_dir / stem / spec["top"]
        binary = root / spec["binary"]
        stamp = build_dir / f"{archive.name}{spec.get('tag', '')}.built"
        if stamp.exists() and binary.exists():
            out[name] = {"archive": str(archive), "root": root, "binary": binary, "built_now": False}
            log(f"{name}: already built from {archive.name} ({binary.relative_to(build_dir.parent)})")
            continue
        if missing:
            sys.exit(f"peers: building {name} needs {', '.join(missing)} (make setup installs them)")
        shutil.rmtree(build_dir / stem, ignore_errors=True)
        (build_dir / stem).mkdir(parents=True)
        logfile = build_dir / f"{stem}.log"
        log(
            f"{name}: building from {archive.name} into {root.relative_to(build_dir.parent)} "
            f"(log {logfile.name}; E3SM-IO takes about 8 minutes on 2 cores)"
        )
        started = time.time()
        with logfile.open("w") as f:
            subprocess.run(["tar", "xzf", str(archive), "-C", str(build_dir / stem)], check=True, stdout=f, stderr=f)
            for step in spec["steps"]:
                f.write(f"\n$ {step}\n")
                f.flush()
                rc = subprocess.run(step, shell=True, cwd=root, stdout=f, stderr=subprocess.STDOUT, env=ENV).returncode
                if rc != 0:
                    tail = logfile.read_text().splitlines()[-25:]
                    sys.exit(
                        f"peers: `{step}` failed for {name} (exit {rc}); the end of {logfile}:\n" + "\n".join(tail)
                    )
        if not binary.exists():
            sys.exit(f"peers: the build of {name} did not produce {binary} (see {logfile})")
        stamp.write_text(f"{archive.name}\n{binary}\n")
        log(f"{name}: built in {time.time() - started:.0f} s")
        out[name] = {"archive": str(archive), "root": root, "binary": binary, "built_now": True}
    return out


# ---------------------------------------------------------------------------------------------
# Workloads and variants

IOR_APIS = [  # (peer label, IOR arguments, the matching Strata backend)
    ("IOR -a POSIX", ["-a", "POSIX"], "posix"),
    ("IOR -a MPIIO", ["-a", "MPIIO"], "mpiio-ind"),
    ("IOR -a MPIIO -c", ["-a", "MPIIO", "-c"], "mpiio-coll"),
    ("IOR -a HDF5 -c", ["-a", "HDF5", "-c"], "hdf5"),
    ("IOR -a NCMPI -c", ["-a", "NCMPI", "-c"], "pnetcdf"),
]
IOR_PATTERNS = [  # (ranks, -b, -t, -s, -F)
    (4, "1m", "64k", 4, False),
    (4, "4m", "1m", 2, False),
    (4, "4m", "1m", 2, True),
    (8, "256k", "4k", 5, False),
]


# Strata backend: the loop's call (hdf5, pnetcdf: one dataset or variable made as the backend makes it)
LOOP_APIS = {
    "posix": "pwrite",
    "mpiio-coll": "MPI_File_write_at_all",
    "hdf5": "H5Dwrite",
    "pnetcdf": "ncmpi_put_vara_all",
}


def loop_label(api: str, reuse: bool) -> str:
    return f"{LOOP_APIS[api]} loop, {'reused buffer' if reuse else 'distinct data'}"


def build_loop(build_dir: Path, log) -> Path:
    """bench/write_loop.c (Strata's own calibration program, not a peer), built when it changed."""
    source = ROOT / "bench" / "write_loop.c"
    binary = build_dir / "write_loop"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        build_dir.mkdir(parents=True, exist_ok=True)
        hdf5 = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5-openmpi"], capture_output=True, text=True)
        if hdf5.returncode != 0:
            sys.exit("peers: pkg-config finds no hdf5-openmpi (scripts/setup.sh installs libhdf5-openmpi-dev)")
        proc = subprocess.run(
            ["mpicc", "-O2", "-o", str(binary), str(source), *hdf5.stdout.split(), "-lpnetcdf"],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"peers: cannot build {source}: {proc.stderr.strip()}")
        log(f"built {binary}")
    return binary


def run_loop(w: dict, v: dict, binary: Path, tmp: Path, peer_env: list[str]) -> dict:
    cmd = [
        *mpirun(w["ranks"], peer_env, v),
        str(binary),
        "--api",
        v["api"],
        "--reuse" if v["reuse"] else "--distinct",
        "-b",
        w["b"],
        "-t",
        w["t"],
        "-s",
        str(w["s"]),
        *(["-F"] if w["fpp"] else []),
        "-i",
        str(w["reps"]),
        "-o",
        str(tmp / "data" / "loop.dat"),
    ]
    proc = run(cmd, 900)
    if proc.returncode != 0:
        return failure(proc)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"own_s": out["seconds"], "alt_s": [], "bytes": out["bytes"], "verified": None, "steps": []}


def ior_workloads(cat: StrataCatalogue, reps: int) -> list[dict]:
    out = []
    for ranks, b, t, s, fpp in IOR_PATTERNS:
        layout = "file-per-process" if fpp else "shared"
        able = set(cat.backends_with(layout))
        name = f"IOR -b {b} -t {t} -s {s}{' -F' if fpp else ''} ({ranks} ranks)"
        pairs, variants = [], []
        for label, api, backend in IOR_APIS:
            if backend not in able:
                continue  # no Strata backend writes this layout (hdf5, pnetcdf: a shared file only)
            peer = {"label": label + (" -F" if fpp else ""), "side": "peer", "tool": "ior", "api": api}
            mine = {"label": f"strata {backend}", "side": "strata", "backend": backend}
            variants += [peer, mine]
            pairs.append((peer["label"], mine["label"]))
        engine = {"label": "strata strata (engine)", "side": "strata", "backend": "strata"}
        if "strata" in able:
            variants.append(engine)
        for api in LOOP_APIS:  # what a gap owes to the data: the same plain loop, both kinds of data
            if api in able:
                variants += [
                    {"label": loop_label(api, True), "side": "loop", "api": api, "reuse": True},
                    {"label": loop_label(api, False), "side": "loop", "api": api, "reuse": False},
                ]
        out.append(
            {
                "name": name,
                "kind": "ior",
                "ranks": ranks,
                "reps": reps,
                "fpp": fpp,
                "bytes": ranks * s * size_bytes(b),
                "b": b,
                "t": t,
                "s": s,
                "variants": variants,
                "pairs": pairs,
                "engine": engine["label"] if "strata" in able else None,
            }
        )
    return out


def e3sm_workload(cat: StrataCatalogue, e3sm_root: Path, maps_dir: Path | None) -> dict:
    dats = [(maps_dir or e3sm_root / "datasets") / m for m in E3SM_MAPS]
    for d in dats:
        if not d.exists():
            sys.exit(f"peers: no PIO map {d} (the e3sm-io archive's datasets/ holds them; or give --maps-dir)")
    peers = [
        {
            "label": "E3SM-IO -a pnetcdf -x canonical -j",
            "side": "peer",
            "tool": "e3sm-io",
            "api": ["-a", "pnetcdf", "-x", "canonical", "-j"],
            "ext": ".nc",
        },
        {
            "label": "E3SM-IO -a hdf5 -x canonical -j",
            "side": "peer",
            "tool": "e3sm-io",
            "api": ["-a", "hdf5", "-x", "canonical", "-j"],
            "ext": ".h5",
        },
        {
            "label": "E3SM-IO -a hdf5 -x canonical (double)",
            "side": "peer",
            "tool": "e3sm-io",
            "api": ["-a", "hdf5", "-x", "canonical"],
            "ext": ".h5",
        },
    ]
    backends = [b for b in ("posix", "mpiio-ind", "mpiio-coll", "hdf5", "pnetcdf") if b in cat.backends]
    mine = [{"label": f"strata {b}", "side": "strata", "backend": b} for b in backends]
    # HDF5 1.10 runs E3SM-IO's float path (-j: double data written as float) independently (no-
    # collective cause: type conversion): its like is strata hdf5 --independent. Its double path
    # is collective, as strata hdf5 is by default.
    if "hdf5" in backends:
        mine.append(
            {"label": "strata hdf5 --independent", "side": "strata", "backend": "hdf5", "args": ["--independent"]}
        )
    engine = {"label": "strata strata (engine)", "side": "strata", "backend": "strata"}
    pairs = []
    for b in backends:
        if b == "pnetcdf":
            pairs.append((peers[0]["label"], "strata pnetcdf"))
        elif b == "hdf5":
            pairs += [(peers[1]["label"], "strata hdf5 --independent"), (peers[2]["label"], "strata hdf5")]
        else:
            pairs.append((None, f"strata {b}"))  # no peer of its own: against the fastest peer
    return {
        "name": "E3SM F case, E3SM-IO's map, h0 file (16 ranks)",
        "kind": "e3sm",
        "ranks": 16,
        "reps": 1,
        "map_nc": e3sm_root / "datasets" / "map_f_case_16p.nc",
        "maps": ",".join(str(d) for d in dats),
        "variants": [*peers, *mine, engine],
        "pairs": pairs,
        "engine": engine["label"],
    }


# E3SM-IO's multi-dataset path against Strata's: the peer's label, and the pairs it is compared in
# (peer, Strata variant, the speed ratio the issue asks for).
HDF5_MD_PEER = "E3SM-IO -a hdf5_md -x canonical -j"
HDF5_MD_TARGETS = (("strata hdf5-multi", 0.9), ("strata strata --container hdf5", 3.0))


def add_hdf5_multi(w: dict, strata_114: Path) -> None:
    """Adds E3SM-IO -a hdf5_md (its E3SM-IO built against HDF5 1.14), Strata's hdf5-multi (the
    strata built against it) and the engine's HDF5 container to the E3SM workload `w`. -j: float
    output from double data, as Strata's float variables; HDF5 1.14 converts types inside a
    collective multi-dataset write (1.10 fell back to independent I/O)."""
    w["variants"] += [
        {
            "label": HDF5_MD_PEER,
            "side": "peer",
            "tool": "e3sm-io-hdf5-114",
            "api": ["-a", "hdf5_md", "-x", "canonical", "-j"],
            "ext": ".h5",
        },
        {"label": "strata hdf5-multi", "side": "strata", "backend": "hdf5-multi", "strata": strata_114},
        {"label": "strata hdf5 (HDF5 1.14)", "side": "strata", "backend": "hdf5", "strata": strata_114},
        {
            "label": "strata strata --container hdf5",
            "side": "strata",
            "backend": "strata",
            "args": ["--container", "hdf5"],
        },
    ]
    w["pairs"] += [(HDF5_MD_PEER, label) for label, _ in HDF5_MD_TARGETS]
    w["pairs"].append((HDF5_MD_PEER, "strata hdf5 (HDF5 1.14)"))
    w["pairs"].append((HDF5_MD_PEER, w["engine"]))


def e3sm_md_workload(cat: StrataCatalogue, e3sm_root: Path, maps_dir: Path | None, strata_114: Path) -> dict:
    """--only e3sm-md: the E3SM F case with E3SM-IO's multi-dataset path and Strata's (hdf5-multi,
    the engine's HDF5 container and raw file) only; needs just the E3SM-IO built against HDF5 1.14."""
    w = e3sm_workload(cat, e3sm_root, maps_dir)
    w["variants"] = [v for v in w["variants"] if v["label"] == w["engine"]]
    w["pairs"] = []
    add_hdf5_multi(w, strata_114)
    w["name"] += ", multi-dataset paths"
    return w


def size_bytes(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(text[:-1]) * units[text[-1].lower()] if text[-1].lower() in units else int(text)


# ---------------------------------------------------------------------------------------------
# Launches


def mpirun(ranks: int, peer_env: list[str], v: dict | None = None) -> list[str]:
    cmd = ["mpirun", "-n", str(ranks), "--oversubscribe", *((v or {}).get("mca", []))]
    for assignment in peer_env:
        cmd += ["-x", assignment]
    return cmd


# Open MPI's two MPI-IO components: OMPIO (its default) and ROMIO. Every variant that goes through
# MPI-IO (the peers' MPIIO, HDF5 and PnetCDF paths, Strata's MPI-IO, HDF5 and PnetCDF backends and
# the plain loops over them) runs under each; "the fastest peer" is the fastest of all of them.
ROMIO = ["--mca", "io", "romio321"]
MPIIO_BACKENDS = {"mpiio-ind", "mpiio-coll", "hdf5", "hdf5-multi", "pnetcdf"}


def uses_mpiio(v: dict) -> bool:
    if v["side"] == "peer":
        return v.get("tool") == "e3sm-io" or v.get("api", [""])[:2] != ["-a", "POSIX"]
    if v["side"] == "loop":
        return v["api"] != "posix"
    return v.get("backend") in MPIIO_BACKENDS


def under_romio(label: str) -> str:
    return label + " [romio]"


def with_romio(w: dict, components: set[str]) -> dict:
    """The workload's MPI-IO variants again under ROMIO (components has "romio"), with their pairs;
    without "ompio", those variants run under ROMIO only."""
    if "romio" not in components:
        return w
    extra = [{**v, "label": under_romio(v["label"]), "mca": ROMIO} for v in w["variants"] if uses_mpiio(v)]
    mpiio = {v["label"] for v in w["variants"] if uses_mpiio(v)}
    pairs = [
        (under_romio(a) if a in mpiio else a, under_romio(b) if b in mpiio else b) for a, b in w["pairs"] if b in mpiio
    ]
    if "ompio" in components:
        w["variants"] = [*w["variants"], *extra]
        w["pairs"] = [*w["pairs"], *[p for p in pairs if p not in w["pairs"]]]
    else:
        w["variants"] = [v for v in w["variants"] if not uses_mpiio(v)] + extra
        w["pairs"] = pairs
    return w


def run(cmd: list[str], timeout: int) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", f"timed out after {timeout} s")


def failure(proc: subprocess.CompletedProcess) -> dict:
    text = (proc.stderr.strip() + "\n" + proc.stdout.strip()).strip()
    return {"error": f"exit {proc.returncode}: {text[-400:]}"}


def run_ior(w: dict, v: dict, ior: Path, tmp: Path, verify: bool, peer_env: list[str]) -> dict:
    summary, ranks_csv = tmp / "ior-summary.json", tmp / "ior-ranks.csv"
    summary.unlink(missing_ok=True)
    ranks_csv.unlink(missing_ok=True)
    cmd = [
        *mpirun(w["ranks"], peer_env, v),
        str(ior),
        *v["api"],
        "-b",
        w["b"],
        "-t",
        w["t"],
        "-s",
        str(w["s"]),
        *(["-F"] if w["fpp"] else []),
        "-w",
        "-i",
        str(w["reps"]),
        *(["-W"] if verify else []),
        "-o",
        str(tmp / "data" / "ior.dat"),
        "-O",
        "summaryFormat=JSON",
        "-O",
        f"summaryFile={summary}",
        "-O",
        f"saveRankPerformanceDetailsCSV={ranks_csv}",
    ]
    proc = run(cmd, 900)
    if proc.returncode != 0 or not summary.exists():
        return failure(proc)
    results = [r for r in json.loads(summary.read_text())["tests"][0]["Results"] if r["access"] == "write"]
    # IOR's bandwidth: the aggregate bytes over (latest close - earliest open); its times are
    # printed to 0.1 ms, so the span is taken back from the bandwidth.
    span = [w["bytes"] / MIB / r["bwMiB"] for r in results]
    with ranks_csv.open() as f:
        rows = [r for r in csv.DictReader(f) if r["access"] == "write"]
    n = w["ranks"]
    slowest = [max(float(r["runtime-with-openclose"]) for r in rows[i : i + n]) for i in range(0, len(rows), n)]
    if len(slowest) != len(span):
        return {"error": f"IOR wrote {len(rows)} per-rank rows for {len(span)} writes of {n} ranks"}
    steps = [{"open_s": r["openTime"], "xfer_s": r["wrRdTime"], "close_s": r["closeTime"]} for r in results]
    return {"own_s": span, "alt_s": slowest, "bytes": w["bytes"], "verified": True if verify else None, "steps": steps}


def run_e3sm_io(w: dict, v: dict, e3sm: Path, tmp: Path, peer_env: list[str]) -> dict:
    cmd = [
        *mpirun(w["ranks"], peer_env, v),
        str(e3sm),
        str(w["map_nc"]),
        *v["api"],
        "-f",
        "0",
        "-o",
        str(tmp / "data" / f"e3sm{v['ext']}"),
    ]
    proc = run(cmd, 1800)
    if proc.returncode != 0:
        return failure(proc)
    p = parse_e3sm_io(proc.stdout)
    if "end-to-end" not in p.get("max", {}):
        return {"error": "no timings in E3SM-IO's output: " + proc.stdout[-300:]}
    phases = (
        "I/O preparing",
        "file open/create",
        "define variables",
        "posting write requests",
        "write flushing",
        "close",
    )
    # Its own open-to-close figure: the slowest rank's end-to-end (from the barrier before the
    # create to after the collective close, so it spans the earliest open to the latest close);
    # the other way: the maxima of its barrier-separated phases added up.
    phase_sum = sum(p["max"].get(k, 0.0) for k in phases)
    return {
        "own_s": [p["max"]["end-to-end"]],
        "alt_s": [phase_sum],
        "bytes": p["bytes"],
        "verified": None,
        "steps": [p["max"]],
        "variables": p["variables"],
        "requests": p.get("requests"),
    }


def parse_e3sm_io(text: str) -> dict:
    out: dict = {"max": {}, "variables": {}}
    for m in re.finditer(r"^(?:Time of )?(.+?)\s+(?:time\s+)?min/max =\s+([\d.]+) /\s+([\d.]+)", text, re.M):
        out["max"][m.group(1).strip()] = float(m.group(3))
    m = re.search(r"Total write amount\s+=\s+([\d.]+) MiB", text)
    out["bytes"] = float(m.group(1)) * MIB if m else None
    for m in re.finditer(r"No\. variables use (no decomposition|decomposition D\d)\s*=\s*(\d+)", text):
        out["variables"][m.group(1)] = int(m.group(2))
    m = re.search(r"Total no\. climate variables\s*=\s*(\d+)", text)
    if m:
        out["variables"]["total"] = int(m.group(1))
    m = re.search(r"Total no\. noncontiguous requests\s*=\s*(\d+)", text)
    if m:
        out["requests"] = int(m.group(1))
    return out


def run_strata(w: dict, v: dict, tmp: Path, verify: bool) -> dict:
    record_path = tmp / "strata.json"
    record_path.unlink(missing_ok=True)
    if w["kind"] == "ior":
        kernel = ["ior", "--block-size", w["b"].upper(), "--transfer-size", w["t"].upper(), "--segments", str(w["s"])]
        if w["fpp"]:
            kernel.append("--file-per-process")
    else:
        kernel = ["e3sm", "--maps", w["maps"], "--map-vars", E3SM_MAP_VARS]
    cmd = [
        *mpirun(w["ranks"], [], v),
        str(v.get("strata", STRATA)),
        "run",
        *kernel,
        "--backend",
        v["backend"],
        *v.get("args", []),
        "--no-advice",
        "--repetitions",
        str(w["reps"]),
        "--output",
        str(tmp / "data" / "strata"),
        "--json",
        str(record_path),
        "--quiet",
        *(["--verify"] if verify else []),
    ]
    proc = run(cmd, 1800)
    if proc.returncode != 0 or not record_path.exists():
        return failure(proc)
    record = json.loads(record_path.read_text())
    writes = [r["write"] for r in record["repetitions"]]
    return {
        "own_s": [r["time_s"] for r in writes],
        "alt_s": [],
        "bytes": writes[0]["bytes"],
        "verified": record.get("verified") if verify else None,
        "steps": [{k: r.get(k, 0.0) for k in ("open_s", "xfer_s", "close_s")} for r in writes],
        "requests": writes[-1].get("requests"),
        "workarounds": record.get("mpi_workarounds", []),
        "allocator": record.get("allocator", {}),
        "params": record.get("params"),
        "io_component": record.get("io_component"),
        "git_rev": record.get("git_rev"),
    }


def cpu_busy(seconds: float = 0.25) -> float:
    """The fraction of the machine's CPU time that was not idle over `seconds` (from /proc/stat):
    taken between launches, it is other programs' load, which would distort the numbers."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except OSError:
        return 0.0
    return 1.0 - (idle1 - idle0) / max(total1 - total0, 1)


BUSY = 0.2  # a launch that starts with the CPU busier than this (others' load) is counted


def wait_for_quiet(limit: float, log) -> float:
    """Waits up to `limit` seconds for other programs' load to fall to BUSY; returns the last
    measure (what the launch started with)."""
    started = time.time()
    busy = cpu_busy()
    if busy > BUSY:
        log(f"  the CPU is {busy:.0%} busy between launches (another program): waiting up to {limit:.0f} s")
    while busy > BUSY and time.time() - started < limit:
        time.sleep(1.0)
        busy = cpu_busy()
    return busy


def measure(
    w: dict,
    rounds: int,
    rng: random.Random,
    tmp: Path,
    peers: dict,
    loop: Path,
    peer_env: list[str],
    log,
    busy: list[float],
    quiet_wait: float,
) -> dict:
    samples = {
        v["label"]: {"own_s": [], "later_s": [], "alt_s": [], "steps": [], "errors": [], "verified": [], "info": {}}
        for v in w["variants"]
    }
    for r in range(rounds):
        order = list(w["variants"])
        rng.shuffle(order)
        for v in order:
            log(f"{w['name']}: round {r + 1}/{rounds}, {v['label']}")
            data = tmp / "data"
            shutil.rmtree(data, ignore_errors=True)
            data.mkdir()
            os.sync()  # no launch pays for the previous one's writeback
            busy.append(wait_for_quiet(quiet_wait, log))
            verify = r == 0
            if v["side"] == "strata":
                res = run_strata(w, v, tmp, verify)
            elif v["side"] == "loop":
                res = run_loop(w, v, loop, tmp, peer_env)
            elif v["tool"] == "ior":
                res = run_ior(w, v, peers["ior"]["binary"], tmp, verify, peer_env)
            else:
                res = run_e3sm_io(w, v, peers[v["tool"]]["binary"], tmp, peer_env)
            s = samples[v["label"]]
            if "error" in res:
                s["errors"].append(res["error"])
                log(f"  FAILED: {res['error'][-200:]}")
                continue
            s["own_s"] += res["own_s"]
            s["later_s"] += res["own_s"][2:]  # a launch's writes 3, 4, ... (see the engine's note)
            s["alt_s"] += res["alt_s"]
            s["steps"] += res["steps"]
            if res["verified"] is not None:
                s["verified"].append(res["verified"])
            s["info"] = {k: res[k] for k in ("bytes", "variables", "requests", "params", "io_component") if k in res}
    shutil.rmtree(tmp / "data", ignore_errors=True)
    rows = {}
    for label, s in samples.items():
        nbytes = s["info"].get("bytes") or w.get("bytes") or 0
        row = {
            "bytes": nbytes,
            "own_s": s["own_s"],
            "alt_s": s["alt_s"],
            "errors": s["errors"],
            "later_mib_s": statistics.median(nbytes / MIB / t for t in s["later_s"]) if s["later_s"] else None,
            "verified": all(s["verified"]) if s["verified"] else None,
            "info": s["info"],
        }
        for way in ("own", "alt"):
            times = s[f"{way}_s"]
            row[f"{way}_median_s"] = statistics.median(times) if times else None
            row[f"{way}_mib_s"] = statistics.median(nbytes / MIB / t for t in times) if times else None
        row["steps_median"] = {
            k: statistics.median(float(x[k]) for x in s["steps"]) for k in (s["steps"][0] if s["steps"] else {})
        }
        rows[label] = row
    return rows


# ---------------------------------------------------------------------------------------------
# The table


def mark(ratio: float | None) -> str:
    if ratio is None:
        return "   n/a"
    return f"{ratio:6.2f}{' <0.9' if round(ratio, 2) < SLOW else ''}"


def fmt(x: float | None, spec: str = "9.1f") -> str:
    return format(x, spec) if x is not None else "FAILED".rjust(len(format(0.0, spec)))


def ior_lines(w: dict, rows: dict) -> tuple[list[str], list[dict], dict]:
    lines = [f"{w['name']}: {w['bytes'] / MIB:.0f} MiB per write, {w['reps']} writes per launch"]
    lines.append(
        f"  {'peer variant':22s} {'peer MiB/s':>10s} {'(slowest)':>9s}   {'Strata backend':22s} "
        f"{'Strata MiB/s':>12s} {'ratio':>6s}"
    )
    out = []
    for peer, mine in w["pairs"]:
        p, s = rows[peer], rows[mine]
        ratio = s["own_mib_s"] / p["own_mib_s"] if p["own_mib_s"] and s["own_mib_s"] else None
        lines.append(
            f"  {peer:22s} {fmt(p['own_mib_s'], '10.1f')} ({fmt(p['alt_mib_s'], '7.1f')})   {mine:22s} "
            f"{fmt(s['own_mib_s'], '12.1f')} {mark(ratio)}"
        )
        out.append(
            {
                "pattern": w["name"],
                "peer": peer,
                "strata": mine,
                "peer_mib_s": p["own_mib_s"],
                "peer_slowest_rank_mib_s": p["alt_mib_s"],
                "strata_mib_s": s["own_mib_s"],
                "ratio": ratio,
                "timing": "IOR: latest close - earliest open; Strata: its slowest rank's open to close",
            }
        )
    shares = []
    for api, call in LOOP_APIS.items():
        reused = rows.get(loop_label(api, True), {}).get("own_mib_s")
        distinct = rows.get(loop_label(api, False), {}).get("own_mib_s")
        mine = rows.get(f"strata {api}", {}).get("own_mib_s")
        if not (reused and distinct):
            continue
        shares.append(
            f"{call} {reused:.0f} -> {distinct:.0f} MiB/s ({distinct / reused:.2f}), strata {api} / "
            f"distinct loop {mine / distinct if mine else float('nan'):.2f}"
        )
        out.append(
            {
                "pattern": w["name"],
                "calibration": f"{call} loop",
                "strata": f"strata {api}",
                "reused_mib_s": reused,
                "distinct_mib_s": distinct,
                "distinct_over_reused": distinct / reused,
                "strata_over_distinct": mine / distinct if mine else None,
            }
        )
    if shares:
        lines.append(
            "  The data's share of a gap: a plain loop (bench/write_loop.c, timed as strata times a write) "
            "from one reused transfer buffer (as IOR) -> from distinct data (as Strata): " + "; ".join(shares)
        )
    peers = {k: v["own_mib_s"] for k, v in rows.items() if k.startswith("IOR") and v["own_mib_s"]}
    engine = None
    if w["engine"] and peers:
        best = max(peers, key=peers.get)
        e = rows[w["engine"]]["own_mib_s"]
        later = rows[w["engine"]]["later_mib_s"]
        engine = {
            "pattern": w["name"],
            "fastest_peer": best,
            "peer_mib_s": peers[best],
            "strata_mib_s": e,
            "ratio": e / peers[best] if e else None,
            "later_mib_s": later,
            "later_ratio": later / peers[best] if later else None,
        }
    steps = []
    for label, row in rows.items():
        st = row["steps_median"]
        if st and label.startswith("strata"):
            steps.append(
                f"{label.removeprefix('strata ')} {st['open_s'] * 1e3:.2f}/{st['xfer_s'] * 1e3:.2f}/"
                f"{st['close_s'] * 1e3:.2f}"
            )
    lines.append("  Strata's steps, median ms open/transfer/close (slowest rank each): " + "; ".join(steps))
    return lines, out, engine


def e3sm_lines(w: dict, rows: dict) -> tuple[list[str], list[dict], dict]:
    lines = [f"{w['name']}: one write per launch; seconds (lower is better), ratio = peer s / Strata s"]
    peers = {k: v["own_median_s"] for k, v in rows.items() if k.startswith("E3SM-IO") and v["own_median_s"]}
    fastest = min(peers, key=peers.get) if peers else None
    lines.append(
        f"  {'peer variant':40s} {'peer s':>7s} {'(phases)':>8s} {'MiB':>6s}   {'Strata backend':16s} "
        f"{'Strata s':>8s} {'MiB':>6s} {'ratio':>6s}"
    )
    out = []
    for peer, mine in w["pairs"]:
        note, own_peer = "", peer is not None
        if peer is None:
            peer, note = fastest, "  (no peer of its own: beside the fastest peer, not marked)"
        if peer is None:
            continue
        p, s = rows[peer], rows[mine]
        both = p["own_median_s"] and s["own_median_s"]
        ratio = p["own_median_s"] / s["own_median_s"] if both else None
        lines.append(
            f"  {peer:40s} {fmt(p['own_median_s'], '7.2f')} ({fmt(p['alt_median_s'], '6.2f')}) "
            f"{(p['bytes'] or 0) / MIB:6.2f}   {mine:16s} {fmt(s['own_median_s'], '8.2f')} "
            f"{(s['bytes'] or 0) / MIB:6.2f} {mark(ratio) if own_peer else fmt(ratio, '6.2f')}{note}"
        )
        out.append(
            {
                "pattern": w["name"],
                "peer": peer,
                "strata": mine,
                "peer_s": p["own_median_s"],
                "peer_phases_s": p["alt_median_s"],
                "peer_bytes": p["bytes"],
                "strata_s": s["own_median_s"],
                "strata_bytes": s["bytes"],
                "ratio": ratio,
                "own_peer": own_peer,
                "timing": "E3SM-IO: its end-to-end max; Strata: its slowest rank's open to close",
            }
        )
    for mine, target in HDF5_MD_TARGETS:  # the multi-dataset targets, where E3SM-IO -a hdf5_md ran
        p, s = rows.get(HDF5_MD_PEER), rows.get(mine)
        if p and s and p["own_median_s"] and s["own_median_s"]:
            ratio = p["own_median_s"] / s["own_median_s"]
            lines.append(
                f"  target: {mine} at {ratio:.2f}x {HDF5_MD_PEER}'s speed (wanted >= {target}): "
                f"{'met' if ratio >= target else 'NOT MET'}"
            )
            for pair in out:
                if pair["peer"] == HDF5_MD_PEER and pair["strata"] == mine:
                    pair.update(target=target, met=ratio >= target)
    engine = None
    e = rows[w["engine"]]["own_median_s"]
    if fastest:
        engine = {
            "pattern": w["name"],
            "fastest_peer": fastest,
            "peer_s": peers[fastest],
            "strata_s": e,
            "ratio": peers[fastest] / e if e else None,
        }
    # What each side writes.
    info = next((r["info"] for k, r in rows.items() if k.startswith("E3SM-IO") and r["info"].get("variables")), {})
    v = info.get("variables", {})
    partitioned = sum(n for k, n in v.items() if k.startswith("decomposition"))
    lines.append(
        f"  What differs: E3SM-IO writes {v.get('total', '?')} variables ({partitioned} on the maps, "
        f"{v.get('no decomposition', '?')} not partitioned, written by one rank) with their attributes and "
        f"a netCDF/HDF5 header; Strata writes the {partitioned} partitioned ones ({E3SM_MAP_VARS} per map, "
        "float), no attributes. '(double)' writes the same variables as double: twice the bytes."
    )
    lines.append(
        "  'peer s' = E3SM-IO's end-to-end max (its open-to-close figure: from the barrier before the create "
        "to after the collective close, the header's definition included); '(phases)' = its barrier-separated "
        "phases' maxima added up."
    )
    for label, row in rows.items():
        st = row["steps_median"]
        if st and label.startswith("strata"):
            lines.append(
                f"  {label:24s} open {st['open_s']:.3f} s, transfer {st['xfer_s']:.3f} s, "
                f"close {st['close_s']:.3f} s; {row['info'].get('requests', '?')} file requests"
            )
        elif st:
            lines.append(
                f"  {label:40s} open {st.get('file open/create', 0):.3f} s, define "
                f"{st.get('define variables', 0):.3f} s, post {st.get('posting write requests', 0):.3f} s, "
                f"flush {st.get('write flushing', 0):.3f} s, close {st.get('close', 0):.3f} s"
            )
    return lines, out, engine


def main() -> int:
    global STRATA
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--peers",
        type=Path,
        default=ROOT.parent / "shared" / "peers",
        help="folder of the peers' archives (default ../shared/peers)",
    )
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build-peers")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (>= 5 unless --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, 2 writes per IOR launch")
    parser.add_argument(
        "--only",
        default="ior,e3sm",
        help="workloads, comma-separated: ior, e3sm, e3sm-md (the multi-dataset paths alone: "
        "E3SM-IO -a hdf5_md, hdf5-multi, the engine; needs make build-hdf5-114)",
    )
    parser.add_argument("--maps-dir", type=Path, help="PIO .dat maps (default: the e3sm-io archive's datasets/)")
    parser.add_argument(
        "--components",
        default="ompio,romio",
        help="Open MPI's MPI-IO components every MPI-IO variant runs under, comma-separated: ompio (the "
        "default component), romio (--mca io romio321); the fastest peer is the fastest under any",
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--strata", type=Path, default=STRATA, help="the strata program (default build/bin/strata)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=30.0,
        help="seconds to wait before a launch for other programs' load to end (0: never wait)",
    )
    parser.add_argument(
        "--hdf5-114",
        type=Path,
        default=ROOT / "build-deps" / "hdf5-1.14.5",
        help="an HDF5 >= 1.14 prefix (make build-hdf5-114): E3SM-IO -a hdf5_md is built against it",
    )
    parser.add_argument(
        "--strata-hdf5-114",
        type=Path,
        default=ROOT / "build-hdf5-114" / "bin" / "strata",
        help="a strata with the hdf5-multi backend (make build-hdf5-114)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="make -j for the peers' builds")
    parser.add_argument("--dir", type=Path, help="where data files go (default: a folder in --output)")
    parser.add_argument("--output", type=Path, default=ROOT / "bench-output")
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="build the peers into --build-dir (once, behind a stamp) and stop: `make peers`",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    if args.quick:
        args.rounds = 1
    elif args.rounds < 5:
        parser.error("--rounds must be at least 5 (--quick for a smoke run)")
    ior_reps = 2 if args.quick else 5
    start = time.time()

    def log(message: str) -> None:
        print(f"[{time.time() - start:7.1f} s] {message}", file=sys.stderr, flush=True)

    if args.build_only:
        for name, peer in build_peers(args.peers, args.build_dir, args.jobs, log).items():
            print(f"{name}: {peer['binary']}")
        return 0
    STRATA = args.strata.resolve()
    if not STRATA.exists():
        sys.exit(f"peers: {STRATA} is missing (make build)")
    strata_mtime = STRATA.stat().st_mtime
    # E3SM-IO's multi-dataset path and Strata's hdf5-multi: where make build-hdf5-114 has run.
    multi = (args.hdf5_114 / "lib" / "libhdf5.so").exists() and args.strata_hdf5_114.exists()
    if multi and "hdf5-multi" not in StrataCatalogue.from_binary(args.strata_hdf5_114.resolve()).backends:
        sys.exit(f"peers: {args.strata_hdf5_114} has no hdf5-multi backend (make build-hdf5-114)")
    if not multi:
        log("E3SM-IO -a hdf5_md and hdf5-multi: skipped (no HDF5 1.14 or no build-hdf5-114: make build-hdf5-114)")
    if "e3sm-md" in only and not multi:
        sys.exit("peers: --only e3sm-md needs HDF5 1.14 and build-hdf5-114 (make build-hdf5-114)")
    needed = (
        ({"ior"} if "ior" in only else set())
        | ({"e3sm-io"} if "e3sm" in only else set())
        | ({"e3sm-io-hdf5-114"} if multi and only & {"e3sm", "e3sm-md"} else set())
    )
    peers = build_peers(args.peers, args.build_dir, args.jobs, log, args.hdf5_114.resolve() if multi else None, needed)
    peers_loop = build_loop(args.build_dir, log)
    built_s = time.time() - start
    cat = StrataCatalogue.from_binary(STRATA)
    components = set(args.components.split(","))
    if not components or not components <= {"ompio", "romio"}:
        parser.error("--components: ompio, romio or both, comma-separated")
    workloads = ior_workloads(cat, ior_reps) if "ior" in only else []
    if "e3sm" in only:
        workloads.append(e3sm_workload(cat, peers["e3sm-io"]["root"], args.maps_dir))
        if multi:
            add_hdf5_multi(workloads[-1], args.strata_hdf5_114.resolve())
    if "e3sm-md" in only:
        workloads.append(
            e3sm_md_workload(cat, peers["e3sm-io-hdf5-114"]["root"], args.maps_dir, args.strata_hdf5_114.resolve())
        )
    workloads = [with_romio(w, components) for w in workloads]

    args.output.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="peers.", dir=args.dir or args.output))
    (tmp / "data").mkdir()
    # The MPI settings Strata applies to itself before MPI_Init: the peers get them too.
    probe = run_strata(
        {"kind": "ior", "ranks": 2, "reps": 1, "b": "64k", "t": "64k", "s": 1, "fpp": False},
        {"backend": "posix"},
        tmp,
        False,
    )
    if "error" in probe:
        sys.exit(f"peers: a 2-rank strata run failed: {probe['error']}")
    peer_env = [a.split(":", 1)[0] for a in probe.get("workarounds", []) if "=" in a.split(":", 1)[0]]
    # And its allocator's: the strata program keeps freed memory (docs/backends.md); the peers get
    # the same glibc settings, so a collective buffer costs both sides the same page faults.
    tunables = probe.get("allocator", {}).get("glibc_tunables", "")
    if tunables:
        peer_env.append(f"GLIBC_TUNABLES={tunables}")
    rng = random.Random(args.seed)
    busy: list[float] = []
    report: dict = {
        "strata": {"path": str(STRATA), "git_rev": probe.get("git_rev")},
        "seed": args.seed,
        "rounds": args.rounds,
        "quick": args.quick,
        "ior_writes_per_launch": ior_reps,
        "peers": {
            k: {"archive": v["archive"], "binary": str(v["binary"]), "built_now": v["built_now"]}
            for k, v in peers.items()
        },
        "peer_env": peer_env,
        "io_component": probe.get("io_component"),
        "workloads": [],
        "pairs": [],
        "calibration": [],
        "engine": [],
    }
    head = "SMOKE RUN (--quick: 1 round, not a result). " if args.quick else ""
    lines = [
        f"{head}Strata against its peers (issue 20): {args.rounds} interleaved round(s), shuffle seed "
        f"{args.seed}, medians of every write; open and close included, fsync not included.",
        f"Strata {probe.get('git_rev', '?')} ({STRATA}); MPI-IO components: "
        + (
            f"{probe.get('io_component', '?')} (the default) on both sides, and ROMIO for every MPI-IO variant "
            "marked [romio]"
            if "romio" in components and "ompio" in components
            else "ROMIO for every MPI-IO variant"
            if "romio" in components
            else f"{probe.get('io_component', '?')} on both sides"
        )
        + "; the peers run with Strata's own MPI and allocator "
        f"settings ({', '.join(peer_env) or 'none'}); every Strata run --no-advice.",
        "Verified: round 1 of every IOR and Strata variant (IOR -W, strata --verify, untimed); E3SM-IO has no "
        "check.",
        "Timing, every ratio: the wall time from the earliest open to the latest close on both sides. The "
        "peer's is its own figure (IOR's bandwidth; E3SM-IO's end-to-end max, which spans from its barrier "
        "to after its collective close).",
        "Strata's is its JSON's time_s, the slowest rank's open to close after a barrier: every step of a Strata "
        "write ends in an agreement (MPI_Allreduce), so all ranks end together and the slowest rank's time is "
        "the span.",
        "'(slowest)' is IOR's slowest rank alone (its per-rank CSV): IOR -a POSIX ranks never synchronise "
        "between open and close, so with 4-8 ranks on 2 cores they run one after another and each rank's own "
        "time understates the span - the reason the ratios do not use it. '(phases)': E3SM-IO's phase maxima "
        f"added. ratio = Strata / peer in speed; '<0.9' marks a ratio below {SLOW}.",
        "",
    ]
    engine_lines = [
        "Engine vs the fastest peer (timing as above; ratio = strata / peer in speed). The engine "
        "keeps the previous output until the new one commits, so a launch's first two writes go to fresh "
        "pages (slow on this VM, docs/engine.md); its writes 3+ are shown apart."
    ]
    for w in workloads:
        rows = measure(w, args.rounds, rng, tmp, peers, peers_loop, peer_env, log, busy, args.quiet_wait)
        table, pairs, engine = (ior_lines if w["kind"] == "ior" else e3sm_lines)(w, rows)
        lines += table + [""]
        report["workloads"].append({"name": w["name"], "kind": w["kind"], "ranks": w["ranks"], "rows": rows})
        report["pairs"] += [x for x in pairs if "calibration" not in x]
        report["calibration"] += [x for x in pairs if "calibration" in x]
        for label, row in rows.items():
            for err in row["errors"][:1]:
                lines.insert(-1, f"  {label} FAILED: {err[-200:]}")
        if engine:
            report["engine"].append(engine)
            if w["kind"] == "ior":
                engine_lines.append(
                    f"  {w['name']:44s} strata {fmt(engine['strata_mib_s'], '9.1f')} MiB/s vs "
                    f"{engine['fastest_peer']:22s} {engine['peer_mib_s']:9.1f} MiB/s  "
                    f"{mark(engine['ratio'])}"
                )
                if engine["later_ratio"] is not None:
                    engine_lines.append(
                        f"  {'':44s} writes 3+ of each launch {engine['later_mib_s']:9.1f} MiB/s, "
                        f"ratio {engine['later_ratio']:.2f}"
                    )
            else:
                engine_lines.append(
                    f"  {w['name']:44s} strata {fmt(engine['strata_s'], '9.2f')} s     vs "
                    f"{engine['fastest_peer']:22s} {engine['peer_s']:9.2f} s      "
                    f"{mark(engine['ratio'])}"
                )
    shutil.rmtree(tmp, ignore_errors=True)
    total = time.time() - start
    loaded = sum(b > BUSY for b in busy)
    quiet = (
        f"the machine was quiet: before each of the {len(busy)} launches the CPU was at most {max(busy):.0%} " "busy"
        if busy and not loaded
        else f"WARNING: {loaded} of {len(busy)} launches started with the CPU more than {BUSY:.0%} busy (others' "
        f"programs; median {statistics.median(busy):.0%}): these numbers are not clean, run again on a quiet "
        "machine"
    )
    if STRATA.stat().st_mtime != strata_mtime:
        quiet += f"; WARNING: {STRATA} was rebuilt during the run (its rows may mix two builds)"
    lines += engine_lines + ["", f"Took {total / 60:.1f} min ({built_s:.0f} s of it building the peers); {quiet}."]
    report["seconds"] = {"total": total, "build": built_s}
    report["cpu_busy_before_launches"] = busy
    text = "\n".join(lines)
    print(text)
    (args.output / "peers.txt").write_text(text + "\n")
    (args.output / "peers.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    log(f"table and JSON in {args.output}")
    failed = any(r["errors"] for w in report["workloads"] for r in w["rows"].values())
    unverified = any(r["verified"] is False for w in report["workloads"] for r in w["rows"].values())
    return 1 if failed or unverified else 0


if __name__ == "__main__":
    sys.exit(main())
