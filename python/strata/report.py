"""The HTML report: DIR/index.html with the plots (PNG files beside it), the tables and the environment."""

from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path

from . import paper_checks, plot
from .launch import find_strata
from .stats import CampaignStats, CellStats, Summary, campaign_stats, level_text, ratio_table
from .store import Store

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.3em 0; }
.fail { color: #a00; } .ok { color: #070; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.figs { display: flex; flex-wrap: wrap; gap: 0.5em; } .figs img { max-width: 49%; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _f(value: float, digits: int = 1) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _interval(s: Summary) -> str:
    return "none (one launch)" if s.launches < 2 else f"[{_f(s.ci_low)}, {_f(s.ci_high)}] ({level_text(s)})"


def _cell_table(cells: dict[str, CellStats], labels: list[str], baseline: str) -> str:
    rows = [
        "<table><tr><th class=l>variant</th><th>phase</th><th>launches × repetitions</th><th>median MiB/s</th>"
        "<th>confidence interval (level)</th>"
        "<th>mean</th><th>std</th><th>× baseline</th><th>median time ms</th><th>open / xfer / close ms</th>"
        "<th>runs ok / failed</th></tr>"
    ]
    for label in labels:
        for phase, cell in cells.items():
            c = next((x for x in cell.configs if x.label == label), None)
            if c is None:
                continue
            s = c.bandwidth
            b = c.breakdown
            name = f"{_e(label)} <i>(baseline)</i>" if label == baseline else _e(label)
            rows.append(
                f"<tr><td class=l>{name}</td><td>{phase}</td><td>{s.shape}</td><td>{_f(s.median)}</td>"
                f"<td>{_interval(s)}</td><td>{_f(s.mean)}</td><td>{_f(s.std)}</td>"
                f"<td>{_f(c.ratio, 2)}</td><td>{_f(c.time_s.median * 1e3, 2)}</td>"
                f"<td>{_f(b['open_s'] * 1e3, 2)} / {_f(b['xfer_s'] * 1e3, 2)} / {_f(b['close_s'] * 1e3, 2)}</td>"
                f"<td>{c.runs_ok} / {c.runs_failed}</td></tr>"
            )
    rows.append("</table>")
    tests = []
    for phase, cell in cells.items():
        k = cell.kruskal
        if k is None:
            tests.append(
                f"{phase}: Kruskal–Wallis not applicable (fewer than two variants with two launches or "
                "more, or identical values)"
            )
        else:
            verdict = "the variants differ" if k.p < 0.01 else "no significant difference"
            launches = sum(c.bandwidth.launches for c in cell.configs if c.bandwidth.launches > 1)
            tests.append(
                f"{phase}: Kruskal–Wallis H = {k.h:.2f}, p = {k.p:.3g} over {k.groups} variants' launch "
                f"medians ({launches} launches; {verdict} at p &lt; 0.01)"
            )
    return "\n".join(rows) + "<p>" + "<br>".join(tests) + "</p>"


def write_report(db_path: Path | str, out: Path | str, name: str | None = None, baseline: str | None = None) -> Path:
    """Writes OUT/index.html and its PNGs from a results database; returns the index path."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with Store(db_path, readonly=True) as store:
        cs: CampaignStats = campaign_stats(store, name, baseline)
        cid = cs.campaign_id
        campaign = store.campaign(cs.name)
        runs = store.runs(cid)
        envs = store.environments(cid)
        sessions = store.sessions(cid)
        # The paper checks ask a strata binary: STRATA_BIN, else the campaign's, else this tree's.
        stored = Path(campaign["strata"]) if campaign is not None else None
        usable = stored is not None and stored.exists() and not os.environ.get("STRATA_BIN")
        strata = stored if usable and stored is not None else find_strata()
        papers = paper_checks.sections(store, cs.name, cid, Path(db_path), strata)
        rank_times: dict[str, dict[tuple[str, str], list[float]]] = {}
        for r in store.rank_times(cid):
            rank_times.setdefault(r["cell"], {}).setdefault((r["label"], r["phase"]), []).append(r["time_s"])
    figures = plot.all_plots(cs, out_dir, rank_times)
    failures = [r for r in runs if r["status"] != "ok"]

    by_cell: dict[str, dict[str, CellStats]] = {}
    for c in cs.cells:
        by_cell.setdefault(c.cell, {})[c.phase] = c

    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>Strata campaign {_e(cs.name)}</title>"
        f"<style>{CSS}</style></head><body>",
        f"<h1>Strata campaign <code>{_e(cs.name)}</code></h1>",
        f"<p>{cs.runs_ok} runs ok, {cs.runs_failed} failed, of {cs.total_runs} planned; "
        f"runs in shuffled order (seed {cs.seed}); ratios against <b>{_e(cs.baseline)}</b>. "
        "Bandwidth is all ranks' bytes over the slowest rank's open + transfer + close time. "
        "A launch is the unit of replication: each figure is the median of the launch medians (the median of "
        "a launch's repetitions), its interval the distribution-free confidence interval of that median over "
        "the launches, at the level shown beside it (95 % needs 6 launches or more; with 3 it is the "
        "smallest to the largest launch median, 75 %), and the Kruskal–Wallis tests compare launch medians. "
        f"<b>{_e(cs.conditions.capitalize())}.</b></p>",
    ]
    if campaign is not None:
        parts.append(
            f"<p>Campaign file: <code>{_e(campaign['file'])}</code>, started {_e(campaign['created'])}, "
            f"launcher {_e(campaign['launcher'])}, binary <code>{_e(campaign['strata'])}</code>.</p>"
        )

    parts.append("<h2>Summary</h2><pre>" + _e(ratio_table(cs)) + "</pre>")
    parts.append(paper_checks.to_html(papers))

    for cell, phases in by_cell.items():
        s = plot.slug(cell)
        parts.append(f"<h2>{_e(cell)}</h2>")
        parts.append(_cell_table(phases, cs.labels, cs.baseline))
        parts.append("<div class=figs>")
        for prefix, alt in (
            ("bandwidth", "bandwidth by variant"),
            ("violin", "time distribution"),
            ("breakdown", "time breakdown"),
        ):
            parts.append(f"<img src='{prefix}-{s}.png' alt='{_e(alt)}: {_e(cell)}'>")
        parts.append("</div>")

    if figures["sweep"]:
        parts.append("<h2>Swept parameters</h2><div class=figs>")
        for p in figures["sweep"]:
            parts.append(f"<img src='{_e(p.name)}' alt='sweep {_e(p.stem)}'>")
        parts.append("</div>")

    parts.append(
        "<h2>Environment</h2><table><tr><th class=l>variant</th><th class=l>host</th><th>nodes</th>"
        "<th class=l>MPI</th><th class=l>I/O component</th><th class=l>file system</th>"
        "<th class=l>Strata</th><th class=l>hints in effect</th><th>runs</th></tr>"
    )
    for e in envs:
        hints = json.loads(e["hints"] or "{}")
        hint_text = ", ".join(f"{k}={v}" for k, v in sorted(hints.items())) or "–"
        parts.append(
            f"<tr><td class=l>{_e(e['label'])}</td><td class=l>{_e(e['host'])}</td><td>{_e(e['nodes'])}</td>"
            f"<td class=l>{_e(e['mpi_library'])} {_e(e['mpi_version'])}</td><td class=l>{_e(e['io_component'])}</td>"
            f"<td class=l>{_e(e['fs_type'])} (block {_e(e['fs_block_size'])})</td>"
            f"<td class=l>{_e(e['strata_version'])} ({_e(e['git_rev'])})</td><td class=l>{_e(hint_text)}</td>"
            f"<td>{e['runs']}</td></tr>"
        )
    parts.append("</table>")

    parts.append(f"<h2>Failed runs ({len(failures)})</h2>")
    if failures:
        parts.append(
            "<table><tr><th>run</th><th class=l>configuration</th><th>exit</th><th class=l>message</th>"
            "<th class=l>folder</th></tr>"
        )
        for f in failures:
            parts.append(
                f"<tr class=fail><td>{f['order_index']}</td><td class=l>{_e(f['cell'])} | {_e(f['label'])}"
                f"</td><td>{f['exit_code']}</td><td class=l>{_e(f['message'])}</td>"
                f"<td class=l><code>{_e(f['run_dir'])}</code></td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")

    parts.append(
        "<h2>Sessions</h2><table><tr><th>session</th><th class=l>started</th><th class=l>ended</th>"
        "<th>runs</th><th>failed</th><th class=l>interrupted</th></tr>"
    )
    for s in sessions:
        parts.append(
            f"<tr><td>{s['id']}</td><td class=l>{_e(s['started'])}</td><td class=l>{_e(s['ended'])}</td>"
            f"<td>{s['runs_done']}</td><td>{s['runs_failed']}</td>"
            f"<td class=l>{'yes' if s['interrupted'] else 'no'}</td></tr>"
        )
    parts.append("</table></body></html>")
    index = out_dir / "index.html"
    index.write_text("\n".join(parts) + "\n")
    return index
