"""The documentation's commands, tested (issue 33): every shell block of README.md and docs/ is
read; every command in it is checked for what fails when a new user pastes it on a 2-core machine,
and the commands of the pages in EXECUTED are run, in order, in a scratch folder beside the build,
their shown output (the `# ` lines right after a command) compared with what they print.

A command that cannot run here carries `# [not run here: REASON]` in the doc. Shown output is
compared line by line in order (lines may come between; `...` stands for anything, alone or inside
a line; the home folder prints as `~`); numbers with a decimal point are taken as measurements and
match any number, whole numbers must be equal."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import BASE_ENV, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# The pages whose commands run (the others are checked without running them).
EXECUTED = ["README.md", "docs/engine.md", "docs/tiers.md", "docs/running.md"]
FENCE = re.compile(r"^```(sh|bash|shell|console)\s*$")
NOT_RUN = re.compile(r"#\s*\[not run here: ([^\]]+)\]")
CORES = os.cpu_count() or 2


@dataclass
class Command:
    doc: Path
    line: int
    text: str
    shown: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    @property
    def not_run(self) -> str | None:
        m = NOT_RUN.search(self.text)
        return m.group(1) if m else None


def blocks(doc: Path) -> list[list[Command]]:
    """The shell blocks of a page, each a list of commands with the output shown under them."""
    out: list[list[Command]] = []
    block: list[Command] | None = None
    capturing = False
    pending = ""
    for n, line in enumerate(doc.read_text().splitlines(), start=1):
        if block is None:
            if FENCE.match(line):
                block, capturing = [], False
            continue
        if line.startswith("```"):
            out.append(block)
            block = None
            continue
        if pending:  # a continued command
            pending += "\n" + line
            block[-1].text = pending
            if not line.rstrip().endswith("\\"):
                pending = ""
            continue
        if not line.strip():
            capturing = False
        elif line.startswith("#"):
            if capturing and block:
                block[-1].shown.append(line[1:].strip())
        elif line[0].isspace() and line.strip().startswith("#"):
            continue  # a trailing comment carried onto the next line
        else:
            block.append(Command(doc, n, line))
            capturing = True
            if line.rstrip().endswith("\\"):
                pending = line
    return out


def all_commands() -> list[Command]:
    return [c for doc in DOCS for b in blocks(doc) for c in b]


def words(cmd: Command) -> list[str]:
    text = NOT_RUN.sub("", cmd.text).replace("\\\n", " ")
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return text.split()


# ---- checks of every command, run or not -------------------------------------------------------


def ranks_problem(cmd: Command) -> str | None:
    w = words(cmd)
    if "mpirun" not in w:
        return None
    i = w.index("mpirun")
    for flag in ("-np", "-n"):
        if flag in w[i:]:
            n = w[w.index(flag, i) + 1]
            if n.isdigit() and int(n) > CORES and "--oversubscribe" not in w:
                return f"{n} ranks on a {CORES}-core machine need --oversubscribe (else: not enough slots)"
    return None


def outputs_made(commands: list[Command]) -> set[str]:
    """Paths earlier commands write: --output / -o values and redirections."""
    made: set[str] = set()
    for c in commands:
        w = words(c)
        for k, word in enumerate(w[:-1]):
            if word in ("--output", "-o", ">", "--json", "of="):
                made.add(w[k + 1])
        made |= {word.split("=", 1)[1] for word in w if word.startswith(("--output=", "of="))}
    return made


def campaign_output(path: str) -> str | None:
    """The results database a campaign file stores into (its [campaign] output, results/NAME)."""
    file = ROOT / path
    if not file.is_file():
        return None
    doc = tomllib.loads(file.read_text())["campaign"]
    output = (file.parent / doc.get("output", "results/" + doc["name"])).resolve()
    return f"{os.path.relpath(output, ROOT)}/results.sqlite"


def make_target_campaigns(target: str) -> list[str]:
    """Campaigns a Makefile target runs (`make demo` runs examples/demo.toml)."""
    text = (ROOT / "Makefile").read_text()
    m = re.search(rf"^{target}:.*?\n((?:\t.*\n)+)", text, re.M)
    return re.findall(r"strata-bench run (\S+\.toml)", m.group(1)) if m else []


def campaign_problems(doc_commands: list[Command]) -> list[tuple[Command, str]]:
    """A campaign run twice without --resume or --force refuses; a results database used before a
    command of the page makes it names nothing."""
    problems = []
    stored: set[str] = set()  # campaigns already stored by an earlier command of the page
    databases: set[str] = set()
    for c in doc_commands:
        w = words(c)
        ran: list[str] = []
        if w[:1] == ["make"]:
            ran = [x for t in w[1:] for x in make_target_campaigns(t)]
        elif "strata-bench" in " ".join(w[:1]) and w[1:2] == ["run"]:
            ran = [w[2]]
            scale = w[w.index("--scale") + 1] if "--scale" in w[:-1] else ""
            if scale:  # another scale profile: another campaign in the database's eyes
                stored.add(f"{w[2]} --scale {scale}")
                continue
            if w[2] in stored and not {"--resume", "--force"} & set(w):
                problems.append(
                    (
                        c,
                        f"{w[2]} is stored already (by an earlier command): run refuses it without "
                        "--resume or --force",
                    )
                )
        for campaign in ran:
            stored.add(campaign)
            if db := campaign_output(campaign):
                databases.add(db)
        if "strata-bench" in " ".join(w[:1]) and w[1:2] in (["compare"], ["report"], ["calibrate"], ["stats"]):
            if w[2].endswith(".sqlite") and w[2] not in databases:
                problems.append((c, f"{w[2]}: no command before it on this page makes it (run its campaign first)"))
    return problems


def verify_problems(doc_commands: list[Command]) -> list[tuple[Command, str]]:
    """`strata verify PATH` of a PATH that no command before it on the page writes."""
    problems = []
    for k, c in enumerate(doc_commands):
        w = words(c)
        if "verify" in w and any(x.endswith("strata") for x in w[: w.index("verify")]):
            paths = [x for x in w[w.index("verify") + 1 :] if not x.startswith("-")]
            made = outputs_made(doc_commands[:k])
            for p in paths[:1]:
                if p not in made:
                    problems.append((c, f"strata verify {p}: no command before it on this page writes {p}"))
    return problems


def test_every_command_can_be_pasted_on_this_machine() -> None:
    problems = []
    for doc in DOCS:
        commands = [c for b in blocks(doc) for c in b]
        problems += [(c, p) for c in commands if (p := ranks_problem(c))]
        problems += campaign_problems(commands)
        problems += verify_problems(commands)
    assert not problems, "\n".join(f"{c.where}: {c.text.splitlines()[0]}\n    {p}" for c, p in problems)


# ---- the pages whose commands run ---------------------------------------------------------------

NUMBER = re.compile(r"\d+\.\d+(e[-+]?\d+)?")
# A measured time changes its unit with the machine and its load (the nvr tier's latency is
# "5.3 ms" on one run and "375 us" on the next): a time is any number with any time unit.
TIME = re.compile(r"(?<![\w.])\d+(\.\d+)?(e[-+]?\d+)? (ns|us|ms|s)\b")


def normal(line: str) -> str:
    return " ".join(NUMBER.sub("<n>", TIME.sub("<time>", line)).split())


def matches(want: str, line: str) -> bool:
    """`want` is in `line`, a `...` inside it standing for anything."""
    return re.search(".*".join(re.escape(part) for part in want.split("...")), line) is not None


def shown_problem(shown: list[str], printed: str) -> str | None:
    lines = [normal(x) for x in printed.splitlines()]
    at = 0
    for want in (normal(s) for s in shown):
        if want in ("...", ""):
            continue
        hit = next((k for k in range(at, len(lines)) if matches(want, lines[k])), None)
        if hit is None:
            return f"the doc shows {want!r}, which the command does not print (after line {at})"
        at = hit  # the next shown line may be the rest of this one, wrapped
    return None


def scratch(tmp: Path) -> Path:
    """A folder in which the docs' relative paths (build/bin/strata, .venv, examples/...) resolve."""
    tmp.mkdir(parents=True, exist_ok=True)
    for name in ("build", ".venv", "docs", "examples", "tests", "campaigns", "python", "bench"):
        if (ROOT / name).exists():
            (tmp / name).symlink_to(ROOT / name)
    return tmp


