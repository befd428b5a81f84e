"""The harness's HTML templates (Jinja2, autoescaped): the campaign report and the paper checks."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


@cache
def environment() -> jinja2.Environment:
    """Templates from this folder; every value escaped unless a template marks it safe; an undefined
    name is an error, not an empty string."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
