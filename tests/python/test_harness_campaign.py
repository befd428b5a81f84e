"""Campaign files: grid expansion, shuffling, and clear errors for malformed files before anything runs;
Slurm batch scripts as text."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, STRATA, catalogue
from strata.campaign import CampaignError, load
from strata.launch import LauncherSpec, mpirun_command
from strata.runner import run_campaign

GOOD = """
[campaign]
name = "t"
output = "out"
seed = 11
repetitions = 2
ranks = [2]
backends = ["posix", "mpiio-ind"]

[[kernels]]
name = "ior"
params = { block-size = ["64K", "128K"], transfer-size = "16K", segments = 2 }

[[kernels]]
name = "array1d"
ranks = [1, 3]
params = { dist = "random" }

[[variants]]
label = "romio"
backend = "mpiio-coll"
mca = { io = "romio321" }
hints = { cb_nodes = 1 }
"""


def write(tmp_path: Path, text: str, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_grid_expands_to_every_point_and_shuffles_reproducibly(tmp_path: Path) -> None:
    c = load(write(tmp_path, GOOD))
    # ior: 2 block sizes x 1 rank count; array1d: 1 x 2 rank counts; times 3 variants
    assert len(c.configurations) == (2 + 2) * 3
    assert len(c.runs) == len(c.configurations) * 2
    assert sorted(r.order for r in c.runs) == list(range(1, len(c.runs) + 1))
    pairs = [(r.configuration.key, r.repetition) for r in c.runs]
    assert len(set(pairs)) == len(pairs)
    again = load(write(tmp_path, GOOD))
    assert [(r.configuration.key, r.repetition) for r in again.runs] == pairs, "same seed, same order"
    other = load(write(tmp_path, GOOD.replace("seed = 11", "seed = 12")))
    assert [(r.configuration.key, r.repetition) for r in other.runs] != pairs
    unshuffled = sorted(pairs, key=lambda p: (next(i for i, c2 in enumerate(c.configurations) if c2.key == p[0]), p[1]))
    assert pairs != unshuffled, "the order must be shuffled"
    assert c.output == tmp_path / "out"
    assert c.baseline == "posix"
    romio = next(x for x in c.configurations if x.label == "romio" and x.kernel == "array1d" and x.ranks == 3)
    assert dict(romio.variant.mca) == {"io": "romio321"}
    assert dict(romio.params) == {"dist": "random"}


def test_backends_all_asks_the_binary(tmp_path: Path) -> None:
    """ "all" is every row of the binary's backend table, in its order, and nothing else."""
    c = load(write(tmp_path, GOOD.replace('backends = ["posix", "mpiio-ind"]', 'backends = "all"')))
    named = [cfg.variant.backend for cfg in c.configurations if cfg.variant.label == cfg.variant.backend]
    assert list(dict.fromkeys(named)) == list(catalogue().backends)
    doc = json.loads(
        subprocess.run(
            [str(STRATA), "info", "--catalogue", "--json"], capture_output=True, text=True, timeout=60
        ).stdout
    )
    assert [b["name"] for b in doc["backends"]] == list(catalogue().backends)


def test_mpirun_line_adds_oversubscribe_only_beyond_the_cores(tmp_path: Path) -> None:
    c = load(write(tmp_path, GOOD))
    cfg = next(x for x in c.configurations if x.label == "romio" and x.ranks == 3)
    cmd = mpirun_command(LauncherSpec(), cfg, ["strata", "run"], cores=2)
    assert cmd[:6] == ["mpirun", "--mca", "io", "romio321", "-n", "3"]
    assert "--oversubscribe" in cmd
    cfg1 = next(x for x in c.configurations if x.label == "romio" and x.ranks == 1)
    assert "--oversubscribe" not in mpirun_command(LauncherSpec(), cfg1, ["strata"], cores=2)


