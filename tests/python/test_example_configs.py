"""Every configuration file shipped in examples/ and campaigns/ (campaigns, at every scale profile
they define) and docs/machines/ and campaigns/machines/ (machine descriptions) is loaded the way a
user would load it, and says what it claims: a new or edited example that no longer loads fails
here."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT, STRATA, catalogue, run_ranks
from strata.campaign import load, scales

CAMPAIGNS = sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "campaigns").glob("*.toml"))
MACHINES = sorted((ROOT / "docs" / "machines").glob("*.toml")) + sorted(
    (ROOT / "campaigns" / "machines").glob("*.toml")
)
PROFILES = [(path, scale) for path in CAMPAIGNS for scale in [None, *scales(path)]]


def test_there_are_examples() -> None:
    assert CAMPAIGNS and MACHINES


def test_every_paper_has_a_campaign_with_a_cluster_profile() -> None:
    for name in ("mslio", "striping", "tapioca", "multidataset"):
        assert "cluster" in scales(ROOT / "campaigns" / f"{name}.toml"), name


@pytest.mark.parametrize(("path", "scale"), PROFILES, ids=lambda x: getattr(x, "name", str(x)))
def test_campaign_loads_and_uses_what_the_binary_offers(path: Path, scale: str | None) -> None:
    c = load(path, strata=STRATA, catalogue=catalogue(), scale=scale)
    doc = tomllib.loads(path.read_text())
    if scale is not None:  # the profile changes sizes, ranks and the launcher, and names its own results
        assert c.name == doc["campaign"]["name"] + "-" + scale
        doc["kernels"] = doc["scale"][scale].get("kernels", doc["kernels"])
        if isinstance(doc["kernels"], dict):
            doc["kernels"] = tomllib.loads(path.read_text())["kernels"]
        assert c.output != load(path, strata=STRATA, catalogue=catalogue()).output
    else:
        assert c.name == doc["campaign"]["name"]
    assert c.runs
    cat = catalogue()
    assert {k["name"] for k in doc["kernels"]} == {cfg.kernel for cfg in c.configurations}
    for cfg in c.configurations:
        assert cfg.kernel in cat.kernels
        if cfg.kernel in cat.kernel_modes:
            assert cfg.variant.backend in cat.kernel_modes[cfg.kernel][1]
        else:
            assert cfg.variant.backend in cat.backends
        assert {k for k, _ in cfg.params} <= set(cat.kernel_options[cfg.kernel])
    if doc["campaign"].get("backends") == "all":
        assert set(cat.backends) <= {cfg.variant.backend for cfg in c.configurations}


@pytest.mark.parametrize("path", MACHINES, ids=lambda p: p.name)
def test_machine_description_is_what_the_engine_reads(path: Path, tmp_path: Path) -> None:
    """strata info --tiers under STRATA_MACHINE=FILE: the file's name, and its tiers' figures."""
    doc = tomllib.loads(path.read_text())
    out = run_ranks(1, ["info", "--tiers", "--json", str(tmp_path / "t.json")], env={"STRATA_MACHINE": str(path)})
    assert out.status == 0, out.stderr
    info = json.loads((tmp_path / "t.json").read_text())
    assert info["machine"]["name"] == doc["name"]
    assert Path(info["machine"]["source"]).resolve() == path.resolve()
    assert info["machine"]["network_bandwidth_Bps"] == pytest.approx(doc["network"]["bandwidth_GBps"] * 1e9)
    rows = {t["name"]: t for t in info["tiers"]}
    described = {name for name, t in rows.items() if t["described"]}
    assert described and described <= {t["name"] for t in doc["tier"]}
    for tier in doc["tier"]:
        assert tier["name"] in rows
        if tier["name"] in described:
            assert rows[tier["name"]]["bandwidth_Bps"] == pytest.approx(tier["bandwidth_GBps"] * 1e9)
            assert rows[tier["name"]]["latency_s"] == pytest.approx(tier["latency_us"] * 1e-6)
