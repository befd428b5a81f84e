"""The documentation's commands, tested (issue 33): every shell block of README.md and docs/ is
read; every command in it is checked for what fails when a new user pastes it on a 2-core machine,
and every page's commands are run, in order, in a scratch folder of the page's own beside the build
(the pages side by side), their shown output (the `# ` lines right after a command) compared with
what they print.

A command that cannot run here carries `# [not run here: REASON]` in the doc. Shown output is
compared line by line in order (lines may come between; `...` stands for anything, alone or inside
a line; the home folder prints as `~`); numbers with a decimal point are taken as measurements and
match any number, whole numbers must be equal. A command that fails shows its status (`# exit N`).
A page's `export` lines and variable assignments hold for the commands after them, as in one shell
(an assignment's value is taken once, so a command substitution in it runs once).
Paths under /tmp are the scratch folder's own tmp/ (printed back as /tmp), so two pages, or two
runs of the suite, never write the same file."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import BASE_ENV, MPI, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
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
    """Paths earlier commands write: --output / -o / --drain values and redirections."""
    made: set[str] = set()
    for c in commands:
        w = words(c)
        for k, word in enumerate(w[:-1]):
            if word in ("--output", "-o", "--drain", ">", "--json", "of="):
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
    """A folder in which the docs' relative paths (build/bin/strata, .venv, examples/...) resolve.
    The campaign folders are copies: a campaign stores its results beside its file (../results)."""
    tmp.mkdir(parents=True, exist_ok=True)
    for name in ("build", ".venv", "docs", "tests", "python", "bench"):
        if (ROOT / name).exists():
            (tmp / name).symlink_to(ROOT / name)
    for name in ("examples", "campaigns"):
        shutil.copytree(ROOT / name, tmp / name, symlinks=True)
    return tmp


ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(\$\([^)]*\)|[^\s;&|]+)\s*(#.*)?$")
TMP = re.compile(r"(?<![\w.$/~-])/tmp(?=/|\s|$|\")")


def carried(cmd: Command) -> bool:
    """An `export` line or a line of variable assignments alone: it holds for later commands."""
    return cmd.text.startswith("export ") or ASSIGNMENT.match(cmd.text) is not None


def shown_statuses(cmd: Command) -> set[int]:
    """The statuses the doc shows under a command (`# exit N`): a command that fails must show it."""
    return {int(s.split()[1]) for s in cmd.shown if re.fullmatch(r"exit \d+", s)}


def run_page(doc: str, tmp: Path) -> tuple[list[str], float]:
    """The problems of a page's commands, and the seconds they took."""
    start = time.monotonic()
    work = scratch(tmp)
    (work / "tmp").mkdir()
    # The pages run side by side: each page's launches get a session folder of their own.
    with MPI.own_session(dict(BASE_ENV, HOME=str(tmp / "home"), STRATA_TIMEOUT="60")) as env:
        problems = run_commands(doc, work, tmp, env)
    return problems, time.monotonic() - start


def run_commands(doc: str, work: Path, tmp: Path, env: dict[str, str]) -> list[str]:
    """The problems of a page's commands, run one after another in `work` with `env`."""
    problems = []
    exports = ""  # a page's `export` lines and assignments hold for the commands after them
    value = tmp.with_name(tmp.name + ".value")  # an assignment's value, outside the page's folders
    for c in (c for b in blocks(ROOT / doc) for c in b):
        if c.not_run:
            continue
        text = TMP.sub(str(work / "tmp"), c.text)
        script = "set -o pipefail\n" + exports + text
        assigned = ASSIGNMENT.match(c.text)
        if assigned:  # the value it gives, carried instead of the command (which may take seconds)
            value.unlink(missing_ok=True)
            script += f'\nstatus=$?; printf %s "${assigned[1]}" > {shlex.quote(str(value))}; exit $status'
        if c.text.startswith("export "):
            exports += text + "\n"
        try:
            proc = subprocess.run(
                ["bash", "-c", script],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
        except subprocess.TimeoutExpired:
            problems.append(f"{c.where}: {c.text.splitlines()[0]}\n    did not finish in 120 s")
            continue
        if assigned:  # (the command itself when bash never came to the value)
            exports += f"{assigned[1]}={shlex.quote(value.read_text())}\n" if value.exists() else text + "\n"
        printed = (proc.stdout + proc.stderr).replace(str(work / "tmp"), "/tmp").replace(env["HOME"], "~")
        if proc.returncode != 0 and proc.returncode not in shown_statuses(c):
            problems.append(
                f"{c.where}: {c.text.splitlines()[0]}\n    exit {proc.returncode} (the doc shows "
                f"{sorted(shown_statuses(c)) or 'none'}): {printed.strip()[-600:]}"
            )
        elif c.shown and (p := shown_problem([x for x in c.shown if x != f"exit {proc.returncode}"], printed)):
            problems.append(f"{c.where}: {c.text.splitlines()[0]}\n    {p}; it printed:\n{printed.strip()[-600:]}")
    return problems


def expected_cost(doc: Path) -> int:
    """What a page's commands take, roughly, in launches: a `strata replay` counts as ten (it
    writes and reads back a log's phases through three backends, about ten seconds here)."""
    runs = [c for b in blocks(doc) for c in b if not c.not_run and not carried(c)]
    return sum(10 if "replay" in words(c) else 1 for c in runs)


def test_the_pages_commands_run_and_print_what_they_show(tmp_path: Path) -> None:
    """Every page's commands (README.md and docs/), the pages side by side, four at a time: most
    commands are launches of a few ranks that wait on their start and their files as much as on
    the cores. The longest pages first, so that none is left to run alone at the end."""
    pages = [str(d.relative_to(ROOT)) for d in sorted(DOCS, key=expected_cost, reverse=True)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda d: run_page(d, tmp_path / d.replace("/", "_")), pages))
    slowest = sorted(zip(pages, (t for _, t in results), strict=True), key=lambda x: -x[1])[:5]
    print("slowest pages: " + ", ".join(f"{p} {t:.1f} s" for p, t in slowest))
    problems = [p for r, _ in results for p in r]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("doc", [d.relative_to(ROOT) for d in DOCS], ids=str)
def test_not_run_commands_say_why(doc: Path) -> None:
    for b in blocks(ROOT / doc):
        for c in b:
            if "not run here" in c.text:
                assert c.not_run and len(c.not_run.strip()) > 8, f"{c.where}: give the reason: # [not run here: WHY]"