def run_page(doc: str, tmp: Path) -> list[str]:
    work = scratch(tmp)
    problems = []
    env = dict(BASE_ENV, HOME=str(tmp / "home"), STRATA_TIMEOUT="60")
    exports = ""  # a page's `export` lines hold for the commands after them, as in one shell
    for c in (c for b in blocks(ROOT / doc) for c in b):
        if c.not_run:
            continue
        if c.text.startswith("export "):
            exports += c.text + "\n"
        try:
            proc = subprocess.run(
                ["bash", "-c", "set -o pipefail\n" + exports + c.text],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            problems.append(f"{c.where}: {c.text.splitlines()[0]}\n    did not finish in 120 s")
            continue
        printed = (proc.stdout + proc.stderr).replace(env["HOME"], "~")
        if proc.returncode != 0 and not any(s.startswith("exit ") for s in c.shown):
            problems.append(
                f"{c.where}: {c.text.splitlines()[0]}\n    exit {proc.returncode}: " f"{printed.strip()[-600:]}"
            )
        elif c.shown and (p := shown_problem(c.shown, printed)):
            problems.append(f"{c.where}: {c.text.splitlines()[0]}\n    {p}")
    return problems


def test_the_pages_commands_run_and_print_what_they_show(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda d: run_page(d, tmp_path / d.replace("/", "_")), EXECUTED))
    problems = [p for r in results for p in r]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("doc", [d.relative_to(ROOT) for d in DOCS], ids=str)
def test_not_run_commands_say_why(doc: Path) -> None:
    for b in blocks(ROOT / doc):
        for c in b:
            if "not run here" in c.text:
                assert c.not_run and len(c.not_run.strip()) > 8, f"{c.where}: give the reason: # [not run here: WHY]"
