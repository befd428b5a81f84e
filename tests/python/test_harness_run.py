"""A real campaign through mpirun into SQLite: interruption and --resume, failed runs, the report."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import matplotlib.image
import pytest
from browser import page_problems
from conftest import BASE_ENV, ROOT
from strata.campaign import load
from strata.runner import run_campaign
from strata.store import Store

CAMPAIGN = """
[campaign]
name = "pair"
output = "out"
seed = 3
repetitions = 2
repetitions_per_launch = 2
wait_s = 1.5
ranks = [2]
backends = ["posix", "mpiio-coll"]
timeout_s = 60

[[kernels]]
name = "ior"
params = { block-size = "64K", transfer-size = "16K", segments = 2 }
"""


def bench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "strata", *args],
        capture_output=True,
        text=True,
        env=BASE_ENV,
        cwd=ROOT / "python",
        timeout=timeout,
    )


def stored_runs(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.fixture(scope="module")
def campaign_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 configurations x 2 launches on 2 ranks: interrupted after the first stored run, then resumed."""
    tmp = tmp_path_factory.mktemp("campaign")
    path = tmp / "pair.toml"
    path.write_text(CAMPAIGN)
    db = tmp / "out" / "results.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "strata", "run", str(path), "--quiet"],
        env=BASE_ENV,
        cwd=ROOT / "python",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while stored_runs(db) < 1 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)  # as a batch system or a user would; the runner is in its 1.5 s wait
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    (tmp / "first-session-runs").write_text(str(stored_runs(db)))

    again = bench("run", str(path))
    assert again.returncode == 2 and "--resume" in again.stderr, "a stored campaign is not silently redone"

    resumed = bench("run", str(path), "--resume", "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    return tmp


def test_campaign_lands_in_sqlite_without_duplicates(campaign_dir: Path) -> None:
    first = int((campaign_dir / "first-session-runs").read_text())
    assert 1 <= first < 4
    with Store(campaign_dir / "out" / "results.sqlite", readonly=True) as store:
        c = store.campaign("pair")
        assert c["seed"] == 3 and c["total_runs"] == 4 and c["baseline"] == "mpiio-coll"
        runs = store.runs(c["id"])
        assert len(runs) == 4
        assert len({(r["configuration_id"], r["repetition"]) for r in runs}) == 4
        assert sorted(r["order_index"] for r in runs) == [1, 2, 3, 4]
        assert all(r["status"] == "ok" and r["exit_code"] == 0 and r["verified"] == 1 for r in runs)
        sessions = store.sessions(c["id"])
        assert [(s["runs_done"], s["interrupted"]) for s in sessions] == [(first, 1), (4 - first, 0)]
        for r in runs:
            run_dir = Path(r["run_dir"])
            assert (run_dir / "stdout.txt").exists() and (run_dir / "stderr.txt").exists()
            record = json.loads((run_dir / "record.json").read_text())
            assert record["ranks"] == 2 and record["backend"] == r["backend"]
            assert r["command"].startswith("mpirun ") and " -n 2 " in r["command"]
        metrics = store.db.execute("SELECT phase, COUNT(*), MIN(bytes), MAX(bytes) FROM metrics GROUP BY phase")
        # 4 runs x 2 in-launch repetitions per phase; IOR 64K x 2 segments x 2 ranks
        assert {row[0]: tuple(row[1:]) for row in metrics} == {
            "write": (8, 262144, 262144),
            "read": (8, 262144, 262144),
        }
        env = store.db.execute("SELECT DISTINCT mpi_library, io_component, fs_type, git_rev FROM environment")
        rows = env.fetchall()
        assert len(rows) == 1 and rows[0][0] == "Open MPI" and rows[0][1] == "ompio" and rows[0][2] and rows[0][3]
        assert not list((campaign_dir / "out" / "data").iterdir()), "data files are removed after each run"


def test_report_renders_in_a_browser_and_a_broken_one_is_seen(campaign_dir: Path, tmp_path: Path) -> None:
    """The report opened in headless chromium: every image loads, every table is drawn with rows as
    wide as its header, no console error. Then a copy with one plot missing and one table row a cell
    short: the same check names both."""
    out = tmp_path / "report"
    proc = bench("report", str(campaign_dir / "out" / "results.sqlite"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert page_problems(out / "index.html") == []

    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    missing = sorted(broken.glob("bandwidth-*.png"))[0]
    missing.unlink()
    page = (broken / "index.html").read_text()
    at = page.index("<h2>Environment</h2>")
    page = page[:at] + re.sub(r"<td>\d+</td></tr>", "</tr>", page[at:], count=1)
    (broken / "index.html").write_text(page)
    problems = page_problems(broken / "index.html")
    assert any(p == f"image {missing.name} did not load" for p in problems), problems
    assert any('(under "Environment") row 1:' in p for p in problems), problems
    assert any(p.startswith("console:") and missing.name in p for p in problems), problems


def test_report_references_pngs_that_exist_and_load(campaign_dir: Path) -> None:
    out = campaign_dir / "report"
    proc = bench("report", str(campaign_dir / "out" / "results.sqlite"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    html = (out / "index.html").read_text()
    images = re.findall(r"<img src=[\"']([^\"']+)[\"']", html)
    kinds = {name.split("-")[0] for name in images}
    assert {"bandwidth", "violin", "breakdown"} <= kinds
    for name in images:
        png = out / name
        assert png.exists(), name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        pixels = matplotlib.image.imread(png)
        assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
        assert pixels.std() > 0, f"{name} is blank"
    assert "Open MPI" in html and "ompio" in html and "Kruskal" in html
    assert "posix" in html and "mpiio-coll" in html


def test_compare_prints_ratios_against_the_baseline(campaign_dir: Path) -> None:
    proc = bench("compare", str(campaign_dir / "out" / "results.sqlite"))
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.startswith("  ")}
    assert rows["mpiio-coll"][4] == "1.00" and rows["mpiio-coll"][8] == "1.00"
    assert rows["posix"][-3:] == ["2×2", "50", "%"], "n = 2 launches x 2 repetitions, a 50 % interval"
    alt = bench("compare", str(campaign_dir / "out" / "results.sqlite"), "--baseline", "posix")
    rows = {line.split()[0]: line.split() for line in alt.stdout.splitlines() if line.startswith("  ")}
    assert rows["posix"][4] == "1.00"
    bad = bench("compare", str(campaign_dir / "out" / "results.sqlite"), "--baseline", "lustre")
    assert bad.returncode == 2 and "not a variant" in bad.stderr


FAILING = """
[campaign]
name = "failing"
output = "out"
seed = 1
repetitions = 1
ranks = [2]
backends = ["posix"]

[[kernels]]
name = "ior"
params = { block-size = "64K", transfer-size = ["48K", "16K"] }
"""


def test_failed_run_is_recorded_and_the_campaign_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "failing.toml"
    path.write_text(FAILING)
    c = load(path)
    outcome = run_campaign(c, progress=False)
    assert (outcome.done, outcome.failed, outcome.interrupted) == (2, 1, False)
    with Store(outcome.database, readonly=True) as store:
        runs = {json.loads(r["params"])["transfer-size"]: r for r in store.runs(store.campaign("failing")["id"])}
        bad, good = runs["48K"], runs["16K"]
        assert bad["status"] == "failed" and bad["exit_code"] == 2
        assert bad["message"].startswith("strata: error:") and "must divide" in bad["message"]
        assert "must divide" in bad["stderr_tail"]
        assert good["status"] == "ok" and good["verified"] == 1
        assert store.db.execute("SELECT COUNT(*) FROM metrics WHERE run_id = ?", (bad["id"],)).fetchone()[0] == 0
    report = bench("report", str(outcome.database), "-o", str(tmp_path / "r"))
    assert report.returncode == 0, report.stderr
    assert "must divide" in (tmp_path / "r" / "index.html").read_text()


def test_resume_keeps_the_recorded_order_when_the_file_has_no_seed(tmp_path: Path) -> None:
    path = tmp_path / "noseed.toml"
    path.write_text(
        FAILING.replace('name = "failing"', 'name = "noseed"')
        .replace("seed = 1\n", "")
        .replace('["48K", "16K"]', '"16K"')
        .replace("repetitions = 1", "repetitions = 3")
    )
    first = load(path)
    outcome = run_campaign(first, progress=False, limit=1)
    assert (outcome.done, outcome.interrupted, outcome.limited) == (1, False, True)
    second = load(path)
    outcome = run_campaign(second, resume=True, progress=False)
    assert (outcome.skipped, outcome.done, outcome.failed) == (1, 2, 0)
    assert second.seed == first.seed and [r.repetition for r in second.runs] == [r.repetition for r in first.runs]
    with Store(outcome.database, readonly=True) as store:
        runs = store.runs(store.campaign("noseed")["id"])
        assert sorted(r["repetition"] for r in runs) == [0, 1, 2]


def test_limit_is_a_success_that_says_how_to_go_on(tmp_path: Path) -> None:
    path = tmp_path / "limited.toml"
    path.write_text(
        FAILING.replace('name = "failing"', 'name = "limited"')
        .replace('["48K", "16K"]', '"16K"')
        .replace("repetitions = 1", "repetitions = 2")
    )
    limited = bench("run", str(path), "--limit", "1", "--quiet")
    # --limit is not an interruption (130): status 0, the run asked for succeeded, and how to go on.
    assert limited.returncode == 0, limited.stderr
    assert "stopped after 1 runs (--limit 1)" in limited.stderr and "--resume" in limited.stderr


def test_a_run_past_its_timeout_is_killed_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "slow.toml"
    path.write_text(
        FAILING.replace('name = "failing"', 'name = "slow"')
        .replace('"64K"', '"16M"')
        .replace('["48K", "16K"]', '"64K", segments = 4')
        .replace("repetitions = 1", "repetitions = 1\nrepetitions_per_launch = 100\ntimeout_s = 1.0")
    )
    outcome = run_campaign(load(path), progress=False)
    assert (outcome.done, outcome.failed) == (1, 1)
    with Store(outcome.database, readonly=True) as store:
        (run,) = store.runs(store.campaign("slow")["id"])
        assert run["exit_code"] == 124 and "timed out after 1 s" in run["message"]
        assert 1.0 <= run["wall_s"] < 10.0
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert left.stdout == "", "no rank may outlive its launch"


def test_force_starts_again_even_over_a_database_of_another_schema(tmp_path: Path) -> None:
    path = tmp_path / "again.toml"
    path.write_text(FAILING.replace('name = "failing"', 'name = "again"').replace('["48K", "16K"]', '"16K"'))
    c = load(path)
    assert run_campaign(c, progress=False).done == 1
    db = c.output / "results.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    outcome = run_campaign(load(path), force=True, progress=False)
    assert (outcome.skipped, outcome.done) == (0, 1), "old run folders are not taken for results"
    assert (c.output / "results.sqlite.schema-1").exists()