# (text, key, words) with their ids; also run through the CLI by test_bad_input_suite.py.
MALFORMED_CAMPAIGNS = [
    (GOOD.replace('name = "ior"', 'name = "iorr"'), "kernels[0].name", ["unknown kernel 'iorr'", "ior, array1d"]),
    (GOOD.replace("ranks = [2]", 'ranks = ["two"]'), "campaign.ranks", ["positive integers", "'two'"]),
    (GOOD.replace("repetitions = 2", 'repetitions = "2"'), "campaign.repetitions", ["expected integer", "string"]),
    (GOOD.replace('block-size = ["64K", "128K"]', "block-size = []"), "kernels[0].params.block-size", ["empty grid"]),
    (GOOD.replace("ranks = [1, 3]", "ranks = []"), "kernels[1].ranks", ["empty grid"]),
    (
        GOOD.replace('block-size = ["64K", "128K"]', 'blocksize = "64K"'),
        "kernels[0].params.blocksize",
        ["not an option of ior", "block-size"],
    ),
    (
        GOOD.replace('backends = ["posix", "mpiio-ind"]', 'backends = ["posix", "lustre"]'),
        "campaign.backends",
        ["unknown backend 'lustre'", "mpiio-coll"],
    ),
    (
        GOOD.replace('transfer-size = "16K"', 'transfer-size = "16K", json = "x"'),
        "kernels[0].params.json",
        ["set by the harness"],
    ),
    (GOOD.replace("seed = 11", "sed = 11"), "campaign.sed", ["unknown key", "seed"]),
    (
        GOOD.replace("[launcher]", "").replace("[campaign]", '[launcher]\ntype = "pbs"\n[campaign]'),
        "launcher.type",
        ["unknown launcher 'pbs'", "local, slurm"],
    ),
    (GOOD.split("[[kernels]]")[0], "kernels", ["no kernels"]),
    (
        GOOD.replace('backends = ["posix", "mpiio-ind"]', "backends = []").split("[[variants]]")[0],
        "campaign.backends",
        ["empty grid"],
    ),
    (GOOD.replace("[campaign]", "[campaign"), "(syntax)", ["not valid TOML"]),
    (GOOD.replace('output = "out"', 'output = "c.toml/results"'), "campaign.output", ["is not a folder"]),
    (
        GOOD.replace("hints = { cb_nodes = 1 }", 'hints = { cb_nodes = 1 }\nargs = ["--per-varaible"]'),
        "variants (label 'romio').args",
        ["--per-varaible: not an option of ior", "did you mean --per-variable?"],
    ),
]
MALFORMED_CAMPAIGN_IDS = [
    "unknown-kernel",
    "ranks-type",
    "repetitions-type",
    "empty-param-grid",
    "empty-ranks",
    "unknown-param",
    "unknown-backend",
    "reserved-param",
    "unknown-key",
    "unknown-launcher",
    "no-kernels",
    "no-backends",
    "syntax",
    "output-folder",
    "variant-args",
]


