"""The bad-input suite (issue 9): the one place that runs every bad-input case of the six
categories - the command line, hints, engine declarations, machine files, campaign files and PIO
decomposition maps - and checks the acceptance on each: a clear message (one `error:` line
holding the expected words, no trace), the same non-zero exit status on every rank (each rank's
own status, on 1 and 3 ranks), an end within the case's timeout, and a previous output at the
same path left untouched (every file's bytes and modification time).

Cases written for other tests are imported, not copied: test_bad_input.CASES (command line and
hints), test_application_kernel_input.CASES (kernel parameters), test_tiers.BAD (machine files),
test_multidataset.MALFORMED_MAPS and test_harness_campaign.MALFORMED_CAMPAIGNS. The engine's
declaration cases are tests/mpi/engine_errors.cpp (each checks agreement and the previous output
itself; here it runs under per-rank statuses). The cases no other test holds are listed below.
Campaign files are checked by the harness before anything is launched, so they have no ranks.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import test_application_kernel_input
import test_bad_input
import test_harness_campaign
import test_multidataset
import test_tiers
from conftest import ROOT, STRATA, run_ranks
from test_bad_input import RUNTIME, USAGE, assert_clean_failure

RANKS = [1, 3]
TIMEOUT = 60  # seconds for one bad case: each fails in well under a second when nothing hangs
SMALL_IOR = ["--block-size", "16K", "--transfer-size", "4K"]
HINT_CASES = ("malformed hints", "engine buffer below", "engine without buffers", "engine with zero aggregators")


@dataclass(frozen=True)
class Case:
    category: str  # cli, hints, declarations, machine, campaign, map
    name: str
    args: list[str]  # strata's arguments; "{out}" is the target path
    fragments: list[str]  # words the error line must hold
    status: int = USAGE
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # written into the case's folder first
    previous: str | None = "posix"  # the backend whose output lies at {out} before the run, or None

    @property
    def id(self) -> str:
        return f"{self.category}: {self.name}"


def _backend_of(args: list[str]) -> str:
    if "--backend" in args and args.index("--backend") + 1 < len(args):
        backend = args[args.index("--backend") + 1]
        if backend in test_bad_input.BACKENDS:
            return backend
    return "posix"


def _imported_cli_cases() -> list[Case]:
    cases = []
    for name, args, status, fragments in test_bad_input.CASES:
        takes_output = args[0] == "run" and len(args) > 2 and args[-1] != "--backend"
        category = "hints" if name.startswith(HINT_CASES) else "cli"
        cases.append(
            Case(
                category,
                name,
                [*args, "--output", "{out}"] if takes_output else args,
                fragments,
                status,
                previous=_backend_of(args) if takes_output else None,
            )
        )
    for name, args, fragments in test_application_kernel_input.CASES:
        cases.append(Case("cli", name, ["run", *args, "--output", "{out}"], fragments, previous=_backend_of(args)))
    return cases


def _imported_machine_cases() -> list[Case]:
    return [
        Case(
            "machine",
            case,
            ["run", "ior", *SMALL_IOR, "--backend", "strata", "--output", "{out}"],
            [f'machine file "{case}.toml"', fragments[-1]],
            env={"STRATA_MACHINE": f"{case}.toml"},
            files={f"{case}.toml": text},
            previous="strata",
        )
        for case, (text, fragments) in sorted(test_tiers.BAD.items())
    ]


def _imported_map_cases() -> list[Case]:
    return [
        Case(
            "map",
            name,
            ["run", "e3sm", "--maps", "bad.dat", "--backend", "strata", "--output", "{out}"],
            ['PIO map "bad.dat"', message],
            files={"bad.dat": text},
            previous="strata",
        )
        for name, text, message in test_multidataset.MALFORMED_MAPS
    ]


GOOD_MACHINE = test_tiers.GOOD
IOR_STRATA = ["run", "ior", *SMALL_IOR, "--backend", "strata", "--output", "{out}"]
IOR_POSIX = ["run", "ior", *SMALL_IOR, "--backend", "posix", "--output", "{out}"]

NEW_CASES = [
    # The command line.
    Case("cli", "seed not a number", [*IOR_POSIX, "--seed", "abc"], ['--seed must be a number (got "abc")']),
    Case("cli", "repetitions not a number", [*IOR_POSIX, "--repetitions", "x"], ["--repetitions must be a number"]),
    Case(
        "cli",
        "output without a value",
        ["run", "ior", "--backend", "posix", "--output"],
        ["--output needs a value"],
        previous=None,
    ),
    Case(
        "cli",
        "output is a directory",
        ["run", "ior", *SMALL_IOR, "--backend", "posix", "--output", "{dir}"],
        ["cannot remove the previous output", "Is a directory"],
        status=RUNTIME,
    ),
    # Hints the engine refuses (its plan agrees on them: the previous output must survive).
    Case(
        "hints",
        "engine buffer above 1 GiB",
        [*IOR_STRATA, "--hints", "cb_buffer_size=2G"],
        ["above the 1 GiB maximum"],
        previous="strata",
    ),
    Case(
        "hints",
        "engine aggregators not a number",
        [*IOR_STRATA, "--hints", "cb_nodes=abc"],
        ['hint cb_nodes must be a number (got "abc")'],
        previous="strata",
    ),
    Case(
        "hints",
        "negative stripe unit",
        [*IOR_STRATA, "--hints", "striping_unit=-1"],
        ["hint striping_unit must not be negative"],
        previous="strata",
    ),
    Case(
        "hints",
        "zero subfiles",
        [*IOR_STRATA, "--hints", "strata_subfiling=0"],
        ['strata_subfiling must be "aggregator" or a count'],
        previous="strata",
    ),
    Case(
        "hints",
        "too many buffers",
        [*IOR_STRATA, "--hints", "strata_buffers=65"],
        ["between 1 and 64"],
        previous="strata",
    ),
    # Machine files (the engine reads them at its plan).
    Case(
        "machine",
        "capacity not a size",
        IOR_STRATA,
        ['field "tier dram.capacity" must be a number'],
        env={"STRATA_MACHINE": "m.toml"},
        files={"m.toml": GOOD_MACHINE.replace('"1GiB"', '"lots"')},
        previous="strata",
    ),
    Case(
        "machine",
        "distances not square",
        IOR_STRATA,
        ['"topology.distances" must be square'],
        env={"STRATA_MACHINE": "m.toml"},
        files={"m.toml": GOOD_MACHINE.replace("[[0, 1], [1, 0]]", "[[0, 1], [1]]")},
        previous="strata",
    ),
    Case(
        "machine",
        "tier described twice",
        IOR_STRATA,
        ['tier "dram" is described twice'],
        env={"STRATA_MACHINE": "m.toml"},
        files={"m.toml": GOOD_MACHINE.replace('name = "nvr"', 'name = "dram"')},
        previous="strata",
    ),
    Case(
        "machine",
        "unknown topology kind",
        IOR_STRATA,
        ['unknown topology kind "ring"'],
        env={"STRATA_MACHINE": "m.toml"},
        files={"m.toml": GOOD_MACHINE.replace('"matrix"', '"ring"')},
        previous="strata",
    ),
    Case(
        "machine",
        "missing machine file",
        IOR_STRATA,
        ["cannot read the machine file"],
        env={"STRATA_MACHINE": "none.toml"},
        previous="strata",
    ),
    # PIO decomposition maps, through the kernel and through `strata decomp describe`.
    Case(
        "map",
        "missing map",
        ["run", "e3sm", "--maps", "none.dat", "--backend", "strata", "--output", "{out}"],
        ['cannot open PIO map "none.dat"'],
        status=RUNTIME,
        previous="strata",
    ),
    Case(
        "map",
        "empty map",
        ["run", "e3sm", "--maps", "empty.dat", "--backend", "strata", "--output", "{out}"],
        ['PIO map "empty.dat" line 1', "the file ends where the header"],
        files={"empty.dat": ""},
        previous="strata",
    ),
    Case(
        "map",
        "negative offset",
        ["run", "e3sm", "--maps", "neg.dat", "--backend", "posix", "--output", "{out}"],
        ['offset "-2" of rank 0 is not a non-negative integer'],
        files={"neg.dat": "version 2001 npes 1 ndims 1\n10\n0 3\n1 -2 3\n"},
    ),
    Case(
        "map",
        "describe a malformed map",
        ["decomp", "describe", "bad.dat", "--json", "{out}"],
        ["line 1: bad header"],
        files={"bad.dat": "version 2001 npes 4\n10 3\n"},
        previous="describe",
    ),
    Case(
        "map",
        "describe a missing map",
        ["decomp", "describe", "none.dat", "--json", "{out}"],
        ['cannot open PIO map "none.dat"'],
        status=RUNTIME,
        previous="describe",
    ),
    Case("map", "describe without a map", ["decomp", "describe"], ["needs one map FILE"], previous=None),
]

CASES = [*_imported_cli_cases(), *_imported_machine_cases(), *_imported_map_cases(), *NEW_CASES]

# Campaign files: (name, text, fragments). The imported ones, then new ones; every one runs with
# --force, which must not discard the stored campaign of a file that does not validate.
GOOD_CAMPAIGN = """
[campaign]
name = "t"
output = "out"
seed = 11
repetitions = 1
ranks = [1]
backends = ["posix"]

