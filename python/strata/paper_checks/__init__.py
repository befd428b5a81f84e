"""Paper checks: Strata's numbers beside the four papers' (the report's "Paper checks" section).

For every paper whose study a campaign ran (campaigns/*.toml), one section titled with the paper's
table names, with a row per checkable number: the paper's value, Strata's, and ✓ or ✗. Numbers
that are facts of the design — volumes, stripe counts, costs, fallback order, rounds — get a
verdict. Performance figures get none: the measured ratio stands beside the paper's, each labelled
with the scale it was measured at, since a 2-core machine and a 1 000-node cluster need not agree.

What Strata's C++ computes — the advisor's stripe counts, the cost model, the fallback order — is
asked of the `strata` binary (`strata advise --json`, `strata cost --json`), never recomputed here.
Measured values come from the campaign's records: a launch's value is the median of its in-launch
repetitions, a configuration's the median over its launches.
"""

from .checks import (
    TOY_MACHINE,
    cost_model_tables,
    mslio_section,
    multidataset_section,
    sections,
    striping_section,
    tapioca_section,
)
from .cli import StrataCli, advise_call
from .model import Check, Run, Section, Table, load_runs, median_over_launches, scale_of
from .render import to_html

__all__ = [
    "TOY_MACHINE",
    "Check",
    "Run",
    "Section",
    "StrataCli",
    "Table",
    "advise_call",
    "cost_model_tables",
    "load_runs",
    "median_over_launches",
    "mslio_section",
    "multidataset_section",
    "scale_of",
    "sections",
    "striping_section",
    "tapioca_section",
    "to_html",
]
