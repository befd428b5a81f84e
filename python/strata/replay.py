"""Turn a Darshan log into a Strata trace: what `strata replay` runs (docs/replay.md).

    python -m strata.replay LOG.darshan -o TRACE.json      (also: strata-bench replay ...)

A trace is JSON ("format": "strata-trace", "version": 1). The `trace` kernel reads "ranks" (the
job's rank count) and "variables", each a name and the [rank, offset, length] of its write
requests in time order; the rest describes where they came from, for the report:

- "job": the log's job (id, ranks, run time, executable) and the totals of the files replayed;
- "files": one entry per file the job wrote (POSIX and STDIO modules), with the log's figures
  ("log": writes, bytes, access-size histogram, consecutive and sequential writes, furthest byte,
  write time, and the same for reads) beside the trace's ("trace": the same figures computed from
  the requests, and per job rank the requests and bytes), the origin of its requests ("dxt": the
  exact requests the DXT module recorded; "counters": a synthetic pattern matching the counters)
  and the variables that hold it; with DXT, also "reads": the job's read requests of the file
  ([rank, offset, length] in time order, unscaled), kept for the record, and "trace_reads": what of
  them the replay reads; with MPI-IO records, "mpiio": how the job called MPI-IO on the file
  (collective and independent writes and reads, from the MPI-IO module's counters, and DXT_MPIIO's
  request counts);
- "read_phases": how many read phases the replay runs after each write (below);
- "mpiio_mode": "collective" or "independent", how the job wrote through MPI-IO (absent without
  MPI-IO records): `strata replay` then replays through the MPI-IO backend of that mode;
- "scale": what was scaled down (`--max-bytes`, `--max-requests`) and by how much.

A file becomes one variable; a write that overlaps an earlier one of the same file (a rewrite:
HDF5's superblock, a log's first line) goes, with its size and rank, into a further variable of
that file ("NAME.rewrite1", ...), so the replay issues every request of the job and the engine's
rule that a phase's blocks are disjoint holds.

Reads (DXT's read segments) are replayed after the writes, scaled as the writes are, and verified:
a read of bytes the trace never writes (a file the job read before writing it, a hole) is cut to
the bytes the trace writes, since nothing there can be compared. A variable's reads are split into
layers of disjoint requests as the rewrites are (ranks read the same header; a rank reads a byte
twice): variable "reads" is a list of layers, layer k of every variable making read phase k.
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import os
import random
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRACE_FORMAT = "strata-trace"
TRACE_VERSION = 1

# Darshan's access-size bins (darshan-posix-log-format.h): the upper bound of each, inclusive.
SIZE_BINS = ("0_100", "100_1K", "1K_10K", "10K_100K", "100K_1M", "1M_4M", "4M_10M", "10M_100M", "100M_1G", "1G_PLUS")
_BIN_TOP = (100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824)


# Scaled down past these unless told otherwise (strata replay's --max-bytes and --max-requests too).
DEFAULT_MAX_BYTES = 1 << 30
DEFAULT_MAX_REQUESTS = 1_000_000


class ReplayError(Exception):
    """A log that cannot be converted, with the reason."""


def size_bin(size: int) -> int:
    """The Darshan histogram bin of a request of `size` bytes."""
    return bisect.bisect_left(_BIN_TOP, size)


def _bin_range(b: int, ceiling: int) -> tuple[int, int]:
    """Smallest and largest non-zero size of bin `b` (the open last bin ends at `ceiling`)."""
    lo = 1 if b == 0 else _BIN_TOP[b - 1] + 1
    hi = _BIN_TOP[b] if b < len(_BIN_TOP) else max(lo, ceiling)
    return lo, hi


# --- figures of a request list, as Darshan counts them -------------------------------------------


@dataclass
class Figures:
    """What Darshan's counters say about a file's writes (or what a trace's requests would make them say)."""

    writes: int = 0
    bytes: int = 0
    histogram: list[int] = field(default_factory=lambda: [0] * len(SIZE_BINS))
    consecutive: int = 0
    sequential: int = 0
    max_byte: int = -1  # furthest byte written (-1: none)

    def to_json(self) -> dict[str, Any]:
        return {
            "writes": self.writes,
            "bytes": self.bytes,
            "histogram": dict(zip(SIZE_BINS, self.histogram, strict=True)),
            "consecutive": self.consecutive,
            "sequential": self.sequential,
            "max_byte": self.max_byte,
        }


def figures(requests: Iterable[tuple[int, int, int]]) -> Figures:
    """Darshan's figures of [rank, offset, length] requests in time order: a write is sequential
    when it starts past the rank's last byte written, consecutive when it starts right after it
    (Darshan starts every rank's last byte at 0)."""
    f = Figures()
    last: dict[int, int] = {}
    for rank, offset, length in requests:
        f.writes += 1
        f.bytes += length
        f.histogram[size_bin(length)] += 1
        prev = last.get(rank, 0)
        if offset > prev:
            f.sequential += 1
        if offset == prev + 1:
            f.consecutive += 1
        last[rank] = offset + length - 1
        f.max_byte = max(f.max_byte, offset + length - 1)
    return f


def per_rank(requests: Iterable[tuple[int, int, int]]) -> dict[int, list[int]]:
    """{job rank: [requests, bytes]}."""
    out: dict[int, list[int]] = {}
    for rank, _offset, length in requests:
        row = out.setdefault(rank, [0, 0])
        row[0] += 1
        row[1] += length
    return out


# --- synthetic requests from counters ---------------------------------------------------------


def synthetic_sizes(
    writes: int, total: int, histogram: Sequence[int], common: Sequence[tuple[int, int]], rng: random.Random
) -> list[int]:
    """`writes` request sizes summing to `total`, as many in each histogram bin as it counts, the
    job's most common sizes first (Darshan's ACCESS1..4, which count reads too), the others spread
    so the bytes add up. Falls back to the bins' bounds when the counters cannot all hold."""
    if writes <= 0:
        return []
    hist = list(histogram)
    if sum(hist) != writes:  # no histogram (STDIO) or an inconsistent one: one bin, of the mean size
        hist = [0] * len(SIZE_BINS)
        hist[size_bin(max(1, total // writes))] = writes
    ranges = [_bin_range(b, total) for b in range(len(SIZE_BINS))]
    for use_common in (True, False):
        fixed: list[int] = []
        free = list(hist)
        if use_common:
            for size, count in common:
                if size <= 0 or count <= 0:
                    continue
                b = size_bin(size)
                take = min(count, free[b])
                fixed += [size] * take
                free[b] -= take
        rest = total - sum(fixed)
        low = sum(n * ranges[b][0] for b, n in enumerate(free))
        high = sum(n * ranges[b][1] for b, n in enumerate(free))
        if low <= rest <= high:
            break
    sizes = list(fixed)
    # Each free request starts at its bin's floor; the bytes left go in proportion to each bin's room.
    extra = rest - low
    room = high - low
    pending: list[tuple[int, int]] = []  # (index in sizes, room left)
    for b, n in enumerate(free):
        lo, hi = ranges[b]
        share = (hi - lo) * extra // room if room > 0 else 0
        share = max(0, min(hi - lo, share))
        for _ in range(n):
            pending.append((len(sizes), hi - lo - share))
            sizes.append(lo + share)
    left = total - sum(sizes)
    for i, more in pending:  # the remainder, a few bytes at a time
        if left <= 0:
            break
        add = min(more, left)
        sizes[i] += add
        left -= add
    rng.shuffle(sizes)
    return sizes


@dataclass
class Stream:
    """One rank's writes of a file, to lay out: sizes in time order, and how many of the breaks
    between two writes are consecutive (the next starts where the last ended) and how many go
    forward past a gap (sequential); the other breaks go backwards."""

    rank: int
    sizes: list[int]
    consecutive: int = 0
    forward: int = 0


def spread(total: int, capacity: Sequence[int]) -> list[int]:
    """`total` (at most sum(capacity)) split in proportion to `capacity`, none above its own."""
    room = sum(capacity)
    total = max(0, min(total, room))
    if room == 0:
        return [0] * len(capacity)
    share = [c * total // room for c in capacity]
    left = total - sum(share)
    order = sorted(range(len(capacity)), key=lambda i: -(capacity[i] * total % room))
    for i in order:
        if left == 0:
            break
        if share[i] < capacity[i]:
            share[i] += 1
            left -= 1
    return share


def set_breaks(streams: Sequence[Stream], consecutive: int, sequential: int, writes: int) -> None:
    """Gives the streams of one record Darshan's consecutive and sequential counts of its `writes`
    writes, scaled to the breaks the streams have (fewer when they were sampled or split)."""
    breaks = [max(0, len(s.sizes) - 1) for s in streams]
    had = max(1, writes - len(streams))
    # Laid out round robin, every rank but the first starts past byte 0: Darshan counts that
    # first write sequential, so it is not a break to make.
    firsts = len(streams) - 1
    consec = spread(round(consecutive * sum(breaks) / had), breaks)
    forward = spread(
        round(max(0, sequential - consecutive - firsts) * sum(breaks) / had),
        [b - c for b, c in zip(breaks, consec, strict=True)],
    )
    for s, c, f in zip(streams, consec, forward, strict=True):
        s.consecutive, s.forward = c, f


def _segments(stream: Stream) -> tuple[list[list[int]], int]:
    """Splits a stream's sizes into runs of consecutive writes; returns the runs and how many of
    the breaks between them go backwards (the others go forward past a gap)."""
    n = len(stream.sizes)
    breaks = max(0, n - 1 - stream.consecutive)
    back = max(0, breaks - stream.forward)
    cut = {round((k + 1) * n / (breaks + 1)) for k in range(breaks)}
    runs: list[list[int]] = [[]]
    for i, s in enumerate(stream.sizes):
        if i in cut and runs[-1]:
            runs.append([])
        runs[-1].append(s)
    return runs, min(back, len(runs) - 1)


def synthetic_layout(streams: Sequence[Stream], extent: int) -> list[tuple[int, int, int]]:
    """Offsets for every stream's writes, as [rank, offset, length] in each rank's time order.
    Each stream is cut into runs of consecutive writes; the runs of all streams are laid out round
    robin (run 0 of every rank, then run 1, ...: IOR's segmented layout), with a hole between two
    runs of one rank that would otherwise touch, so their break stays a gap; `b` backward breaks
    are made by writing a rank's first b + 1 runs in reverse. Holes share what `extent` leaves."""
    cut = [_segments(s) for s in streams]
    total = sum(sum(s.sizes) for s in streams)
    needs_hole = sum(max(0, len(runs) - 1) for runs, _ in cut) if len(streams) == 1 else 0
    hole = max(1, (extent - total) // needs_hole) if needs_hole else 0
    placed: list[list[tuple[int, int]]] = [[] for _ in streams]  # per stream: (offset, length) of each run
    offset = 0
    for j in range(max(len(runs) for runs, _ in cut)):
        for k, (runs, _back) in enumerate(cut):
            if j >= len(runs):
                continue
            if j > 0 and hole:
                offset += hole
            placed[k].append((offset, sum(runs[j])))
            offset += sum(runs[j])
    out: list[tuple[int, int, int]] = []
    for k, (runs, back) in enumerate(cut):
        order = list(range(back, -1, -1)) + list(range(back + 1, len(runs)))
        for j in order:
            at = placed[k][j][0]
            for size in runs[j]:
                out.append((streams[k].rank, at, size))
                at += size
    return out


# --- rewrites ------------------------------------------------------------------------------------


def split_rewrites(requests: Sequence[tuple[int, int, int]]) -> list[list[tuple[int, int, int]]]:
    """Splits time-ordered requests into layers whose requests are disjoint: each request goes to
    the first layer none of whose requests it overlaps (a rewrite lands in a later layer)."""
    layers: list[list[tuple[int, int, int]]] = []
    starts: list[list[int]] = []  # per layer: sorted starts, and the matching ends
    ends: list[list[int]] = []
    for req in requests:
        _rank, off, length = req
        for k in range(len(layers) + 1):
            if k == len(layers):
                layers.append([])
                starts.append([])
                ends.append([])
            i = bisect.bisect_right(starts[k], off)
            if (i > 0 and ends[k][i - 1] > off) or (i < len(starts[k]) and starts[k][i] < off + length):
                continue
            layers[k].append(req)
            starts[k].insert(i, off)
            ends[k].insert(i, off + length)
            break
    return layers


# --- the log -------------------------------------------------------------------------------------


@dataclass
class LoggedFile:
    name: str
    module: str  # POSIX or STDIO
    records: list[dict[str, Any]]  # the module's counter rows of this file (rank -1: shared)
    dxt: list[tuple[float, int, int, int]] = field(default_factory=list)  # writes: (start, rank, offset, length)
    dxt_reads: list[tuple[float, int, int, int]] = field(default_factory=list)
    mpiio: dict[str, int] = field(default_factory=dict)  # the MPI-IO module's call counts, DXT_MPIIO's requests

    def counter(self, name: str) -> float:
        return sum(float(r.get(name, 0) or 0) for r in self.records)


def _prefix(module: str) -> str:
    return "POSIX_" if module == "POSIX" else "STDIO_"


def log_figures(f: LoggedFile) -> dict[str, Any]:
    """The log's figures of one file (its records summed, as darshan-parser's totals are)."""
    p = _prefix(f.module)
    hist = [int(f.counter(f"POSIX_SIZE_WRITE_{b}")) for b in SIZE_BINS] if f.module == "POSIX" else None
    ranks = sorted({int(r["rank"]) for r in f.records})
    out: dict[str, Any] = {
        "module": f.module,
        "shared": ranks == [-1] or len(ranks) > 1,
        "record_ranks": ranks if len(ranks) <= 16 else f"{len(ranks)} ranks",
        "writes": int(f.counter(p + "WRITES")),
        "bytes": int(f.counter(p + "BYTES_WRITTEN")),
        "histogram": dict(zip(SIZE_BINS, hist, strict=True)) if hist is not None else None,
        "consecutive": int(f.counter("POSIX_CONSEC_WRITES")) if f.module == "POSIX" else None,
        "sequential": int(f.counter("POSIX_SEQ_WRITES")) if f.module == "POSIX" else None,
        "max_byte": int(max(float(r.get(p + "MAX_BYTE_WRITTEN", -1)) for r in f.records)),
        "write_time_s": f.counter(p + "F_WRITE_TIME"),
        "reads": int(f.counter(p + "READS")),
        "read_bytes": int(f.counter(p + "BYTES_READ")),
        "read_time_s": f.counter(p + "F_READ_TIME"),
        "meta_time_s": f.counter(p + "F_META_TIME"),
    }
    if f.dxt:
        out["dxt_writes"] = len(f.dxt)
    return out


def _rows(df_pair: dict[str, Any]) -> list[dict[str, Any]]:
    """One dict per record: the module's integer and floating-point counters with rank and id."""
    counters = df_pair["counters"].to_dict("records")
    fcounters = df_pair["fcounters"].to_dict("records")
    return [
        dict(c, **{k: v for k, v in fc.items() if k not in ("rank", "id")})
        for c, fc in zip(counters, fcounters, strict=True)
    ]


def read_log(path: Path) -> tuple[dict[str, Any], list[LoggedFile]]:
    """The job's metadata and every file it wrote (POSIX or STDIO), with DXT's write segments."""
    try:
        import darshan  # noqa: PLC0415  (the replay alone needs it)
    except ImportError as e:
        raise ReplayError(
            f"reading a Darshan log needs the darshan package (pydarshan): install the project's "
            f"python/requirements.txt ({e})"
        ) from e
    if not path.is_file():
        raise ReplayError(f"no such log: {path}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            report = darshan.DarshanReport(str(path), read_all=True)
        except Exception as e:  # pydarshan raises bare RuntimeErrors and others for a bad file
            raise ReplayError(f"{path}: not a readable Darshan log ({e})") from e
        names = report.name_records
        files: dict[tuple[str, int], LoggedFile] = {}
        for module in ("POSIX", "STDIO"):
            if module not in report.records:
                continue
            for row in _rows(report.records[module].to_df()):
                fid = int(row["id"])
                lf = files.setdefault((module, fid), LoggedFile(str(names.get(fid, fid)), module, []))
                lf.records.append(row)
        _read_mpiio(report, files)
        if "DXT_POSIX" in report.records:
            for rec in report.records["DXT_POSIX"].to_df():
                lf = files.get(("POSIX", int(rec["id"])))
                if lf is None:
                    continue
                for kind, into in (("write_segments", lf.dxt), ("read_segments", lf.dxt_reads)):
                    seg = rec[kind]
                    if len(seg) == 0:
                        continue
                    for off, length, start in zip(seg["offset"], seg["length"], seg["start_time"], strict=True):
                        into.append((float(start), int(rec["rank"]), int(off), int(length)))
    job = report.metadata["job"]
    exe = report.metadata.get("exe", "")
    meta = {
        "log": str(path),
        "jobid": int(job.get("jobid", 0)),
        "ranks": int(job["nprocs"]),
        "run_time_s": float(job.get("run_time", 0.0)),
        "exe": str(exe).split(" ")[0] if exe else "",
        "darshan_version": str(job.get("metadata", {}).get("lib_ver", "")),
    }
    written = [f for f in files.values() if f.counter(_prefix(f.module) + "BYTES_WRITTEN") > 0]
    return meta, written


MPIIO_COUNTERS = {
    "collective_writes": "MPIIO_COLL_WRITES",
    "independent_writes": "MPIIO_INDEP_WRITES",
    "split_writes": "MPIIO_SPLIT_WRITES",
    "nonblocking_writes": "MPIIO_NB_WRITES",
    "collective_reads": "MPIIO_COLL_READS",
    "independent_reads": "MPIIO_INDEP_READS",
    "split_reads": "MPIIO_SPLIT_READS",
    "nonblocking_reads": "MPIIO_NB_READS",
}


def _read_mpiio(report: Any, files: dict[tuple[str, int], LoggedFile]) -> None:
    """The MPI-IO structure of the POSIX files the job reached through MPI-IO (a file's record id
    is the same in every module): its calls by kind, and DXT_MPIIO's request counts."""
    for module, key in (("MPI-IO", "counters"), ("DXT_MPIIO", "dxt")):
        if module not in report.records:
            continue
        rows = _rows(report.records[module].to_df()) if key == "counters" else report.records[module].to_df()
        for row in rows:
            lf = files.get(("POSIX", int(row["id"])))
            if lf is None:
                continue
            if key == "counters":
                for name, counter in MPIIO_COUNTERS.items():
                    lf.mpiio[name] = lf.mpiio.get(name, 0) + int(row.get(counter, 0) or 0)
            else:
                lf.mpiio["dxt_writes"] = lf.mpiio.get("dxt_writes", 0) + len(row["write_segments"])
                lf.mpiio["dxt_reads"] = lf.mpiio.get("dxt_reads", 0) + len(row["read_segments"])


def mpiio_mode(files: Sequence[dict[str, Any]]) -> str | None:
    """How the job wrote through MPI-IO: "collective" when any write was collective, else
    "independent"; None when no file has MPI-IO writes."""
    calls = [f["mpiio"] for f in files if f.get("mpiio")]
    if not any(c.get("collective_writes", 0) + c.get("independent_writes", 0) for c in calls):
        return None
    return "collective" if any(c.get("collective_writes", 0) for c in calls) else "independent"


def _intervals(requests: Iterable[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The merged, sorted byte intervals [begin, end) the requests cover."""
    out: list[tuple[int, int]] = []
    for _r, off, n in sorted(requests, key=lambda q: q[1]):
        if out and off <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], off + n))
        else:
            out.append((off, off + n))
    return out


def clip_reads(reads: Iterable[tuple[int, int, int]], written: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """The parts of each read that fall on written bytes (`written`: sorted disjoint intervals),
    in the reads' order: a read over a hole becomes the reads of the written pieces around it."""
    starts = [b for b, _e in written]
    out = []
    for rank, off, n in reads:
        k = max(0, bisect.bisect_right(starts, off) - 1)
        while k < len(written) and written[k][0] < off + n:
            lo, hi = max(off, written[k][0]), min(off + n, written[k][1])
            if lo < hi:
                out.append((rank, lo, hi - lo))
            k += 1
    return out


def _variable_name(index: int, path: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path.rstrip("/")) or "file")
    return f"f{index}_{base[:48]}"


def _planned(f: LoggedFile) -> tuple[int, int]:
    """Bytes and requests the file's writes hold before any scaling."""
    if f.dxt:
        return sum(seg[3] for seg in f.dxt), len(f.dxt)
    p = _prefix(f.module)
    return int(f.counter(p + "BYTES_WRITTEN")), int(f.counter(p + "WRITES"))


def _scale_requests(reqs: list[tuple[int, int, int]], byte_factor: int, sample: int) -> list[tuple[int, int, int]]:
    """Every `sample`-th request of each rank, offsets and lengths divided by `byte_factor`
    (rounded down, so disjoint requests stay disjoint; a request shorter than the factor keeps one
    byte, and may then overlap its neighbour: split_rewrites separates them)."""
    if sample > 1:
        seen: dict[int, int] = {}
        kept = []
        for req in reqs:
            n = seen.get(req[0], 0)
            seen[req[0]] = n + 1
            if n % sample == 0:
                kept.append(req)
        reqs = kept
    if byte_factor > 1:
        reqs = [(r, o // byte_factor, max(1, n // byte_factor)) for r, o, n in reqs]
    return reqs


def file_requests(
    f: LoggedFile, ranks: int, seed: int, byte_factor: int = 1, sample: int = 1
) -> tuple[str, list[tuple[int, int, int]]]:
    """The origin and the requests ([rank, offset, length] in each rank's time order) of one file,
    scaled down: one request in `sample` per rank kept, bytes divided by `byte_factor`. DXT's
    requests are scaled as they are; a synthetic pattern is made of scaled sizes (so no request
    vanishes or overlaps another)."""
    if f.dxt:
        reqs = [(rank, off, length) for _t, rank, off, length in sorted(f.dxt, key=lambda s: s[0]) if length > 0]
        return "dxt", _scale_requests(reqs, byte_factor, sample)
    p = _prefix(f.module)
    rng = random.Random(f"{seed}:{f.name}")
    streams: list[Stream] = []
    for r in sorted(f.records, key=lambda r: int(r["rank"])):
        writes, total = int(r.get(p + "WRITES", 0)), int(r.get(p + "BYTES_WRITTEN", 0))
        if writes <= 0 or total <= 0:
            continue
        if f.module == "POSIX":
            hist = [int(r.get(f"POSIX_SIZE_WRITE_{b}", 0)) for b in SIZE_BINS]
            common = [
                (int(r.get(f"POSIX_ACCESS{i}_ACCESS", 0)), int(r.get(f"POSIX_ACCESS{i}_COUNT", 0))) for i in range(1, 5)
            ]
            consec, seq = int(r.get("POSIX_CONSEC_WRITES", 0)), int(r.get("POSIX_SEQ_WRITES", 0))
        else:  # a stream: no histogram; every rank appends
            hist, common, consec, seq = [], [], writes, writes
        # Sampled before it is made: one request in `sample`, the sizes' mix and mean kept.
        kept = -(-writes // sample)
        if kept < writes:
            hist = spread(kept, hist) if sum(hist) == writes else hist
            common = [(size, -(-count * kept // writes)) for size, count in common]
            total = max(kept, total * kept // writes)
        sizes = [max(1, s // byte_factor) for s in synthetic_sizes(kept, total, hist, common, rng)]
        rank = int(r["rank"])
        # A shared record sums every rank's writes: spread them over the job's ranks.
        share = 1 if rank >= 0 else min(ranks, kept)
        mine = [Stream(rank if rank >= 0 else k, sizes[k::share]) for k in range(share)]
        set_breaks(mine, consec, seq, writes)
        streams += mine
    extent = (int(max(float(r.get(p + "MAX_BYTE_WRITTEN", 0)) for r in f.records)) + 1) // byte_factor
    return "counters", synthetic_layout(streams, extent)


def convert(
    path: Path | str, max_bytes: int | None = None, max_requests: int | None = None, seed: int = 1
) -> dict[str, Any]:
    """The trace of a Darshan log (a dict, the JSON `strata replay` runs). `max_bytes` and
    `max_requests` scale a large job down: requests' offsets and lengths divided by a factor, and
    one request in so many kept per rank; the trace's "scale" says by how much."""
    meta, written = read_log(Path(path))
    if not written:
        raise ReplayError(f"{path}: the job wrote nothing through POSIX or STDIO (no write records to replay)")
    ranks = meta["ranks"]
    planned = [_planned(f) for f in written]
    total_bytes = sum(b for b, _n in planned)
    total_requests = sum(n for _b, n in planned)
    sample = math.ceil(total_requests / max_requests) if max_requests and total_requests > max_requests else 1
    kept_bytes = total_bytes // sample
    byte_factor = math.ceil(kept_bytes / max_bytes) if max_bytes and kept_bytes > max_bytes else 1
    per_file = [(f, *file_requests(f, ranks, seed, byte_factor, sample)) for f in written]
    variables: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    for index, (f, origin, reqs) in enumerate(per_file):
        if not reqs:
            continue
        name = _variable_name(index, f.name)
        layers = split_rewrites(reqs)
        held = []
        for k, layer in enumerate(layers):
            vname = name if k == 0 else f"{name}.rewrite{k}"
            variables.append({"name": vname, "requests": [list(q) for q in layer]})
            held.append(vname)
        fig = figures(reqs)
        reads: list[tuple[int, int, int]] = []
        if f.dxt and f.dxt_reads:  # the job's reads, scaled as its writes, on the bytes the trace writes
            in_order = [(r, o, n) for _t, r, o, n in sorted(f.dxt_reads) if n > 0]
            reads = clip_reads(_scale_requests(in_order, byte_factor, sample), _intervals(layers[0]))
            read_layers = split_rewrites(reads)
            if read_layers:
                variables[-len(layers)]["reads"] = [[list(q) for q in layer] for layer in read_layers]
        entry = {
            "name": f.name,
            "origin": origin,
            "variables": held,
            "rewrites": sum(len(x) for x in layers[1:]),
            "log": log_figures(f),
            "trace": dict(fig.to_json(), per_rank={str(k): v for k, v in sorted(per_rank(reqs).items())}),
        }
        if f.dxt and f.dxt_reads:  # DXT's reads of the file as logged, and what the replay reads of them
            entry["reads"] = [[rank, off, length] for _t, rank, off, length in sorted(f.dxt_reads)]
            entry["trace_reads"] = {
                "reads": len(reads),
                "bytes": sum(n for _r, _o, n in reads),
                "phases": len(split_rewrites(reads)),
                "per_rank": {str(k): v for k, v in sorted(per_rank(reads).items())},
            }
        if f.mpiio:
            entry["mpiio"] = dict(f.mpiio)
        files.append(entry)
    job = dict(meta)
    job["files"] = len(files)
    job["log_writes"] = sum(x["log"]["writes"] for x in files)
    job["log_bytes"] = sum(x["log"]["bytes"] for x in files)
    job["log_write_time_s"] = sum(x["log"]["write_time_s"] for x in files)
    job["trace_writes"] = sum(x["trace"]["writes"] for x in files)
    job["trace_bytes"] = sum(x["trace"]["bytes"] for x in files)
    job["origins"] = sorted({x["origin"] for x in files})
    job["log_reads"] = sum(x["log"]["reads"] for x in files)
    job["log_read_bytes"] = sum(x["log"]["read_bytes"] for x in files)
    job["trace_reads"] = sum(x.get("trace_reads", {}).get("reads", 0) for x in files)
    job["trace_read_bytes"] = sum(x.get("trace_reads", {}).get("bytes", 0) for x in files)
    trace: dict[str, Any] = {
        "format": TRACE_FORMAT,
        "version": TRACE_VERSION,
        "ranks": ranks,
        "job": job,
        "scale": {
            "bytes_divided_by": byte_factor,
            "one_request_in": sample,
            "max_bytes": max_bytes,
            "max_requests": max_requests,
        },
        "files": files,
        "variables": variables,
        "read_phases": max((len(v.get("reads", [])) for v in variables), default=0),
    }
    if mode := mpiio_mode(files):
        trace["mpiio_mode"] = mode
    return trace


def shipped_logs() -> list[Path]:
    """The Darshan logs the darshan wheel ships (its examples and test inputs)."""
    try:
        import darshan  # noqa: PLC0415
    except ImportError:
        return []
    return sorted(Path(darshan.__file__).parent.rglob("*.darshan"))


def summary(trace: dict[str, Any]) -> str:
    """A few lines for people: the log's figures beside the trace's, per file."""
    job, scale = trace["job"], trace["scale"]
    lines = [
        f"{job['log']}: job {job['jobid']}, {job['ranks']} ranks, {job['files']} file(s) written, "
        f"{len(trace['variables'])} variable(s); requests from {' and '.join(job['origins'])}"
    ]
    if scale["bytes_divided_by"] > 1 or scale["one_request_in"] > 1:
        parts = ([f"offsets and lengths / {scale['bytes_divided_by']}"] if scale["bytes_divided_by"] > 1 else []) + (
            [f"one request in {scale['one_request_in']} per rank"] if scale["one_request_in"] > 1 else []
        )
        lines.append("scaled down: " + ", ".join(parts))
    lines.append(
        f"{'file':40} {'origin':8} {'log writes':>10} {'trace':>8} {'log bytes':>12} {'trace':>12} " f"{'rewrites':>8}"
    )
    shown = sorted(trace["files"], key=lambda f: -f["log"]["bytes"])[:12]
    for f in shown:
        lines.append(
            f"{f['name'][-40:]:40} {f['origin']:8} {f['log']['writes']:>10} {f['trace']['writes']:>8} "
            f"{f['log']['bytes']:>12} {f['trace']['bytes']:>12} {f['rewrites']:>8}"
        )
    if len(trace["files"]) > len(shown):
        lines.append(f"... and {len(trace['files']) - len(shown)} smaller file(s) (--json lists every one)")
    return "\n".join(lines)


def _size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMGT]?)(i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64M)")
    return int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())


def parser(prog: str = "python -m strata.replay") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Turn a Darshan log into a Strata trace (JSON) that "
        "`strata replay` or `strata run trace --trace FILE` runs; see docs/replay.md.",
    )
    p.add_argument("log", type=Path, nargs="?", metavar="LOG.darshan")
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="TRACE.json",
        help="where to write the trace " "(default: print the summary only)",
    )
    p.add_argument(
        "--max-bytes",
        type=_size,
        metavar="SIZE",
        default=DEFAULT_MAX_BYTES,
        help="scale requests down so the trace writes at most SIZE bytes (offsets and lengths divided "
        "by one factor; 0: no limit; default 1G, as strata replay)",
    )
    p.add_argument(
        "--max-requests",
        type=int,
        metavar="N",
        default=DEFAULT_MAX_REQUESTS,
        help="keep one request in k per rank so at most about N remain (0: no limit; default 1000000)",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the synthetic patterns (default 1)")
    p.add_argument(
        "--json", action="store_true", help="print the trace's job, scale and files as JSON " "(without the requests)"
    )
    p.add_argument("--examples", action="store_true", help="list the logs the darshan package ships")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def main(argv: list[str] | None = None, prog: str = "python -m strata.replay") -> int:
    args = parser(prog).parse_args(argv)
    if args.examples:
        for log in shipped_logs():
            print(log)
        return 0
    if args.log is None:
        print(f"{prog}: error: give a LOG.darshan (or --examples)", file=sys.stderr)
        return 2
    try:
        trace = convert(args.log, args.max_bytes, args.max_requests, args.seed)
    except ReplayError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    if args.output:
        try:
            args.output.write_text(json.dumps(trace, separators=(",", ":")) + "\n")
        except OSError as e:
            print(f"{prog}: error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps({k: v for k, v in trace.items() if k != "variables"}, indent=2))
    elif not args.quiet:
        print(summary(trace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
