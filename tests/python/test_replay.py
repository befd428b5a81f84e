"""strata replay: Darshan logs turned into traces (python/strata/replay.py) and replayed through
backends by the trace kernel (src/kernels/trace), verified. Every log the darshan wheel ships that has
write records replays through posix, mpiio-coll and strata; for the logs with DXT records the
replay's per-rank requests and bytes are the log's, counted here from pydarshan directly.

Large jobs are scaled down to keep the suite fast (MAX_BYTES, MAX_REQUESTS below; the trace's
"scale" says by how much, docs/replay.md); the DXT logs are small and replay unscaled."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from conftest import run_ranks
from strata.replay import (
    SIZE_BINS,
    Figures,
    Stream,
    clip_reads,
    convert,
    figures,
    set_breaks,
    shipped_logs,
    size_bin,
    split_rewrites,
    synthetic_layout,
    synthetic_sizes,
)

darshan = pytest.importorskip("darshan", reason="pydarshan is in python/requirements.txt: run make setup")

MAX_BYTES = 4 << 20  # a replay writes at most this much ...
MAX_REQUESTS = 3000  # ... in about this many requests
RANK_CAP = 3  # the job's rank count, capped (oversubscribed): 3 folds 16, 512 and 2048 ranks unevenly
DXT_RANK_CAP = 4  # ior_hdf5_example's 4 ranks replay unfolded
REPLAY_BACKENDS = "posix,mpiio-coll,strata"


def _unique_logs() -> list[Path]:
    """The shipped logs, one of each content (the wheel ships some twice)."""
    seen: dict[str, Path] = {}
    for log in shipped_logs():
        seen.setdefault(hashlib.sha256(log.read_bytes()).hexdigest(), log)
    return sorted(seen.values())


def _has_dxt(log: Path) -> bool:
    """Whether the log holds DXT write records (its header says; the records are not read)."""
    return "DXT_POSIX" in darshan.DarshanReport(str(log), read_all=False).modules


def _dxt_per_rank(log: Path) -> dict[str, dict[int, list[int]]]:
    """Per file with DXT write records: {job rank: [requests, bytes]}, from pydarshan directly."""
    report = darshan.DarshanReport(str(log), read_all=True)
    out: dict[str, dict[int, list[int]]] = {}
    if "DXT_POSIX" not in report.records:
        return out
    for rec in report.records["DXT_POSIX"].to_df():
        seg = rec["write_segments"]
        if len(seg) == 0:
            continue
        row = out.setdefault(report.name_records[rec["id"]], {}).setdefault(int(rec["rank"]), [0, 0])
        row[0] += len(seg)
        row[1] += int(seg["length"].sum())
    return out


LOGS = _unique_logs()


def test_the_wheel_ships_logs_with_write_records() -> None:
    """The acceptance is over real logs: they are there, and some have DXT records."""
    assert len(LOGS) >= 10, LOGS
    assert sum(1 for log in LOGS if _has_dxt(log) and _dxt_per_rank(log)) >= 3


# --- the converter's pieces ------------------------------------------------------------------------


def test_synthetic_sizes_meet_the_histogram_and_the_bytes() -> None:
    hist = [3, 0, 5, 0, 2, 0, 0, 0, 0, 0]  # 3 tiny, 5 of 1K-10K, 2 of 100K-1M
    sizes = synthetic_sizes(10, 3 * 50 + 5 * 4096 + 2 * 262144, hist, [(4096, 5)], random.Random(1))
    assert sum(sizes) == 3 * 50 + 5 * 4096 + 2 * 262144
    got = [0] * len(SIZE_BINS)
    for s in sizes:
        got[size_bin(s)] += 1
    assert got == hist
    assert sizes.count(4096) == 5  # the common access size is used as it is


def test_layout_meets_consecutive_and_sequential_counts() -> None:
    """One rank, 20 writes: Darshan said 12 consecutive and 16 sequential (so 3 go backwards)."""
    stream = Stream(0, [100] * 20)
    set_breaks([stream], consecutive=12, sequential=16, writes=20)
    reqs = synthetic_layout([stream], extent=10000)
    f = figures(reqs)
    assert (f.writes, f.bytes, f.consecutive) == (20, 2000, 12)
    assert abs(f.sequential - 16) <= 1  # the first write's offset decides one
    assert len(split_rewrites(reqs)) == 1  # no write overlaps another


def test_figures_count_as_darshan_does() -> None:
    # rank 0: 0..99 (neither: starts at byte 0), 100.. (consecutive and sequential), 500.. (sequential),
    # 0.. again (neither); rank 1: 300.. (sequential).
    f = figures([(0, 0, 100), (0, 100, 50), (1, 300, 10), (0, 500, 10), (0, 0, 10)])
    assert isinstance(f, Figures)
    assert (f.writes, f.bytes, f.consecutive, f.sequential, f.max_byte) == (5, 180, 1, 3, 509)


def test_rewrites_go_to_layers_of_their_own() -> None:
    reqs = [(0, 0, 100), (1, 100, 100), (0, 50, 10), (2, 0, 8), (1, 300, 5)]
    layers = split_rewrites(reqs)
    assert sorted(q for layer in layers for q in layer) == sorted(reqs)  # every request kept
    assert layers[0] == [(0, 0, 100), (1, 100, 100), (1, 300, 5)]
    for layer in layers:  # each layer disjoint
        spans = sorted((o, o + n) for _r, o, n in layer)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_a_dxt_trace_holds_the_logs_requests_rank_by_rank() -> None:
    log = next(p for p in LOGS if p.name == "ior_hdf5_example.darshan")
    trace = convert(log)
    expected = _dxt_per_rank(log)
    dxt_files = [f for f in trace["files"] if f["origin"] == "dxt"]
    assert {f["name"] for f in dxt_files} == set(expected)
    for f in dxt_files:
        assert {int(k): v for k, v in f["trace"]["per_rank"].items()} == expected[f["name"]]
        assert f["trace"]["writes"] == f["log"]["writes"] and f["trace"]["bytes"] == f["log"]["bytes"]
    # The HDF5 file's superblock is written twice: the rewrite has a variable of its own.
    h5 = next(f for f in dxt_files if f["name"].endswith(".h5"))
    assert h5["rewrites"] == 1 and len(h5["variables"]) == 2
    assert len(h5["reads"]) == h5["log"]["reads"] == 36  # DXT's reads, kept in the trace


def test_reads_are_cut_to_the_bytes_the_trace_writes() -> None:
    written = [(0, 100), (200, 300)]
    reads = [(0, 0, 50), (1, 50, 200), (2, 100, 100), (3, 250, 100), (0, 400, 10)]
    assert clip_reads(reads, written) == [(0, 0, 50), (1, 50, 50), (1, 200, 50), (3, 250, 50)]


def _dxt_reads_per_rank(log: Path, name: str) -> dict[int, list[int]]:
    """{job rank: [read requests, bytes]} of one file, from pydarshan's DXT_POSIX records directly."""
    report = darshan.DarshanReport(str(log), read_all=True)
    out: dict[int, list[int]] = {}
    for rec in report.records["DXT_POSIX"].to_df():
        seg = rec["read_segments"]
        if report.name_records[rec["id"]] == name and len(seg):
            row = out.setdefault(int(rec["rank"]), [0, 0])
            row[0] += len(seg)
            row[1] += int(seg["length"].sum())
    return out