[[kernels]]
name = "ior"
params = { block-size = "16K", transfer-size = "4K", segments = 1 }
"""
CAMPAIGNS = [
    (name, text, [key, *words])
    for name, (text, key, words) in zip(
        test_harness_campaign.MALFORMED_CAMPAIGN_IDS, test_harness_campaign.MALFORMED_CAMPAIGNS, strict=True
    )
] + [
    (
        "zero repetitions",
        GOOD_CAMPAIGN.replace("repetitions = 1", "repetitions = 0"),
        ["campaign.repetitions", "must be at least 1"],
    ),
    ("zero ranks", GOOD_CAMPAIGN.replace("ranks = [1]", "ranks = [0]"), ["campaign.ranks", "positive integers"]),
    ("missing campaign file", None, ["cannot read", "No such file"]),
]


def test_the_suite_has_at_least_30_cases_in_every_category() -> None:
    categories: dict[str, int] = {}
    for case in CASES:
        categories[case.category] = categories.get(case.category, 0) + 1
    categories["campaign"] = len(CAMPAIGNS)
    categories["declarations"] = DECLARATION_CASES
    assert set(categories) == {"cli", "hints", "declarations", "machine", "campaign", "map"}, categories
    assert sum(categories.values()) >= 30, categories
    assert len({case.id for case in CASES}) == len(CASES), "case names must be distinct"


# ---- previous outputs -----------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def previous_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One good output per kind, written once: `out` (and an engine index) by a real run."""
    backends = ["posix", "strata", *[b for b in test_bad_input.BACKENDS if b not in ("posix", "strata")]]
    made = {backend: tmp_path_factory.mktemp(f"previous-{backend}") for backend in backends}

    def write(backend: str) -> None:
        done = run_ranks(
            1, ["run", "ior", *SMALL_IOR, "--backend", backend, "--output", "out", "--quiet"], cwd=made[backend]
        )
        assert done.status == 0, done.stderr

    with ThreadPoolExecutor(max_workers=3) as pool:  # independent launches, each in its own folder
        list(pool.map(write, backends))
    folder = tmp_path_factory.mktemp("previous-describe")
    done = subprocess.run(
        [str(STRATA), "decomp", "describe", str(test_multidataset.HAND_MAP), "--json", "out"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=test_multidataset.ENV,
    )
    assert done.returncode == 0, done.stderr
    made["describe"] = folder
    return made


def lay_previous(kind: str, previous_outputs: dict[str, Path], folder: Path) -> None:
    for p in previous_outputs[kind].iterdir():
        if p.name.startswith("out"):
            shutil.copy2(p, folder / p.name)


# ---- the command line, hints, machine files and maps: strata on 1 and 3 ranks ---------------------


@pytest.mark.parametrize("np", RANKS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_case(tmp_path: Path, np: int, case: Case, previous_outputs: dict[str, Path]) -> None:
    for name, text in case.files.items():
        (tmp_path / name).write_text(text)
    if case.previous:
        lay_previous(case.previous, previous_outputs, tmp_path)
        assert (tmp_path / "out").is_file()
    before = snapshot(tmp_path)
    args = [a.replace("{out}", str(tmp_path / "out")).replace("{dir}", str(tmp_path)) for a in case.args]
    outcome = run_ranks(np, args, env=case.env, cwd=tmp_path, timeout=TIMEOUT)
    assert_clean_failure(outcome, case.status, *case.fragments)
    after = snapshot(tmp_path)
    changed = [name for name, seen in before.items() if after.get(name) != seen]
    assert not changed, f"the previous output changed: {changed}\n{outcome.stderr}"


# ---- engine declarations: tests/mpi/engine_errors.cpp under per-rank statuses -----------------------

ENGINE_ERRORS = STRATA.parent / "engine_errors"
DECLARATION_CASES = sum(
    1 for line in (ROOT / "tests" / "mpi" / "engine_errors.cpp").read_text().splitlines() if 'expect_failure("' in line
)


@pytest.mark.parametrize("np", [2, 3])  # the cases disagree between ranks: one rank cannot
def test_bad_declarations(tmp_path: Path, np: int) -> None:
    outcome = run_ranks(np, [str(tmp_path)], program=ENGINE_ERRORS, timeout=TIMEOUT)
    assert outcome.status == 0, outcome.stdout + outcome.stderr
    passed = [line for line in outcome.stdout.splitlines() if line.startswith("ok  ")]
    # and the C API's three cases: a bad hint, a Fortran communicator handle, strata_add_subarray_nd + strata_fail
    assert len(passed) == DECLARATION_CASES + 3, outcome.stdout
    assert "FAIL" not in outcome.stdout


# ---- campaign files: strata-bench run --force ------------------------------------------------------


@pytest.fixture(scope="session")
def previous_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("previous-campaign")
    (folder / "c.toml").write_text(GOOD_CAMPAIGN)
    done = subprocess.run(
        [sys.executable, "-m", "strata", "run", str(folder / "c.toml")],
        capture_output=True,
        text=True,
        cwd=ROOT / "python",
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (folder / "out" / "results.sqlite").is_file()
    return folder / "out"


@pytest.mark.parametrize("name,text,fragments", CAMPAIGNS, ids=[c[0] for c in CAMPAIGNS])
def test_bad_campaign(
    tmp_path: Path, name: str, text: str | None, fragments: list[str], previous_campaign: Path
) -> None:
    shutil.copytree(previous_campaign, tmp_path / "out")
    before = snapshot(tmp_path / "out")
    path = tmp_path / "c.toml"
    if text is not None:
        path.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "strata", "run", str(path), "--force"],
        capture_output=True,
        text=True,
        cwd=ROOT / "python",
        timeout=TIMEOUT,
    )
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("strata-bench: error:")]
    assert len(errors) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    assert "Traceback" not in proc.stderr
    assert snapshot(tmp_path / "out") == before, "the stored campaign changed"
