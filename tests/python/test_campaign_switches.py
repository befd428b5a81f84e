"""A campaign-wide switch (`fsync`) is declared once, in its row of src/run/run_options.cpp: the
catalogue marks the row, and the harness's [campaign] key, the launch argument, the stored campaign
and the statistics' label follow from the catalogue. A second switch that exists only in the
catalogue (a synthetic row) flows through all of them; `fsync` keeps its record key and campaign key;
a results database of schema version 2 (a column per switch) still opens, and is migrated when written."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import STRATA, catalogue, run_ranks
from strata.campaign import CampaignError, load
from strata.catalogue import StrataCatalogue
from strata.launch import strata_arguments
from strata.stats import campaign_stats
from strata.store import SCHEMA, Store

CAMPAIGN = """
[campaign]
name = "switches"
output = "out"
seed = 3
repetitions = 1
ranks = [2]
backends = ["posix"]
{keys}

[[kernels]]
name = "ior"
params = {{ block-size = "64K", transfer-size = "16K", segments = 1 }}
"""

# A hypothetical switch, declared only as the C++ row would declare it: the catalogue's entry.
CHECKSUM = {
    "name": "checksum",
    "flag": True,
    "help": "checksum the data after close (counted in close time)",
    "kinds": ["decomposition", "application"],
    "campaign_switch": {
        "report_on": "checksum: computed in close time",
        "report_off": "checksum: not computed (add --checksum)",
        "label_on": "checksum computed",
        "label_off": "checksum not computed",
    },
}


def with_checksum() -> StrataCatalogue:
    doc = copy.deepcopy(catalogue().raw)
    doc["run_options"].append(CHECKSUM)
    return StrataCatalogue.from_json(doc)


def write(tmp_path: Path, keys: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(keys=keys))
    return path


def test_the_catalogue_marks_fsync_as_the_switch() -> None:
    switches = catalogue().switches
    assert [s.name for s in switches] == ["fsync"]
    assert (switches[0].label(True), switches[0].label(False)) == ("fsync included", "fsync not included")


def test_a_switch_declared_only_in_the_catalogue_flows_to_key_argument_store_and_label(tmp_path: Path) -> None:
    cat = with_checksum()
    assert [s.name for s in cat.switches] == ["fsync", "checksum"]
    c = load(write(tmp_path, "checksum = true"), strata=STRATA, catalogue=cat)
    assert c.switch("checksum") and not c.switch("fsync")
    run = c.runs[0]
    args = strata_arguments(c, run, tmp_path / "run", tmp_path / "data")
    assert "--checksum" in args and "--fsync" not in args
    both = load(write(tmp_path, "checksum = true\nfsync = true"), strata=STRATA, catalogue=cat)
    args = strata_arguments(both, both.runs[0], tmp_path / "run", tmp_path / "data")
    assert args.index("--fsync") < args.index("--checksum"), "in the catalogue's order"

    with Store(tmp_path / "results.sqlite") as store:
        store.create_campaign(c)
        stored = json.loads(store.campaign()["switches"])
        assert stored == {
            "fsync": {"on": False, "label": "fsync not included"},
            "checksum": {"on": True, "label": "checksum computed"},
        }
        conditions = campaign_stats(store).conditions
    assert conditions.startswith("fsync not included, checksum computed, "), conditions

    # The harness sets the switch: a kernel's params or a variant's args may not.
    text = CAMPAIGN.format(keys="").replace("segments = 1 }", "segments = 1, checksum = true }")
    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(CampaignError, match="set by the harness itself"):
        load(tmp_path / "p.toml", strata=STRATA, catalogue=cat)
    # Without the row, the key is unknown: nothing else declared it.
    with pytest.raises(CampaignError, match="checksum"):
        load(write(tmp_path, "checksum = true"), strata=STRATA, catalogue=catalogue())


def test_fsync_keeps_its_campaign_key_and_record_key(tmp_path: Path) -> None:
    c = load(write(tmp_path, "fsync = true"), strata=STRATA, catalogue=catalogue())
    assert c.switch("fsync")
    assert "--fsync" in strata_arguments(c, c.runs[0], tmp_path / "run", tmp_path / "data")
    with pytest.raises(CampaignError, match="campaign.fsync"):
        load(write(tmp_path, 'fsync = "yes"'), strata=STRATA, catalogue=catalogue())
    record = tmp_path / "record.json"
    out = run_ranks(
        1,
        ["run", "ior", "--backend", "posix", "--block-size", "16K", "--transfer-size", "16K", "--segments", "1"]
        + ["--output", str(tmp_path / "f.dat"), "--fsync", "--json", str(record)],
    )
    assert out.status == 0, out.stderr
    assert json.loads(record.read_text())["fsync"] is True
    assert "fsync: included in close time" in out.stdout


V2_FSYNC = "    fsync       INTEGER NOT NULL,   -- 1: the sync to storage is in the close time\n"


def version_2_database(path: Path) -> None:
    """A results database as the harness wrote it before switches were declared (schema 2)."""
    lines = SCHEMA.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("switches "))
    con = sqlite3.connect(path)
    con.executescript("".join([*lines[:at], V2_FSYNC, *lines[at + 1 :]]))
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.execute(
        "INSERT INTO campaigns (name, file, toml, plan_hash, seed, baseline, launcher, strata, total_runs, repetitions,"
        " repetitions_per_launch, wait_s, operations, verify, fsync, created)"
        " VALUES ('old', 'c.toml', '', 'h', 1, 'posix', 'local', 'strata', 0, 1, 1, 0, '[\"write\"]', 1, 1, 'then')"
    )
    con.execute(
        "INSERT INTO configurations (campaign_id, key, cell, label, kernel, backend, ranks, params, hints, mca, args,"
        " env, launcher_args) VALUES (1, 'k', 'c', 'posix', 'ior', 'posix', 2, '{}', '{}', '{}', '[]', '{}', '[]')"
    )
    con.commit()
    con.close()


def test_a_version_2_database_opens_and_is_migrated_when_written(tmp_path: Path) -> None:
    db = tmp_path / "results.sqlite"
    version_2_database(db)
    with Store(db, readonly=True) as store:
        assert campaign_stats(store).conditions.startswith("fsync included, ")
    with Store(db) as store:  # opened for writing: migrated to the version-3 column
        row = store.campaign()
        assert "fsync" not in row.keys()
        assert json.loads(row["switches"]) == {"fsync": {"on": True, "label": "fsync included"}}
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "3"
        assert campaign_stats(store).conditions.startswith("fsync included, ")
