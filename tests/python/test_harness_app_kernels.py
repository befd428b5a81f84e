"""Campaigns with application kernels: their variants are their modes (per kernel), not the
campaign's backends; a real campaign of both runs, stores and compares."""

from __future__ import annotations

from pathlib import Path

import pytest
from strata.campaign import CampaignError, load
from strata.launch import strata_arguments
from strata.runner import run_campaign
from strata.stats import campaign_stats, ratio_table
from strata.store import Store

MIXED = """
[campaign]
name = "apps"
output = "out"
seed = 5
repetitions = 1
ranks = [2]
backends = ["posix", "mpiio-coll"]
timeout_s = 60

[[kernels]]
name = "array1d"
params = { size = "16K" }

[[kernels]]
name = "mslio"
modes = ["original", "shared"]
params = { ccross = 1, subelements = 8, threads = 1 }

[[kernels]]
name = "pace3d"
params = { block-size = "8K", frames = 3 }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_application_kernels_take_their_modes_as_variants(tmp_path: Path) -> None:
    c = load(write(tmp_path, MIXED))
    by_kernel: dict[str, list[str]] = {}
    for cfg in c.configurations:
        by_kernel.setdefault(cfg.kernel, []).append(cfg.label)
    assert by_kernel["array1d"] == ["posix", "mpiio-coll"]
    assert by_kernel["mslio"] == ["original", "shared"]
    assert by_kernel["pace3d"] == ["sf", "mf", "mf-wo"]  # all modes unless listed
    run = next(r for r in c.runs if r.configuration.kernel == "pace3d" and r.configuration.label == "mf-wo")
    args = strata_arguments(c, run, tmp_path, tmp_path / "d.vox")
    assert args[args.index("--style") + 1] == "mf-wo" and "--backend" not in args
    run = next(r for r in c.runs if r.configuration.kernel == "array1d")
    assert "--backend" in strata_arguments(c, run, tmp_path, tmp_path / "d.dat")


@pytest.mark.parametrize(
    "edit,key,problem",
    [
        (('modes = ["original", "shared"]', 'modes = ["fast"]'), "kernels[1].modes", "unknown mslio mode 'fast'"),
        (('modes = ["original", "shared"]', "modes = []"), "kernels[1].modes", "expected a non-empty array"),
        (
            ('params = { size = "16K" }', 'params = { size = "16K" }\nmodes = ["sf"]'),
            "kernels[0].modes",
            "array1d has backends, not modes",
        ),
        (("threads = 1 }", 'threads = 1, mode = "hdf5" }'), "kernels[1].params.mode", "list them in kernels[1].modes"),
    ],
)
def test_modes_are_checked_before_anything_runs(tmp_path: Path, edit: tuple[str, str], key: str, problem: str) -> None:
    with pytest.raises(CampaignError) as err:
        load(write(tmp_path, MIXED.replace(*edit)))
    assert err.value.key == key and problem in err.value.problem


def test_campaign_of_application_kernels_only_runs_and_compares(tmp_path: Path) -> None:
    text = MIXED.replace('backends = ["posix", "mpiio-coll"]\n', "").replace(
        '[[kernels]]\nname = "array1d"\nparams = { size = "16K" }\n\n', ""
    )
    c = load(write(tmp_path, text))
    assert c.baseline == "original"
    outcome = run_campaign(c, progress=False)
    assert outcome.failed == 0 and outcome.done == len(c.runs) == 5
    with Store(outcome.database) as store:
        cs = campaign_stats(store)
        table = ratio_table(cs)
    assert "pace3d" in table and "x against sf" in table
    assert all(
        cfg.ratio == pytest.approx(1.0) for cell in cs.cells for cfg in cell.configs if cfg.label in ("original", "sf")
    )
    # Per-rank times of pace3d's frames reach the store.
    with Store(outcome.database) as store:
        assert store.rank_times(cs.campaign_id)


def test_baseline_must_be_a_variant_some_configuration_runs(tmp_path: Path) -> None:
    apps_only = MIXED.replace('[[kernels]]\nname = "array1d"\nparams = { size = "16K" }\n\n', "")
    assert load(write(tmp_path, apps_only)).baseline == "original"  # the backends run nothing here
    with pytest.raises(CampaignError) as err:
        load(write(tmp_path, apps_only.replace("[campaign]\n", '[campaign]\nbaseline = "posix"\n')))
    assert err.value.key == "campaign.baseline" and "no configuration runs variant 'posix'" in err.value.problem