# --- replays ---------------------------------------------------------------------------------------


def _replay(
    trace_path: Path, np: int, tmp_path: Path, backends: str = REPLAY_BACKENDS, extra: list[str] | tuple[str, ...] = ()
) -> dict:
    out = run_ranks(
        np,
        [
            "replay",
            str(trace_path),
            "--backend",
            backends,
            "--output",
            str(tmp_path / "out"),
            "--verify",
            "--json",
            "-",
            *extra,
        ],
        timeout=120,
    )
    assert out.status == 0, out.stderr + out.stdout
    text = out.stdout[out.stdout.index("{") : out.stdout.rindex("}") + 1]
    return json.loads(text)


@pytest.mark.parametrize("log", LOGS, ids=[p.name[:40] for p in LOGS])
def test_every_shipped_log_replays_verified(log: Path, tmp_path: Path) -> None:
    dxt = _dxt_per_rank(log) if _has_dxt(log) else {}
    trace = convert(log) if dxt else convert(log, max_bytes=MAX_BYTES, max_requests=MAX_REQUESTS)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    np = min(trace["ranks"], DXT_RANK_CAP if dxt else RANK_CAP)
    # ior_hdf5_example's 36 reads in 12 phases are test_a_dxt_log_with_reads_and_mpiio_records_replays_them's.
    report = _replay(path, np, tmp_path, extra=["--no-reads"] if log.name == "ior_hdf5_example.darshan" else [])
    expected = [[0, 0] for _ in range(np)]  # per replay rank: the trace's requests and bytes, folded
    for f in trace["files"]:
        for rank, (n, b) in f["trace"]["per_rank"].items():
            expected[int(rank) % np][0] += n
            expected[int(rank) % np][1] += b
    assert [r["backend"] for r in report["replays"]] == REPLAY_BACKENDS.split(",")
    # The report sets the log's figures (from Darshan's counters) beside the trace's and the replays'.
    assert report["log_figures"]["writes"] == trace["job"]["log_writes"] > 0
    assert report["log_figures"]["bytes"] == trace["job"]["log_bytes"] > 0
    assert report["trace_figures"]["bytes"] == sum(b for _n, b in expected)
    for r in report["replays"]:
        assert r["verified"], r
        assert r["rank_bytes"] == [b for _n, b in expected], r["backend"]
        assert r["bytes"] == report["trace_figures"]["bytes"] and r["write_time_all_ranks_s"] > 0
    posix = report["replays"][0]
    assert posix["rank_requests"] == [n for n, _b in expected]  # one pwrite per traced request
    # The engine never issues more file requests than the trace, rank by rank summed (each rank
    # counts its own: the engine record's fs_requests is the phase's total).
    engine = next(r for r in report["replays"] if r["backend"] == "strata")
    assert 0 < sum(engine["rank_requests"]) <= sum(n for n, _b in expected), engine["rank_requests"]
    assert posix["rank_requests_equal_trace"] and posix["rank_bytes_equal_trace"]
    # The job's reads (DXT's, of the bytes the trace writes) read back from every backend's output, verified.
    if trace["read_phases"] and "reads" in posix:
        assert report["trace_figures"]["reads"] == trace["job"]["trace_reads"] > 0
        for r in report["replays"]:
            assert r["reads"]["verified"] and r["reads"]["phases"] == trace["read_phases"], r["backend"]
        assert posix["reads"]["rank_bytes_equal_trace"]
    # DXT logs replay unscaled: the replay's per-rank requests and bytes are the log's.
    if dxt:
        assert trace["scale"]["bytes_divided_by"] == 1 and trace["scale"]["one_request_in"] == 1
        for f in trace["files"]:
            if f["origin"] == "dxt":
                assert {int(k): v for k, v in f["trace"]["per_rank"].items()} == dxt[f["name"]]


