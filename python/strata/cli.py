"""strata-bench: run experiment campaigns and analyse their results.

Exit statuses: 0 success (with --limit N: the N runs asked for); 1 some runs failed; 2 a bad campaign file or
arguments; 130 interrupted (a signal).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from . import __version__
from .campaign import CampaignError, load, scales
from .runner import CampaignStateError, results_path, run_campaign
from .stats import campaign_stats, level_text, ratio_table
from .store import SchemaError, Store

EPILOG = """examples:
  strata-bench validate examples/demo.toml
  strata-bench run examples/demo.toml              # results in the campaign's output folder
  strata-bench run examples/demo.toml --resume     # finish an interrupted campaign
  strata-bench run campaigns/mslio.toml --scale cluster   # the same campaign at its cluster sizes
  strata-bench stats results/demo/results.sqlite
  strata-bench compare results/demo/results.sqlite --baseline hdf5
  strata-bench report results/demo/results.sqlite -o results/demo
  strata-bench calibrate results/stripes/results.sqlite --backend mpiio-coll
  strata-bench replay LOG.darshan -o trace.json    # a Darshan log as a trace (docs/replay.md)

The campaign file format and the database schema: docs/harness.md."""


def _error(message: str) -> int:
    print(f"strata-bench: error: {message}", file=sys.stderr)
    return 2


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        c = load(args.campaign, strata=args.strata, scale=args.scale)
    except CampaignError as e:
        return _error(str(e))
    cells = {cfg.cell for cfg in c.configurations}
    profiles = scales(args.campaign)
    scale_text = f", scale {c.scale}" if c.scale else (f", scale profiles: {', '.join(profiles)}" if profiles else "")
    print(
        f"{c.file}: campaign {c.name!r}: {len(c.configurations)} configurations ({len(cells)} cells × variants), "
        f"{c.repetitions} launches each, {len(c.runs)} runs, seed {c.seed}, launcher {c.launcher.kind}"
        f"{scale_text}, results in {results_path(c)}"
    )
    if args.list:
        for run in c.runs:
            cfg = run.configuration
            print(f"  {run.order:4d}  {cfg.cell} | {cfg.label} | launch {run.repetition + 1}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    try:
        c = load(args.campaign, strata=args.strata, scale=args.scale)
    except CampaignError as e:
        return _error(str(e))
    try:
        outcome = run_campaign(
            c, resume=args.resume, force=args.force, submit=args.submit, progress=not args.quiet, limit=args.limit
        )
    except (CampaignStateError, SchemaError) as e:
        return _error(str(e))
    if outcome.script is not None:
        print(
            f"wrote {outcome.script} ({outcome.total - outcome.skipped} runs); "
            + ("submitted" if args.submit else f"submit it with: sbatch {outcome.script}")
            + f"; then collect with: strata-bench run {args.campaign}"
            + (f" --scale {args.scale}" if args.scale else "")
            + " --resume"
        )
        return 0
    print(
        f"{c.name}: {outcome.done} runs now ({outcome.failed} failed), {outcome.skipped} already stored, "
        f"{outcome.total} in the campaign; results in {outcome.database}",
        file=sys.stderr,
    )
    if outcome.interrupted:
        scale = f" --scale {args.scale}" if args.scale else ""
        print(
            f"strata-bench: interrupted; continue with: strata-bench run {args.campaign}{scale} --resume",
            file=sys.stderr,
        )
        return 130
    if outcome.limited:
        scale = f" --scale {args.scale}" if args.scale else ""
        print(
            f"strata-bench: stopped after {outcome.done} runs (--limit {args.limit}); continue with: "
            f"strata-bench run {args.campaign}{scale} --resume",
            file=sys.stderr,
        )
    with Store(outcome.database, readonly=True) as store:
        failed = [r for r in store.runs(store.campaign(c.name)["id"]) if r["status"] != "ok"]
    return 1 if failed else 0


def _open(args: argparse.Namespace) -> Store:
    return Store(args.results, readonly=True)


def cmd_stats(args: argparse.Namespace) -> int:
    try:
        with _open(args) as store:
            cs = campaign_stats(store, args.campaign, args.baseline)
            failures = [r for r in store.runs(cs.campaign_id) if r["status"] != "ok"]
    except (FileNotFoundError, LookupError, SchemaError) as e:
        return _error(str(e).strip("'\""))
    if args.json:
        doc = cs.to_json()
        for cell in doc["cells"]:
            for cfg in cell["configs"]:
                cfg.pop("values", None)
                cfg.pop("times", None)
        print(json.dumps(doc, indent=2))
        return 0
    for cell in cs.cells:
        k = cell.kruskal
        test = "Kruskal-Wallis n/a" if k is None else f"Kruskal-Wallis H={k.h:.3f} p={k.p:.3g}"
        print(f"{cell.cell} [{cell.phase}]  {test}")
        for c in cell.configs:
            s = c.bandwidth
            ci = "CI none (one launch)" if s.launches < 2 else f"CI=[{s.ci_low:.2f}, {s.ci_high:.2f}] ({level_text(s)})"
            print(
                f"  {c.label:36s} n={s.shape:>5s} median={s.median:10.2f} mean={s.mean:10.2f} std={s.std:9.2f} "
                f"{ci} ratio={c.ratio:.3f}  MiB/s"
            )
    if failures:
        print(f"{len(failures)} failed runs (see `strata-bench compare` or the report)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    try:
        with _open(args) as store:
            cs = campaign_stats(store, args.campaign, args.baseline)
            failures = [r for r in store.runs(cs.campaign_id) if r["status"] != "ok"]
    except (FileNotFoundError, LookupError, SchemaError) as e:
        return _error(str(e).strip("'\""))
    print(ratio_table(cs, failures))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report

    out = args.output or Path(args.results).parent
    try:
        index = write_report(args.results, out, args.campaign, args.baseline)
    except (FileNotFoundError, LookupError, SchemaError) as e:
        return _error(str(e).strip("'\""))
    print(f"report: {index}")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .calibrate import CalibrationError, calibrate, table, write_json

    try:
        result = calibrate(args.results, args.campaign, args.backend, args.kernel, args.unverified)
    except CalibrationError as e:
        return _error(f"{args.results}: {e}")
    except sqlite3.DatabaseError as e:
        return _error(f"{args.results}: cannot read it as a results database ({e})")
    except (FileNotFoundError, LookupError, SchemaError) as e:
        return _error(str(e.args[0]) if e.args else str(e))
    if args.json == "-":
        print(json.dumps(result.to_json(), indent=2))
        return 0
    if args.json:
        try:
            write_json(result, args.json)
        except OSError as e:
            return _error(f"cannot write the JSON file {args.json}: {e.strerror}")
    print(table(result))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import main as replay_main  # noqa: PLC0415  (pydarshan loads only for this command)

    return replay_main(args.rest, prog="strata-bench replay")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="strata-bench", description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--version", action="version", version=f"strata-bench {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def campaign_cmd(name: str, help_text: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("campaign", type=Path, metavar="CAMPAIGN.toml")
        s.add_argument("--strata", type=Path, help="the strata binary (default: STRATA_BIN, build/bin/strata, PATH)")
        s.add_argument(
            "--scale",
            metavar="NAME",
            help="lay the file's [scale.NAME] profile over it (sizes, ranks, "
            "launcher; e.g. cluster); the campaign is then named NAME-SCALE unless the profile names it",
        )
        return s

    s = campaign_cmd("validate", "check a campaign file and count its runs, without running anything")
    s.add_argument("--list", action="store_true", help="also list the runs in their shuffled order")
    s.set_defaults(func=cmd_validate)

    s = campaign_cmd("run", "run a campaign: every configuration, shuffled, each run stored in SQLite")
    s.add_argument("--resume", action="store_true", help="continue a stored campaign without repeating finished runs")
    s.add_argument("--force", action="store_true", help="discard a stored campaign of the same name and start again")
    s.add_argument(
        "--submit",
        action="store_true",
        help="slurm launcher outside an allocation: submit the sbatch " "script it writes",
    )
    s.add_argument("--limit", type=int, metavar="N", help="stop after N runs (then --resume)")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_run)

    def results_cmd(name: str, help_text: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help_text, description=help_text)
        s.add_argument("results", type=Path, metavar="RESULTS.sqlite")
        s.add_argument("--campaign", help="campaign name (default: the latest in the file)")
        s.add_argument("--baseline", help="variant label to compute ratios against (default: the campaign's)")
        return s

    s = results_cmd(
        "stats",
        "per configuration: launches x repetitions, median of the launch medians, mean, std, "
        "the confidence interval over launches and its level; Kruskal-Wallis over launch medians per cell",
    )
    s.add_argument("--json", action="store_true", help="print JSON instead of text")
    s.set_defaults(func=cmd_stats)
    s = results_cmd("compare", "print the ratio table: median bandwidth per variant against the baseline")
    s.set_defaults(func=cmd_compare)
    s = results_cmd("report", "write DIR/index.html with plots, tables and the environment")
    s.add_argument("-o", "--output", type=Path, metavar="DIR", help="report folder (default: beside RESULTS)")
    s.set_defaults(func=cmd_report)

    help_text = (
        "fit the stripe-count rule (stripe count = a N + b for N nodes) to a campaign's measurements and "
        "show it beside the paper's 5.6N + 4.9 and 5N + 3"
    )
    s = sub.add_parser(
        "calibrate",
        help=help_text,
        description=help_text + ". The campaign must write at several "
        "node counts with the striping_factor (ROMIO) or stripe_width (OMPIO) hint varied; see "
        "docs/advisor.md.",
    )
    s.add_argument("results", type=Path, metavar="RESULTS.sqlite")
    s.add_argument("--campaign", help="campaign name (default: the latest in the file)")
    s.add_argument("--backend", metavar="B", help="use only the runs of this backend (default: all)")
    s.add_argument("--kernel", metavar="K", help="use only the runs of this kernel (default: all)")
    s.add_argument("--unverified", action="store_true", help="also use runs whose data was not verified")
    s.add_argument("--json", metavar="FILE", help="also write the fit as JSON to FILE (- prints only the JSON)")
    s.set_defaults(func=cmd_calibrate)

    help_text = "turn a Darshan log into a trace that `strata replay` runs (python -m strata.replay; docs/replay.md)"
    s = sub.add_parser("replay", help=help_text, description=help_text, add_help=False)
    s.add_argument("rest", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_replay)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["replay"]:  # its own parser, options and --help (strata.replay)
        return cmd_replay(argparse.Namespace(rest=argv[1:]))
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:  # `strata-bench stats ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
