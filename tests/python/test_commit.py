"""Crash-consistent commit of engine outputs (src/engine/commit.hpp) and `strata verify`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import test_tiers
from conftest import BASE_ENV, MPI, STRATA, launch, run_ranks

CHUNK = 4096  # strata_checksum_chunk: small chunks, so a mismatch names a small range
ARRAY = ["run", "array1d", "--dist", "uniform", "--size", "40K", "--output", "c.dat"]


def write(
    tmp_path: Path, np: int, args: list[str], hints: str = f"strata_checksum_chunk={CHUNK}", seed: int = 1
) -> None:
    out = run_ranks(np, [*args, "--backend", "strata", "--seed", str(seed), "--hints", hints, "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr


def verify(tmp_path: Path, np: int, target: str = "c.dat", *extra: str) -> tuple[int, dict]:
    out = run_ranks(np, ["verify", target, "--json", *extra], cwd=tmp_path, timeout=60)
    start = out.stdout.index("{")
    end = out.stdout.rindex("}") + 1
    return out.status, json.loads(out.stdout[start:end])


def test_committed_output_verifies_on_any_rank_count(tmp_path: Path) -> None:
    write(tmp_path, 3, ARRAY)
    assert not list(tmp_path.glob("*.strata-partial")) and not (tmp_path / "c.dat.strata-commit.json").exists()
    index = json.loads((tmp_path / "c.dat.strata-index.json").read_text())
    assert index["version"] == 3 and index["checksum"] == {"algorithm": "xxh3-64", "chunk_bytes": CHUNK}
    size = (tmp_path / "c.dat").stat().st_size
    assert index["files"][0]["size"] == size
    # Version 3: the ranges the writers hashed in memory, sorted, disjoint, none crossing a chunk
    # boundary; array1d declares every byte, so they cover the file exactly.
    ranges = index["files"][0]["xxh3_ranges"]
    at = 0
    for offset, length, digest in ranges:
        assert offset == at and length > 0 and len(digest) == 16
        assert offset // CHUNK == (offset + length - 1) // CHUNK
        at = offset + length
    assert at == size
    for np in (1, 2, 4):
        status, report = verify(tmp_path, np)
        assert status == 0 and report["ok"] is True and report["problems"] == []
        assert report["files"] == [{"path": "c.dat", "bytes": size, "status": "ok"}]
    # The table for people says the same.
    out = run_ranks(2, ["verify", "c.dat"], cwd=tmp_path)
    assert out.status == 0 and "c.dat: OK" in out.stdout


def test_flipped_byte_is_reported_with_its_range(tmp_path: Path) -> None:
    write(tmp_path, 2, ARRAY)
    data = bytearray((tmp_path / "c.dat").read_bytes())
    data[3 * CHUNK + 100] ^= 0x01
    (tmp_path / "c.dat").write_bytes(bytes(data))
    status, report = verify(tmp_path, 3)
    assert status == 1 and report["ok"] is False
    assert [(p["kind"], p["begin"], p["end"]) for p in report["problems"]] == [("checksum", 3 * CHUNK, 4 * CHUNK)]
    out = run_ranks(1, ["verify", "c.dat"], cwd=tmp_path)
    assert out.status == 1 and f"bytes [{3 * CHUNK}, {4 * CHUNK}) differ" in out.stdout


def test_truncated_and_missing_files_are_reported(tmp_path: Path) -> None:
    write(tmp_path, 2, ARRAY)
    size = (tmp_path / "c.dat").stat().st_size
    os.truncate(tmp_path / "c.dat", size - 10)
    status, report = verify(tmp_path, 2)
    assert status == 1 and report["problems"][0]["kind"] == "size"
    assert f"short: {size - 10} bytes, the index says {size}" in report["problems"][0]["message"]
    (tmp_path / "c.dat").unlink()
    status, report = verify(tmp_path, 1)
    assert status == 1 and report["problems"][0]["kind"] == "missing"
    (tmp_path / "c.dat.strata-index.json").unlink()
    status, report = verify(tmp_path, 1)
    assert status == 1 and report["problems"][0]["kind"] == "index"


def test_subfiled_output_commits_and_verifies(tmp_path: Path) -> None:
    args = ["run", "blocks", "--vars", "2", "--shape", "40x30x8", "--tiles-per-rank", "2", "--output", "ck"]
    write(tmp_path, 4, args, hints=f"strata_subfiling=aggregator,strata_aggregators=3,strata_checksum_chunk={CHUNK}")
    subfiles = sorted(p.name for p in tmp_path.glob("ck.subfile.*"))
    assert subfiles == ["ck.subfile.00000", "ck.subfile.00001", "ck.subfile.00002"]
    status, report = verify(tmp_path, 2, "ck")
    assert status == 0 and [f["path"] for f in report["files"]] == subfiles
    # Read back through the index by another rank count.
    out = run_ranks(3, [*args, "--backend", "strata", "--seed", "1", "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    # A rewrite as one shared file replaces the subfiles: the old ones go once the new index is in.
    write(tmp_path, 2, args)
    assert not list(tmp_path.glob("ck.subfile.*")) and verify(tmp_path, 1, "ck")[0] == 0
    sub = tmp_path / "ck"
    data = bytearray(sub.read_bytes())
    data[-1] ^= 0xFF
    sub.write_bytes(bytes(data))
    status, report = verify(tmp_path, 2, "ck")
    assert status == 1 and report["problems"][0]["kind"] == "checksum"
    assert report["problems"][0]["end"] == len(data)


def test_interrupted_commit_rolls_forward(tmp_path: Path) -> None:
    """A commit cut after its intent record: its data is whole on disk, so it is the output verify
    checks (where its files are now) and notes; --complete (or a read) finishes it."""
    write(tmp_path, 2, ARRAY, seed=1)
    old = (tmp_path / "c.dat").read_bytes()
    write(tmp_path, 2, ARRAY, seed=2)
    new = (tmp_path / "c.dat").read_bytes()
    assert old != new
    # Rebuild the state between the intent record and the renames: new data as the partial
    # file, the new index as the record, the old data and its index in place.
    (tmp_path / "c.dat.strata-partial").write_bytes(new)
    os.replace(tmp_path / "c.dat.strata-index.json", tmp_path / "c.dat.strata-commit.json")
    (tmp_path / "c.dat").write_bytes(old)
    status, report = verify(tmp_path, 1)
    assert status == 0 and report["interrupted_commit"].endswith("c.dat.strata-commit.json"), report
    assert [f["path"] for f in report["files"]] == ["c.dat.strata-partial"] and report["uncommitted"] == []
    out = run_ranks(1, ["verify", "c.dat"], cwd=tmp_path)
    assert out.status == 0 and "a commit was interrupted after its data was written" in out.stdout
    # The commit's own data damaged: verify finds it where it is.
    damaged = bytearray(new)
    damaged[5] ^= 0x01
    (tmp_path / "c.dat.strata-partial").write_bytes(bytes(damaged))
    status, report = verify(tmp_path, 2)
    assert status == 1 and report["problems"][0]["kind"] == "checksum", report
    (tmp_path / "c.dat.strata-partial").write_bytes(new)
    status, report = verify(tmp_path, 2, "c.dat", "--complete")
    assert status == 0 and report["completed_commit"] is True
    assert (tmp_path / "c.dat").read_bytes() == new and not (tmp_path / "c.dat.strata-commit.json").exists()


def test_commit_cut_between_moving_the_old_file_aside_and_renaming_the_new_rolls_forward(tmp_path: Path) -> None:
    """The commit never renames onto an existing name (ext4 would flush the new file inside
    rename()): the old file goes aside first. A crash right then leaves no file under the name;
    a read completes the commit, and a crash after the data's rename must not move it again."""
    write(tmp_path, 2, ARRAY, seed=1)
    old = (tmp_path / "c.dat").read_bytes()
    old_index = (tmp_path / "c.dat.strata-index.json").read_text()
    write(tmp_path, 2, ARRAY, seed=2)
    new = (tmp_path / "c.dat").read_bytes()
    # State 1: intent written, old data aside, new data still partial.
    os.replace(tmp_path / "c.dat", tmp_path / "c.dat.strata-partial")
    os.replace(tmp_path / "c.dat.strata-index.json", tmp_path / "c.dat.strata-commit.json")
    (tmp_path / "c.dat.strata-retired").write_bytes(old)
    (tmp_path / "c.dat.strata-index.json").write_text(old_index)
    out = run_ranks(2, [*ARRAY, "--backend", "strata", "--seed", "2", "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert (tmp_path / "c.dat").read_bytes() == new and not (tmp_path / "c.dat.strata-commit.json").exists()
    # State 2: data renamed, the index not yet: the data stays where it is.
    os.replace(tmp_path / "c.dat.strata-index.json", tmp_path / "c.dat.strata-commit.json")
    (tmp_path / "c.dat.strata-index.json").write_text(old_index)
    status, report = verify(tmp_path, 2, "c.dat", "--complete")
    assert status == 0 and report["completed_commit"] is True, report
    assert (tmp_path / "c.dat").read_bytes() == new


def test_intent_record_cut_short_is_dropped_not_rolled_forward(tmp_path: Path) -> None:
    """A crash while the intent record was written: no rename happened, the old output stands."""
    write(tmp_path, 2, ARRAY, seed=1)
    old = (tmp_path / "c.dat").read_bytes()
    (tmp_path / "c.dat.strata-partial").write_bytes(b"\x00" * len(old))
    (tmp_path / "c.dat.strata-commit.json").write_text('{"format": "strata-index", "vers')
    status, report = verify(tmp_path, 2)
    assert status == 0 and report["uncommitted_write"] is True, report
    # A read sees the old output and drops the record; the next write removes the partial file.
    out = run_ranks(2, [*ARRAY, "--backend", "strata", "--seed", "1", "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert not (tmp_path / "c.dat.strata-commit.json").exists() and (tmp_path / "c.dat").read_bytes() == old
    write(tmp_path, 2, ARRAY, seed=3)
    assert not list(tmp_path.glob("c.dat.strata-*partial")) and verify(tmp_path, 1)[0] == 0


def test_rewrites_by_one_engine_recycle_the_old_file(tmp_path: Path) -> None:
    """Repetitions of one run write the same output: the old file becomes the next partial file,
    so the folder holds the output and at most one retired copy, and the result verifies."""
    blocks = ["run", "blocks", "--vars", "3", "--shape", "40x30x16", "--tiles-per-rank", "2", "--output", "r.dat"]
    out = run_ranks(3, [*blocks, "--backend", "strata", "--repetitions", "4", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.dat", "r.dat.strata-index.json"]
    assert verify(tmp_path, 2, "r.dat")[0] == 0


# test_tiers' machine with write figures whose new pages cost ten times their rewrite.
MACHINE_DEAR_NEW_PAGES = (
    test_tiers.GOOD
    + """[io]
measured = true
probe_ranks = 2
write_bytes = [4096, 65536, 1048576, 4194304]
write_us = [40, 400, 4000, 16000]
rewrite_us = [4, 40, 400, 1600]
"""
)


def ior_writes_on_dear_new_pages(
    tmp_path: Path, repetitions: int, history: str = "off", machine: str = MACHINE_DEAR_NEW_PAGES
) -> list[dict]:
    """IOR's -b 1M -t 64K -s 4 at 2 ranks, `repetitions` writes of a new output in one launch, on
    `machine` (earlier jobs' ratios from the file `history`, or none): each write's engine
    record."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "m.toml").write_text(machine)
    ior = ["run", "ior", "--block-size", "1M", "--transfer-size", "64K", "--segments", "4", "--output", "o.dat"]
    out = run_ranks(
        2,
        [*ior, "--backend", "strata", "--repetitions", str(repetitions), "--json", "r.json", "--quiet"],
        env={"STRATA_MACHINE": "m.toml", "STRATA_WRITE_HISTORY": history},
        cwd=tmp_path,
    )
    assert out.status == 0, out.stderr
    return [r["write"]["engine"] for r in json.loads((tmp_path / "r.json").read_text())["repetitions"]]


def test_a_write_into_the_recycled_file_is_predicted_as_one(tmp_path: Path) -> None:
    """The first two writes of an output go to new pages, the later ones rewrite the recycled old
    file: each is predicted by its own curve (io.write_us, io.rewrite_us), the reused plan's
    prediction priced again for the file it writes."""
    engines = ior_writes_on_dear_new_pages(tmp_path, 4)
    predicted = [e["model_s"] for e in engines]  # the model's own (before the job's calibration, below)
    assert [e["plan_reused"] for e in engines] == [False, True, True, True]
    assert [e["strategy"] for e in engines] == ["direct"] * 4, engines
    # Eight 1 MiB requests into one file's lock: 8 x 4 ms new, 8 x 0.4 ms rewritten.
    assert abs(predicted[2] - predicted[3]) < 1e-3 and predicted[1] - predicted[2] > 0.02, predicted
    assert predicted[2] < 0.01 < 0.03 < predicted[1], predicted


def test_a_write_is_predicted_at_the_jobs_measured_ratio(tmp_path: Path) -> None:
    """A write and its close are predicted at the model's price times the median of this job's
    last (up to three) measured / priced ratios for writes into the same kind of file, new or
    recycled (of two, their mean; engine/plan/write_calibration.hpp). The machine file prices new
    pages at ten times their rewrite, far dearer than this machine: the second write's
    prediction follows the first write's measurement, not the figures."""
    engines = ior_writes_on_dear_new_pages(tmp_path, 6)
    for e in engines:  # the plan's part is the model's; the write's at the ratio
        plan_part = e["model_s"] - e["model_write_s"]
        assert e["predicted_s"] == pytest.approx(plan_part + e["model_write_s"] * e["calibration"], rel=1e-9), e
    ratios = [min(max(e["write_close_s"] / e["model_write_s"], 0.1), 10.0) for e in engines]
    # Writes 1-2 into new pages, 3-6 into the recycled file: each kind its own ratios.
    expected = [1.0, ratios[0], 1.0, ratios[2], sum(ratios[2:4]) / 2, sorted(ratios[2:5])[1]]
    assert [e["calibration"] for e in engines] == pytest.approx(expected, rel=1e-9), (engines, ratios)
    assert engines[1]["predicted_s"] < engines[1]["model_s"] / 2, engines[1]


def test_a_launchs_first_writes_start_from_the_last_launchs_ratios(tmp_path: Path) -> None:
    """The engine keeps each plan's last ratios for each kind of file in a small file
    (STRATA_WRITE_HISTORY; engine/write_history.hpp): the next launch of the same writes on the
    same figures predicts its first write of each kind at them, then goes on with its own."""
    history = tmp_path / "writes.json"
    first = ior_writes_on_dear_new_pages(tmp_path / "1", 4, str(history))
    assert [e["calibration"] for e in first][::2] == [1.0, 1.0], first  # no earlier job
    kept = json.loads(history.read_text())
    assert kept["strata_write_history"] == 1 and len(kept["records"]) == 2, kept
    ratios = [min(max(e["write_close_s"] / e["model_write_s"], 0.1), 10.0) for e in first]
    by_kind = {r["recycled"]: r["ratios"] for r in kept["records"]}
    assert by_kind == {False: pytest.approx(ratios[:2], rel=1e-9), True: pytest.approx(ratios[2:], rel=1e-9)}, kept
    second = ior_writes_on_dear_new_pages(tmp_path / "2", 4, str(history))
    again = [min(max(e["write_close_s"] / e["model_write_s"], 0.1), 10.0) for e in second]
    expected = [
        sum(ratios[:2]) / 2,  # the last launch's two new-page writes
        sorted([*ratios[:2], again[0]])[1],
        sum(ratios[2:]) / 2,  # its two recycled writes
        sorted([*ratios[2:], again[2]])[1],
    ]
    assert [e["calibration"] for e in second] == pytest.approx(expected, rel=1e-9), (second, ratios, again)
    # Other figures (a probe again): records of their own, none to start from.
    other = MACHINE_DEAR_NEW_PAGES.replace("rewrite_us = [4, 40, 400, 1600]", "rewrite_us = [4, 40, 400, 1700]")
    third = ior_writes_on_dear_new_pages(tmp_path / "3", 4, str(history), other)
    assert [e["calibration"] for e in third][::2] == [1.0, 1.0], third
    assert len(json.loads(history.read_text())["records"]) == 4


def test_bad_commit_hint_is_a_usage_error(tmp_path: Path) -> None:
    out = run_ranks(2, [*ARRAY, "--backend", "strata", "--hints", "strata_commit=maybe"], cwd=tmp_path)
    assert out.status == 2 and "strata_commit=maybe must be sync, nosync or in-place" in out.stderr


def test_in_place_write_keeps_checksums_of_what_it_wrote(tmp_path: Path) -> None:
    write(tmp_path, 2, ARRAY, hints="strata_commit=in-place")
    index = json.loads((tmp_path / "c.dat.strata-index.json").read_text())
    # Not committed (no partial file, no commit record), but the ranges written have checksums;
    # the bytes between them hold whatever the file held, which the report says it did not check.
    assert index["written_in_place"] and index["files"][0]["xxh3_ranges"] and "size" not in index["files"][0]
    status, report = verify(tmp_path, 1)
    assert status == 0 and report["ok"] and "between the ranges written" in report["not_checked"][0], report


def kill_one_rank_mid_write(tmp_path: Path, args: list[str], victim: int = 1, np: int = 2) -> None:
    """Starts a write on NP ranks and SIGKILLs rank VICTIM once its partial file has data.
    (With the fault-injection shim, STRATA_FAULT="op=write,nth=N,action=kill,rank=1" does the same.)"""
    pids = tmp_path / "pids"
    pids.mkdir()
    wrapper = f'echo $$ > {pids}/${MPI.flavour.rank_variable}; exec "$0" "$@"'
    cmd = launch(np, ["bash", "-c", wrapper, str(STRATA), *args])
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=BASE_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    partial = tmp_path / "c.dat.strata-partial"
    deadline = time.monotonic() + 60
    killed = False
    while time.monotonic() < deadline and proc.poll() is None:
        if partial.exists() and partial.stat().st_size > 0 and (pids / str(victim)).exists():
            os.kill(int((pids / str(victim)).read_text()), signal.SIGKILL)
            killed = True
            break
        time.sleep(0.002)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    assert killed, "the write finished before a rank could be killed: make it larger"
    assert proc.returncode != 0


def test_sigkill_mid_write_keeps_the_committed_output(tmp_path: Path) -> None:
    write(tmp_path, 2, ARRAY, seed=1)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    # A large, slow write (4 KiB aggregation rounds), killed on rank 1 while its data goes out.
    big = [
        "run",
        "array1d",
        "--dist",
        "uniform",
        "--size",
        "48M",
        "--output",
        "c.dat",
        "--backend",
        "strata",
        "--seed",
        "2",
        "--hints",
        "cb_buffer_size=4K,strata_buffers=1,strata_direct_threshold=0",
    ]
    kill_one_rank_mid_write(tmp_path, big)
    # The committed output and its index are untouched, and verify passes on them.
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name in before}
    assert after == before
    status, report = verify(tmp_path, 2)
    assert status == 0 and report["ok"] is True
    # The killed write is recognisably partial.
    assert report["uncommitted_write"] is True and report["uncommitted"] == ["./c.dat.strata-partial"]
    out = run_ranks(1, ["verify", "c.dat"], cwd=tmp_path)
    assert out.status == 0 and "uncommitted write ./c.dat.strata-partial" in out.stdout
    # The old output still reads back and verifies; the next write replaces the partial file.
    out = run_ranks(3, [*ARRAY, "--backend", "strata", "--seed", "1", "--read", "--verify", "--quiet"], cwd=tmp_path)
    assert out.status == 0, out.stderr
    write(tmp_path, 2, ARRAY, seed=3)
    assert not (tmp_path / "c.dat.strata-partial").exists() and verify(tmp_path, 1)[0] == 0
