"""What a new IOR or E3SM-IO user meets first (issue 33): `strata verify` right about every kind of
output the engine writes (a flipped byte and a truncation found in each), errors before the work
(paths, "did you mean"), IOR's measurement options with IOR's meanings, and `strata info`'s memory
figure against the operating system's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import built_backends, requires_backend, run_ranks

USAGE, RUNTIME = 2, 1
IOR = ["run", "ior", "-b", "16K", "-t", "4K", "-s", "2"]


def strata_ok(np: int, args: list[str], **kw):
    outcome = run_ranks(np, args, **kw)
    assert outcome.status == 0, outcome.stdout + outcome.stderr
    return outcome


# ---- strata verify: every kind of output -------------------------------------------------------

# (name, extra run arguments, file holding the data) for each kind the engine writes.
OUTPUT_KINDS = [
    ("committed raw", [], "out"),
    ("in place", ["--hints", "strata_commit=in-place"], "out"),
    ("subfiles", ["--hints", "strata_subfiling=1"], None),
    ("hdf5 container", ["--container", "hdf5"], "out"),
]


def write_output(tmp_path: Path, extra: list[str]) -> Path:
    out = tmp_path / "out"
    strata_ok(2, [*IOR, "--backend", "strata", "--output", str(out), "--quiet", *extra])
    return out


def data_file(out: Path, name: str | None) -> Path:
    """The file of the output whose bytes are damaged: the output itself, or its largest subfile."""
    if name:
        return out.parent / name
    index = json.loads(Path(f"{out}.strata-index.json").read_text())
    files = [out.parent / f["path"] for f in index["files"]]
    return max(files, key=lambda p: p.stat().st_size)


@requires_backend("strata")
@pytest.mark.parametrize("kind, extra, name", OUTPUT_KINDS, ids=[k[0] for k in OUTPUT_KINDS])
def test_verify_passes_a_good_output_and_names_damage(
    tmp_path: Path, kind: str, extra: list[str], name: str | None
) -> None:
    out = write_output(tmp_path, extra)
    good = run_ranks(2, ["verify", str(out), "--json"])
    assert good.status == 0, good.stdout + good.stderr
    report = json.loads(good.stdout[good.stdout.index("{") : good.stdout.rindex("}") + 1])
    assert report["ok"] and report["checked"], report
    if kind in ("in place", "hdf5 container"):  # the bytes between the ranges written: said, not failed
        assert any("between the ranges written" in n for n in report["not_checked"]), report
    else:
        assert not report["not_checked"], report
    if kind == "hdf5 container":
        assert any("HDF5 structure" in c for c in report["checked"]), report

    target = data_file(out, name)
    size = target.stat().st_size
    # A flipped data byte: the checksums find it, in every kind (in place, the ranges written).
    raw = bytearray(target.read_bytes())
    raw[size // 2] ^= 0x40
    target.write_bytes(bytes(raw))
    flipped = run_ranks(2, ["verify", str(out)])
    assert flipped.status == RUNTIME and "checksum" in flipped.stdout and str(target) in flipped.stdout, flipped.stdout
    raw[size // 2] ^= 0x40
    target.write_bytes(bytes(raw))
    if kind == "hdf5 container":  # a flipped byte of its signature, then of its superblock's sizes
        for at in (1, 13):
            raw = bytearray(target.read_bytes())
            raw[at] ^= 0x40
            target.write_bytes(bytes(raw))
            flipped = run_ranks(2, ["verify", str(out)])
            assert flipped.status == RUNTIME and "structure" in flipped.stdout, (at, flipped.stdout)
            raw[at] ^= 0x40
            target.write_bytes(bytes(raw))
    assert run_ranks(1, ["verify", str(out)]).status == 0
    os.truncate(target, size - 4096)
    short = run_ranks(2, ["verify", str(out)])
    assert short.status == RUNTIME and "short" in short.stdout and str(target) in short.stdout, short.stdout


# ---- strata verify: every backend's output, from the run record beside it ---------------------

# (backend, extra run arguments): the outputs `make demo` and the README's commands write.
RECORDED_KINDS = [
    ("posix", []),
    ("posix", ["-F"]),
    ("mpiio-coll", []),
    ("mpiio-ind", []),
    ("hdf5", []),
    ("pnetcdf", []),
]


def verify_report(np: int, path: Path) -> tuple[int, dict]:
    outcome = run_ranks(np, ["verify", str(path), "--json"])
    text = outcome.stdout
    return outcome.status, json.loads(text[text.index("{") : text.rindex("}") + 1])


@pytest.mark.parametrize(
    "backend, extra", RECORDED_KINDS, ids=[b + (" " + " ".join(e) if e else "") for b, e in RECORDED_KINDS]
)
def test_verify_checks_any_backends_output_against_its_run_record(
    tmp_path: Path, backend: str, extra: list[str]
) -> None:
    if backend not in built_backends():
        pytest.skip(f"backend {backend} is not built in")
    out = tmp_path / "o"
    strata_ok(2, [*IOR, "--backend", backend, "--output", str(out), "--quiet", *extra])
    assert Path(f"{out}.strata-run.json").exists()
    # On 1 rank: a shared file is read back whole; files per process only by as many ranks as wrote them.
    status, report = verify_report(1, out)
    assert status == 0 and report["ok"], report
    assert any("at the size it wrote" in c for c in report["checked"]), report
    if extra == ["-F"]:
        assert any("mpirun -np 2 strata verify" in n for n in report["not_checked"]), report
        status, report = verify_report(2, out)
        assert status == 0, report
    assert any("compared with the kernel's generator" in c for c in report["checked"]), report
    if backend in ("hdf5", "pnetcdf"):
        assert any("structure" in c for c in report["checked"]), report
        assert report["not_checked"], report  # the container's metadata: said, not failed


@pytest.mark.parametrize("backend", ["posix", "hdf5", "pnetcdf"])
def test_verify_names_a_flipped_data_byte_and_a_truncation_without_an_index(tmp_path: Path, backend: str) -> None:
    if backend not in built_backends():
        pytest.skip(f"backend {backend} is not built in")
    out = tmp_path / "o"
    strata_ok(2, [*IOR, "--backend", backend, "--output", str(out), "--quiet"])
    raw = bytearray(out.read_bytes())
    size = len(raw)
    at = size - 5000  # in the data: a container's header comes first
    raw[at] ^= 0x40
    out.write_bytes(bytes(raw))
    flipped = run_ranks(2, ["verify", str(out)])
    assert flipped.status == RUNTIME, flipped.stdout + flipped.stderr
    assert "data" in flipped.stdout and 'variable "ior" element' in flipped.stdout, flipped.stdout
    raw[at] ^= 0x40
    out.write_bytes(bytes(raw))
    assert run_ranks(1, ["verify", str(out)]).status == 0
    if backend == "hdf5":  # its signature damaged: HDF5 cannot open it
        raw[1] ^= 0x40
        out.write_bytes(bytes(raw))
        broken = run_ranks(1, ["verify", str(out)])
        assert broken.status == RUNTIME and "structure" in broken.stdout, broken.stdout
        raw[1] ^= 0x40
        out.write_bytes(bytes(raw))
    os.truncate(out, size - 4096)
    short = run_ranks(1, ["verify", str(out)])
    assert short.status == RUNTIME, short.stdout
    assert f"short (truncated): {size - 4096} bytes, the run wrote {size}" in short.stdout, short.stdout


def test_verify_reads_files_per_node_back_on_the_nodes_that_wrote_them(tmp_path: Path) -> None:
    out = tmp_path / "n"
    args = [*IOR, "--backend", "posix", "--file-per-node", "--output", str(out), "--quiet"]
    strata_ok(4, args, env={"STRATA_NODE_MAP": "0,1,1,1"})  # files of 32 and 96 KiB
    status, report = verify_report(4, out)  # no virtual nodes here: the record's map is used
    assert status == 0 and any("generator" in c for c in report["checked"]), report
    assert [f["bytes"] for f in report["files"]] == [32768, 98304], report


def test_verify_of_one_file_of_an_output_and_of_an_application_kernels_output(tmp_path: Path) -> None:
    # A checkpoint (PATH.step<N>) is checked with its run's record.
    strata_ok(2, ["run", "s3d", "--grid", "8x8x8", "--steps", "2", "--interval", "1", "--backend", "posix",
                  "--output", str(tmp_path / "s"), "--quiet"])  # fmt: skip
    status, report = verify_report(1, tmp_path / "s.step000001")
    assert status == 0 and len(report["files"]) == 2, report
    (tmp_path / "s.step000002").unlink()
    status, report = verify_report(1, tmp_path / "s.step000001")
    assert status == RUNTIME and report["problems"][0]["kind"] == "missing", report
    # An application kernel's files: sizes on any rank count, values by as many ranks as wrote them.
    strata_ok(2, ["run", "mslio", "--ccross", "1", "--subelements", "8", "--output", str(tmp_path / "m"), "--quiet"])
    status, report = verify_report(1, tmp_path / "m")
    assert status == 0 and any("mpirun -np 2" in n for n in report["not_checked"]), report
    status, report = verify_report(2, tmp_path / "m")
    assert status == 0 and any("generator" in c for c in report["checked"]), report
    # Neither an index nor a run record: nothing can be checked, which is a failure.
    (tmp_path / "stranger").write_bytes(b"x" * 100)
    outcome = run_ranks(1, ["verify", str(tmp_path / "stranger")])
    assert outcome.status == RUNTIME and "nothing can be checked" in outcome.stdout, outcome.stdout


# ---- errors before the work -----------------------------------------------------------------


def test_json_in_a_missing_folder_fails_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "data"
    outcome = run_ranks(
        2, [*IOR, "--backend", "posix", "--output", str(out), "--json", str(tmp_path / "no-such-folder" / "r.json")]
    )
    assert outcome.status == USAGE  # every rank
    assert "no-such-folder does not exist (nothing was written)" in outcome.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["info", "."],
        ["info", "--tiers"],
        ["plan", "ior", "-b", "16K", "-t", "4K", "-s", "2"],
        ["advise", "--fs", "lustre", "--osts", "4", "--nodes", "1", "--ppn", "2", "--block-size", "1M"],
        ["cost", "--loads", "1000,2000"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_json_of_info_plan_advise_cost_in_a_missing_folder_is_an_error_before_the_work(
    tmp_path: Path, args: list[str]
) -> None:
    outcome = run_ranks(2, [*args, "--json", str(tmp_path / "no-such-folder" / "x.json")])
    assert outcome.status == USAGE, outcome.stdout + outcome.stderr  # every rank agrees
    assert "no-such-folder does not exist (nothing was written)" in outcome.stderr, outcome.stderr
    printed = [line for line in outcome.stdout.splitlines() if not line.startswith("STRATA-RANK-EXIT")]
    assert printed == [], printed  # before the work: no table printed


def test_info_of_a_missing_path_is_an_error(tmp_path: Path) -> None:
    outcome = run_ranks(1, ["info", str(tmp_path / "nope")])
    assert outcome.status == USAGE and "does not exist" in outcome.stderr


@pytest.mark.parametrize(
    "args, suggestion",
    [
        (["run", "ior", "--backend", "posix", "--blocksize", "4K"], '"--block-size"'),
        (["run", "ior", "--backend", "posx"], '"posix"'),
        (["run", "iorr", "--backend", "posix"], '"ior"'),
        (["verfy", "x"], '"verify"'),
        (["verify", "x", "--jsn"], '"--json"'),
    ],
)
def test_unknown_names_suggest_the_nearest(args: list[str], suggestion: str) -> None:
    outcome = run_ranks(1, args)
    assert outcome.status == USAGE and f"did you mean {suggestion}?" in outcome.stderr, outcome.stderr


# ---- IOR's options --------------------------------------------------------------------------


def record(tmp_path: Path, np: int, args: list[str]) -> dict:
    path = tmp_path / "r.json"
    strata_ok(np, [*args, "--json", str(path), "--quiet"])
    return json.loads(path.read_text())


def test_short_options_mean_what_they_mean_in_ior(tmp_path: Path) -> None:
    r = record(tmp_path, 2, [*IOR, "-F", "--backend", "posix", "--output", str(tmp_path / "o"), "--verify"])
    assert r["params"]["block_size"] == 16384 and r["params"]["transfer_size"] == 4096
    assert r["params"]["segments"] == 2 and r["file_per_process"] and r["verified"]


def test_reorder_tasks_reads_back_another_ranks_part(tmp_path: Path) -> None:
    # array1d --dist random gives each rank a different share: the bytes each rank reads show whose.
    args = [
        "run",
        "array1d",
        "--dist",
        "random",
        "--size",
        "64K",
        "--backend",
        "posix",
        "--output",
        str(tmp_path / "o"),
        "--write",
        "--read",
        "--verify",
    ]
    r = record(tmp_path, 3, [*args, "--reorder-tasks", "1"])
    wrote, read = r["repetitions"][0]["write"]["rank_bytes"], r["repetitions"][0]["read"]["rank_bytes"]
    assert len(set(wrote)) > 1 and read == wrote[1:] + wrote[:1] and r["verified"]
    assert r["params"]["read_back_from"] == "rank + 1"
    # IOR's -C on one node: the next rank.
    c = record(tmp_path, 3, [*args, "-C"])
    assert c["params"]["read_back_from"] == "rank + 1"
    # Reading alone an existing file (IOR -r -C): each rank reads what rank r+2 wrote.
    alone = record(tmp_path, 3, [a for a in args if a != "--write"] + ["--reorder-tasks", "2"])
    assert alone["repetitions"][0]["read"]["rank_bytes"] == wrote[2:] + wrote[:2] and alone["verified"]


def test_random_offsets_move_every_transfer_once(tmp_path: Path) -> None:
    r = record(tmp_path, 2, [*IOR, "-z", "--backend", "posix", "--output", str(tmp_path / "o"), "--verify"])
    assert r["params"]["random_offsets"] and r["verified"]
    assert r["repetitions"][0]["write"]["rank_requests"] == [8, 8]  # 2 segments x 16K / 4K


def test_fsync_per_write_and_direct_on_posix(tmp_path: Path) -> None:
    r = record(
        tmp_path,
        2,
        [
            *IOR,
            "-Y",
            "--direct",
            "--backend",
            "posix",
            "--output",
            str(tmp_path / "o"),
            "--write",
            "--read",
            "--verify",
        ],
    )
    assert r["verified"]
    refused = run_ranks(1, [*IOR, "--direct", "--backend", "mpiio-coll", "--output", str(tmp_path / "m")])
    assert refused.status == USAGE and "--direct applies to backend posix only" in refused.stderr
    unaligned = run_ranks(
        1, ["run", "ior", "-b", "6000", "-t", "3000", "--direct", "--backend", "posix", "--output", str(tmp_path / "u")]
    )
    assert unaligned.status == USAGE and "not on 4 KiB blocks" in unaligned.stderr


def test_summary_has_standard_deviation_and_operations_per_second(tmp_path: Path) -> None:
    out = strata_ok(
        2, [*IOR, "--backend", "posix", "--output", str(tmp_path / "o"), "--repetitions", "2", "--write", "--read"]
    )
    assert "stddev" in out.stdout and "mean ops/s" in out.stdout
    r = record(tmp_path, 2, [*IOR, "--backend", "posix", "--output", str(tmp_path / "o"), "--repetitions", "2"])
    assert r["summary"]["write"]["ops_per_s"]["mean"] > 0
    assert r["summary"]["write"]["bandwidth_mib_s"]["stddev"] >= 0


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping the page cache needs root")
def test_drop_caches_before_each_read(tmp_path: Path) -> None:
    r = record(
        tmp_path,
        2,
        [
            *IOR,
            "--backend",
            "posix",
            "--output",
            str(tmp_path / "o"),
            "--write",
            "--read",
            "--verify",
            "--drop-caches",
            "-C",
        ],
    )
    assert r["verified"]


# ---- strata info's memory ---------------------------------------------------------------------


def test_info_memory_is_the_operating_systems(tmp_path: Path) -> None:
    strata_ok(1, ["info", str(tmp_path), "--json", str(tmp_path / "i.json")])
    info = json.loads((tmp_path / "i.json").read_text())
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    assert info["hardware"]["memory_bytes"] == int(meminfo["MemTotal"].split()[0]) * 1024


# Every backend that can stop part-way (collective ones stop together: rank 0 decides).
DEADLINE_BACKENDS = [["posix"], ["mpiio-ind"], ["mpiio-coll"], ["hdf5"], ["pnetcdf"], ["pnetcdf", "--independent"]]


@pytest.mark.parametrize("backend", DEADLINE_BACKENDS, ids=" ".join)
def test_deadline_stops_each_phase_and_reports_what_moved(tmp_path: Path, backend: list[str]) -> None:
    if backend[0] not in built_backends():
        pytest.skip(f"backend {backend[0]} is not built in")
    total = 2 * 8 * 16 * 2**20  # 2 ranks x 8 segments x 16 MiB: far more than 20 ms of I/O
    deadline = 0.02
    args = ["run", "ior", "-b", "16M", "-t", "64K", "-s", "8", "-D", str(deadline), "--backend", *backend]
    r = record(tmp_path, 2, [*args, "--output", str(tmp_path / "o"), "--write", "--read"])
    write, read = (r["repetitions"][0][phase] for phase in ("write", "read"))
    assert 0 < write["bytes"] < total, write
    # The read covers a file the stopped write left mostly sparse: read at memory speed, it may end
    # about the deadline (12-14 GB/s measured: a call begun before it ends after); a read that
    # ran well past the deadline must have been stopped.
    assert read["bytes"] > 0, read
    assert read["bytes"] < total or read["xfer_s"] <= 2 * deadline, read


def test_deadline_is_refused_where_it_cannot_stop(tmp_path: Path) -> None:
    refused = run_ranks(1, [*IOR, "-D", "1", "--verify", "--backend", "posix", "--output", str(tmp_path / "v")])
    assert refused.status == USAGE and "cannot be combined with --verify" in refused.stderr
    engine = run_ranks(1, [*IOR, "-D", "1", "--backend", "strata", "--output", str(tmp_path / "m")])
    assert engine.status == USAGE and "--deadline cannot apply to backend strata: the engine moves" in engine.stderr
    assert not (tmp_path / "m").exists()
    if "hdf5" in built_backends():
        args = ["run", "array1d", "-D", "1", "--backend", "hdf5", "--per-block", "--output", str(tmp_path / "h")]
        blocks = run_ranks(1, args)
        assert blocks.status == USAGE and "--per-block moves every block in one step" in blocks.stderr