def test_a_dxt_log_with_reads_and_mpiio_records_replays_them(tmp_path: Path) -> None:
    """ior_hdf5_example: IOR wrote and read an HDF5 file from 4 ranks through MPI-IO, independently
    (Darshan's MPI-IO module: 23 independent writes, 36 independent reads; DXT_MPIIO and DXT_POSIX
    traced both). The replay writes it through posix, mpiio-ind (the job's mode, chosen by default)
    and the engine, then reads the job's 36 read requests back from each, rank by rank, verified."""
    log = next(p for p in LOGS if p.name == "ior_hdf5_example.darshan")
    out = run_ranks(4, ["replay", str(log), "--output", str(tmp_path / "r"), "--verify", "--json", "-"], timeout=120)
    assert out.status == 0, out.stderr + out.stdout
    report = json.loads(out.stdout[out.stdout.index("{") : out.stdout.rindex("}") + 1])
    assert [r["backend"] for r in report["replays"]] == ["posix", "mpiio-ind", "strata"]
    h5 = next(f for f in report["files"] if f["name"].endswith(".h5"))
    expected = _dxt_reads_per_rank(log, h5["name"])
    assert sum(n for n, _b in expected.values()) == 36
    trace = json.loads((tmp_path / "r.trace.json").read_text())
    mpiio = next(f for f in trace["files"] if f["name"] == h5["name"])["mpiio"]
    assert (mpiio["independent_writes"], mpiio["collective_writes"], mpiio["independent_reads"]) == (23, 0, 36)
    assert trace["mpiio_mode"] == "independent"
    for r in report["replays"]:  # every rank reads its own requests' bytes, whatever the backend
        reads = r["reads"]
        assert reads["verified"] and reads["rank_bytes_equal_trace"], r["backend"]
        assert reads["rank_bytes"] == [expected[k][1] for k in range(4)], r["backend"]
        if r["backend"] != "strata":  # one call per read request (the engine makes its own)
            assert reads["requests"] == 36, r["backend"]
    assert any("36 independent read call(s)" in n and "replayed through mpiio-ind" in n for n in report["faithful"])
    # A read phase compares what it reads: over a zeroed output, the job's first read phase fails.
    written = tmp_path / "r.posix"
    written.write_bytes(bytes(written.stat().st_size))
    args = ["run", "trace", "--trace", str(tmp_path / "r.trace.json"), "--trace-reads", "0", "--read", "--verify"]
    bad = run_ranks(4, [*args, "--backend", "posix", "--output", str(written)])
    assert bad.status != 0 and "verification" in (bad.stdout + bad.stderr), bad.stdout + bad.stderr