@pytest.mark.parametrize("text, key, words", MALFORMED_CAMPAIGNS, ids=MALFORMED_CAMPAIGN_IDS)
def test_malformed_campaign_names_file_key_and_what_is_allowed(
    tmp_path: Path, text: str, key: str, words: list[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(CampaignError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {key}:"), message
    for word in words:
        assert word in message, message


def test_malformed_campaign_stops_the_cli_before_anything_runs(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('name = "ior"', 'name = "nope"'))
    proc = subprocess.run(
        [sys.executable, "-m", "strata", "run", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT / "python",
        timeout=60,
    )
    assert proc.returncode == 2
    assert "strata-bench: error:" in proc.stderr and "unknown kernel 'nope'" in proc.stderr
    assert not (tmp_path / "out").exists(), "nothing may be created for a bad campaign"


SLURM = """
[campaign]
name = "cluster"
output = "out"
seed = 5
repetitions = 2
wait_s = 30
ranks = [4]
backends = ["mpiio-ind"]

[launcher]
type = "slurm"
partition = "compute"
account = "proj42"
time = "00:20:00"
nodes = 2
ntasks_per_node = 2
args = ["--cpu-bind=cores"]

[[kernels]]
name = "ior"
params = { block-size = "1M", transfer-size = "256K", segments = 4, layout = "sequential" }

[[variants]]
label = "romio cb"
backend = "mpiio-coll"
mca = { io = "romio321" }
hints = { cb_nodes = 2, cb_config_list = "*:1" }
"""


def test_slurm_campaign_writes_an_sbatch_script_with_correct_srun_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    c = load(write(tmp_path, SLURM))
    outcome = run_campaign(c, progress=False)
    assert outcome.script == tmp_path / "out" / "campaign.sbatch"
    text = outcome.script.read_text()
    assert subprocess.run(["bash", "-n", str(outcome.script)]).returncode == 0, "the script must parse"
    for directive in (
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=2",
        "#SBATCH --time=00:20:00",
        "#SBATCH --partition=compute",
        "#SBATCH --account=proj42",
        "#SBATCH --job-name=strata-cluster",
    ):
        assert directive + "\n" in text
    run_lines = [line for line in text.splitlines() if line.startswith("strata_run ")]
    assert len(run_lines) == len(c.runs) == 4
    assert text.count("sleep 30") == 3, "a wait between runs, none after the last"
    for line, run in zip(run_lines, c.runs, strict=True):
        argv = shlex.split(line)
        run_dir = tmp_path / "out" / "runs" / run.dirname
        assert argv[1] == str(run_dir), "runs appear in the campaign's shuffled order"
        cmd = argv[2:]
        if run.configuration.label == "romio cb":
            assert cmd[:2] == ["env", "OMPI_MCA_io=romio321"], "MCA parameters travel as environment under srun"
            cmd = cmd[2:]
            assert ["--hints", "cb_nodes=2,cb_config_list=*:1"] == cmd[cmd.index("--hints") : cmd.index("--hints") + 2]
        assert cmd[:6] == ["srun", "--ntasks", "4", "--ntasks-per-node", "2", "--cpu-bind=cores"]
        strata = cmd[6:]
        assert strata[:3] == [str(STRATA.resolve()), "run", "ior"]
        for opt, value in (
            ("--block-size", "1M"),
            ("--transfer-size", "256K"),
            ("--segments", "4"),
            ("--layout", "sequential"),
            ("--backend", run.configuration.variant.backend),
            ("--json", str(run_dir / "record.json")),
            ("--repetitions", "1"),
        ):
            assert strata[strata.index(opt) + 1] == value, opt
        for flag in ("--write", "--read", "--verify", "--quiet"):
            assert flag in strata
        assert "--mca" not in strata and "mpirun" not in cmd
    assert not (tmp_path / "out" / "runs").exists(), "nothing runs outside an allocation"


def test_slurm_script_results_are_collected_by_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the batch script with a stand-in srun (mpirun underneath), then ingest its folders."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    fake = tmp_path / "bin" / "srun"
    fake.parent.mkdir()
    fake.write_text(
        '#!/bin/bash\nn=1\nwhile [ "${1#-}" != "$1" ]; do\n  case $1 in --ntasks) n=$2; shift 2;;\n'
        '  --ntasks-per-node) shift 2;; *) shift;; esac\ndone\nexec mpirun --oversubscribe -n "$n" "$@"\n'
    )
    fake.chmod(0o755)
    text = (
        SLURM.replace("wait_s = 30", "wait_s = 0")
        .replace("ranks = [4]", "ranks = [2]")
        .replace('args = ["--cpu-bind=cores"]', f'srun = "{fake}"')
        .replace('"1M"', '"64K"')
        .replace('"256K"', '"16K"')
        .split("[[variants]]")[0]
    )
    c = load(write(tmp_path, text))
    script = run_campaign(c, progress=False).script
    assert script is not None
    env = dict(__import__("os").environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    subprocess.run(["bash", str(script)], check=True, env=env, timeout=120)
    outcome = run_campaign(c, resume=True, progress=False)
    assert (outcome.skipped, outcome.done, outcome.failed) == (2, 0, 0), "the script's runs are ingested, not re-run"
    assert outcome.script is None, "nothing left to script once the batch job's runs are ingested"
    assert (
        sum(line.startswith("strata_run ") for line in script.read_text().splitlines()) == 2
    ), "the submitted script is kept, not overwritten by an empty one"
    from strata.store import Store

    with Store(outcome.database, readonly=True) as store:
        runs = store.runs(store.campaign("cluster")["id"])
        assert [r["status"] for r in runs] == ["ok", "ok"]
        assert all(r["verified"] == 1 for r in runs)


def test_the_harness_runs_on_its_own(tmp_path: Path) -> None:
    """strata-bench is started directly, from anywhere, with the binary named by STRATA_BIN: it
    needs nothing strata used to set up when it forwarded `strata bench`."""
    path = write(tmp_path, GOOD)
    env = dict(os.environ, STRATA_BIN=str(STRATA), PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.run(
        [sys.executable, "-m", "strata", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "campaign 't': 12 configurations" in proc.stdout and "24 runs" in proc.stdout


def test_inside_an_allocation_runs_go_through_srun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SLURM_JOB_ID set: each run is launched at once with srun (a stand-in that logs and calls mpirun)."""
    log = tmp_path / "srun.log"
    fake = tmp_path / "srun"
    fake.write_text(
        f'#!/bin/bash\necho "$*" >> {log}\nn=1\nwhile [ "${{1#-}}" != "$1" ]; do\n'
        "  case $1 in --ntasks) n=$2; shift 2;; *) shift;; esac\ndone\n"
        'exec mpirun --oversubscribe -n "$n" "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    text = f"""
[campaign]
name = "alloc"
output = "out"
seed = 2
repetitions = 2
ranks = [2]
backends = ["mpiio-ind"]
[launcher]
type = "slurm"
srun = "{fake}"
[[kernels]]
name = "ior"
params = {{ block-size = "64K", transfer-size = "16K" }}
"""
    outcome = run_campaign(load(write(tmp_path, text)), progress=False)
    assert (outcome.script, outcome.done, outcome.failed) == (None, 2, 0)
    calls = log.read_text().splitlines()
    assert len(calls) == 2 and all(c.startswith("--ntasks 2 ") and " run ior " in c for c in calls)
