"""Strata from Python: the engine's binding (`strata.Phase`, `strata.Engine`, `strata.Error`:
docs/python.md) and the experiment harness (campaign files, a runner, a SQLite store,
statistics, plots and reports: docs/harness.md).

The binding is the compiled module `strata._phase` (python/ext/phase_module.cpp, built by
`make`); it is imported on first use of one of its names, so the harness never loads MPI.
"""

from __future__ import annotations

__version__ = "0.1.0"

_BINDING = ("Phase", "Engine", "Error")


def __getattr__(name: str) -> object:
    if name in _BINDING:
        try:
            from strata import _phase
        except ImportError as e:
            raise ImportError(
                f"strata.{name} needs the compiled binding strata._phase, which is not built: "
                f"run `make build` ({e})"
            ) from e
        return getattr(_phase, name)
    raise AttributeError(f"module 'strata' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_BINDING])