def test_replay_converts_a_darshan_log_itself(tmp_path: Path) -> None:
    """strata replay LOG.darshan: rank 0 runs the converter, every rank replays, the table says how faithful."""
    log = next(p for p in LOGS if p.name == "sample-dxt-simple.darshan")
    out = run_ranks(
        2, ["replay", str(log), "--backend", "posix", "--output", str(tmp_path / "r.dat"), "--verify"], timeout=120
    )
    assert out.status == 0, out.stderr
    assert "faithful?" in out.stdout and "every rank issued the trace's requests and bytes" in out.stdout
    assert (tmp_path / "r.dat.trace.json").exists()
    trace = json.loads((tmp_path / "r.dat.trace.json").read_text())
    assert trace["job"]["log_writes"] == trace["job"]["trace_writes"] == 2


def test_replay_without_the_converter_fails_clearly_on_every_rank(tmp_path: Path) -> None:
    log = LOGS[0]
    out = run_ranks(
        2, ["replay", str(log), "--output", str(tmp_path / "r")], env={"STRATA_PYTHON": str(tmp_path / "no-python")}
    )
    assert set(out.statuses.values()) == {2}, out.statuses
    assert "cannot run the converter's Python" in out.stderr and "STRATA_PYTHON" in out.stderr


def test_file_per_process_gives_each_rank_its_requests_in_a_file(tmp_path: Path) -> None:
    """--file-per-process: replay rank r's requests (job ranks r, r + 2, ...) one after another in PATH.<r>."""
    trace = {
        "format": "strata-trace",
        "version": 1,
        "ranks": 3,
        "variables": [
            {"name": "f0", "requests": [[0, 0, 100], [1, 100, 30], [2, 130, 7]]},
            {"name": "f1", "requests": [[1, 0, 5], [1, 5, 5]]},
        ],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    out = run_ranks(
        2,
        [
            "replay",
            str(path),
            "--backend",
            "posix",
            "--output",
            str(tmp_path / "o"),
            "--verify",
            "--file-per-process",
            "--json",
            "-",
        ],
    )
    assert out.status == 0, out.stderr
    report = json.loads(out.stdout[out.stdout.index("{") : out.stdout.rindex("}") + 1])
    posix = report["replays"][0]
    assert posix["verified"] and posix["rank_requests"] == [2, 3] and posix["rank_bytes"] == [107, 40]
    assert (tmp_path / "o.00000000").stat().st_size == 107 and (tmp_path / "o.00000001").stat().st_size == 40


def test_a_trace_with_overlapping_requests_is_refused(tmp_path: Path) -> None:
    trace = {
        "format": "strata-trace",
        "version": 1,
        "ranks": 2,
        "variables": [{"name": "f0", "requests": [[0, 0, 100], [1, 64, 100]]}],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    out = run_ranks(2, ["run", "trace", "--trace", str(path), "--backend", "posix", "--output", str(tmp_path / "o")])
    assert set(out.statuses.values()) == {2}, out.statuses
    assert "overlaps" in out.stderr and "rank 1" in out.stderr
