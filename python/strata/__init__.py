"""Strata's experiment harness: campaign files, a runner, a SQLite store, statistics, plots and reports."""

__version__ = "0.1.0"
