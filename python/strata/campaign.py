"""Campaign files: read a TOML description, check it, and expand it into an ordered list of runs.

A campaign is a grid: kernels with parameter grids, rank counts and variants (a backend with its
hints, MCA parameters, extra options and environment). Every point of the grid is a
*configuration*; every configuration is launched `repetitions` times, each launch a *run*. The
runs are shuffled with a recorded seed, so that slow drifts of the machine (other users, caches
warming up) spread over all configurations instead of favouring the ones that ran first.

Every check happens here, before anything runs; errors name the file, the key and what is allowed.
See docs/harness.md for the format.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import os
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .catalogue import StrataCatalogue, SwitchState
from .launch import HARNESS_OPTIONS, LauncherSpec, find_strata

OPERATIONS = ("write", "read")
LAUNCHERS = ("local", "slurm")
# `strata run` options the harness sets itself (launch.strata_arguments); a campaign may not put
# them in a kernel's params. The campaign-wide switches of the catalogue are set by it too.
RESERVED_OPTIONS = {*HARNESS_OPTIONS, "backend", "help"}


def reserved_options(cat: StrataCatalogue) -> set[str]:
    """The harness's own options and the catalogue's campaign-wide switches (keys of [campaign])."""
    return RESERVED_OPTIONS | {s.name for s in cat.switches}


class CampaignError(ValueError):
    """A campaign file that cannot be run, with the file, the key and what is allowed."""

    def __init__(self, file: Path | str, key: str, problem: str, allowed: str | None = None) -> None:
        self.file, self.key, self.problem, self.allowed = str(file), key, problem, allowed
        message = f"{file}: {key}: {problem}"
        if allowed:
            message += f" (allowed: {allowed})"
        super().__init__(message)


@dataclass(frozen=True)
class Variant:
    """A backend with everything that goes with it for one configuration."""

    label: str
    backend: str
    hints: tuple[tuple[str, str], ...] = ()
    mca: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    launcher_args: tuple[str, ...] = ()
    selector: str = "backend"  # the option that takes `backend`: --backend, or an application kernel's --mode


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: a kernel with fixed parameters, a rank count and a variant."""

    kernel: str
    params: tuple[tuple[str, str], ...]
    ranks: int
    variant: Variant

    @property
    def label(self) -> str:
        return self.variant.label

    @property
    def cell(self) -> str:
        """What the variants are compared on: the kernel, its parameters and the ranks."""
        params = " ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.kernel} {params} ranks={self.ranks}".replace("  ", " ")

    def as_dict(self) -> dict[str, Any]:
        v = self.variant
        out = {
            "kernel": self.kernel,
            "params": dict(self.params),
            "ranks": self.ranks,
            "label": v.label,
            "backend": v.backend,
            "hints": dict(v.hints),
            "mca": dict(v.mca),
            "args": list(v.args),
            "env": dict(v.env),
            "launcher_args": list(v.launcher_args),
        }
        if v.selector != "backend":
            out["selector"] = v.selector
        return out

    @property
    def key(self) -> str:
        blob = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]

    @property
    def slug(self) -> str:
        text = f"{self.kernel}-{self.label}-n{self.ranks}-{self.key[:6]}"
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


@dataclass(frozen=True)
class Run:
    """One launch of a configuration; `order` is its place in the shuffled campaign."""

    order: int
    configuration: Configuration
    repetition: int

    @property
    def dirname(self) -> str:
        return f"{self.order:04d}-{self.configuration.slug}-r{self.repetition}"


@dataclass
class Campaign:
    file: Path
    text: str
    name: str
    output: Path
    data_dir: Path
    seed: int
    explicit_seed: bool
    shuffle: bool
    repetitions: int
    repetitions_per_launch: int
    wait_s: float
    operations: tuple[str, ...]
    verify: bool
    # The campaign-wide switches of the catalogue (fsync), each a key of [campaign]: see
    # CampaignSwitch in catalogue.py.
    switches: tuple[SwitchState, ...]
    timeout_s: float
    baseline: str
    keep_data: bool
    launcher: LauncherSpec
    strata: Path
    configurations: list[Configuration] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    scale: str | None = None  # the [scale.NAME] profile laid over the file, None for the file as written

    def switch(self, name: str) -> bool:
        """Whether the campaign-wide switch `name` is on (False for one this campaign does not have)."""
        return any(s.on for s in self.switches if s.name == name)

    def reseed(self, seed: int) -> None:
        """Shuffles again with another seed (resuming a campaign whose file left the seed to chance)."""
        self.seed = seed
        self.runs = _order(self.configurations, self.repetitions, seed if self.shuffle else None)

    @property
    def plan_hash(self) -> str:
        """Identifies the expanded run list; resuming needs the same one."""
        blob = json.dumps([[r.order, r.configuration.key, r.repetition] for r in self.runs])
        return hashlib.sha1(blob.encode()).hexdigest()[:16]


def _order(configurations: list[Configuration], repetitions: int, seed: int | None) -> list[Run]:
    """Every configuration `repetitions` times, shuffled with `seed` (None keeps the file's order)."""
    pairs = [(c, rep) for c in configurations for rep in range(repetitions)]
    if seed is not None:
        random.Random(seed).shuffle(pairs)
    return [Run(i + 1, c, rep) for i, (c, rep) in enumerate(pairs)]


# -- reading ---------------------------------------------------------------------------------------

_SCALAR = (str, int, float, bool)


def _type_name(value: Any) -> str:
    return {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "table"}.get(
        type(value), type(value).__name__
    )


class _Reader:
    def __init__(self, file: Path) -> None:
        self.file = file

    def error(self, key: str, problem: str, allowed: str | None = None) -> CampaignError:
        return CampaignError(self.file, key, problem, allowed)

    def check_keys(self, table: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                raise self.error(f"{where}.{key}" if where else key, "unknown key", ", ".join(allowed))

    def get(self, table: dict[str, Any], where: str, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        if key not in table:
            return default
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # TOML booleans are not integers here, although Python's bool is an int.
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            names = " or ".join(_type_name(k()) if k is not list else "array" for k in kinds)
            raise self.error(
                f"{where}.{key}" if where else key, f"expected {names}, got {_type_name(value)} " f"{value!r}"
            )
        return value

    def str_list(self, table: dict[str, Any], where: str, key: str, default: list[str]) -> list[str]:
        value = self.get(table, where, key, list, default)
        for item in value:
            if not isinstance(item, str):
                raise self.error(f"{where}.{key}", f"expected an array of strings, found {_type_name(item)} {item!r}")
        return list(value)

    def str_table(self, table: dict[str, Any], where: str, key: str) -> dict[str, Any]:
        value = self.get(table, where, key, dict, {})
        for k, v in value.items():
            if isinstance(v, list):
                if not v:
                    raise self.error(
                        f"{where}.{key}.{k}",
                        "empty grid: the array has no values",
                        "a value or a non-empty array of values",
                    )
                bad = [x for x in v if not isinstance(x, _SCALAR)]
            else:
                bad = [] if isinstance(v, _SCALAR) else [v]
            if bad:
                raise self.error(
                    f"{where}.{key}.{k}",
                    f"expected a string, number or boolean, got " f"{_type_name(bad[0])} {bad[0]!r}",
                )
        return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _axes(table: dict[str, Any]) -> list[list[tuple[str, Any]]]:
    """Each key becomes an axis of (key, value) pairs; a scalar is a one-value axis."""
    return [[(k, x) for x in (v if isinstance(v, list) else [v])] for k, v in table.items()]


def _ranks(reader: _Reader, table: dict[str, Any], where: str, default: list[int]) -> list[int]:
    if "ranks" not in table:
        return default
    value = table["ranks"]
    values = value if isinstance(value, list) else [value]
    if not values:
        raise reader.error(f"{where}.ranks", "empty grid: no rank counts", "positive integers")
    for r in values:
        if isinstance(r, bool) or not isinstance(r, int) or r < 1:
            raise reader.error(f"{where}.ranks", f"expected positive integers, got {r!r}", "positive integers")
    return list(values)


def scales(path: Path | str) -> list[str]:
    """The scale profiles a campaign file defines (its [scale.NAME] tables), without checking the rest."""
    try:
        doc = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return []
    table = doc.get("scale", {})
    return sorted(table) if isinstance(table, dict) else []


def _apply_scale(reader: _Reader, doc: dict[str, Any], scale: str | None) -> dict[str, Any]:
    """The document with scale profile `scale` laid over it (None: the file as written).

    A profile ([scale.NAME]) may hold `campaign` and `launcher` tables, whose keys replace the
    file's; `kernels` and `variants`, either as arrays of tables ([[scale.NAME.kernels]]) that
    replace the file's whole lists, or as tables keyed by kernel name or variant label: a
    `kernels.KERNEL` table's `params` are merged option by option into every [[kernels]] table of
    that kernel and its other keys (ranks, modes) replace the table's; a `variants.LABEL` table's
    keys replace those of the variant with that label. Without `campaign.name`, the profile's
    campaign is named NAME-SCALE, so its results never mix with the file's own."""
    profiles = doc.pop("scale", {})
    if not isinstance(profiles, dict):
        raise reader.error("scale", f"expected a table of profiles, got {_type_name(profiles)}", "[scale.NAME] tables")
    if scale is None:
        return doc
    if scale not in profiles:
        raise reader.error(
            f"scale.{scale}",
            "no such scale profile in the file",
            ", ".join(sorted(profiles)) or "none: add a [scale.NAME] table",
        )
    profile = profiles[scale]
    where = f"scale.{scale}"
    if not isinstance(profile, dict):
        raise reader.error(where, f"expected a table, got {_type_name(profile)}")
    reader.check_keys(profile, where, ("campaign", "launcher", "kernels", "variants"))
    out = dict(doc)
    for section in ("campaign", "launcher"):
        over = reader.get(profile, where, section, dict, {})
        out[section] = {**reader.get(doc, "", section, dict, {}), **over}
    if "name" not in reader.get(profile, where, "campaign", dict, {}) and isinstance(out["campaign"].get("name"), str):
        out["campaign"]["name"] = f"{out['campaign']['name']}-{scale}"
    for section, key in (("kernels", "name"), ("variants", "label")):
        over = reader.get(profile, where, section, (dict, list), {})
        if isinstance(over, list):
            out[section] = over
            continue
        tables = reader.get(doc, "", section, list, [])
        known = {t.get(key, t.get("backend")) for t in tables if isinstance(t, dict)}
        for name, changes in over.items():
            if name not in known:
                raise reader.error(
                    f"{where}.{section}.{name}",
                    f"no [[{section}]] table with {key} {name!r}",
                    ", ".join(sorted(str(k) for k in known)),
                )
            if not isinstance(changes, dict):
                raise reader.error(f"{where}.{section}.{name}", f"expected a table, got {_type_name(changes)}")
        merged = []
        for t in tables:
            changes = over.get(t.get(key, t.get("backend"))) if isinstance(t, dict) else None
            if changes is None:
                merged.append(t)
                continue
            params = {**t.get("params", {}), **changes.get("params", {})} if section == "kernels" else None
            t = {**t, **changes}
            if params is not None:
                t["params"] = params
            merged.append(t)
        if tables:
            out[section] = merged
    return out


def load(
    path: Path | str, strata: Path | None = None, catalogue: StrataCatalogue | None = None, scale: str | None = None
) -> Campaign:
    """Reads and checks a campaign file and expands it into shuffled runs, with scale profile
    `scale` laid over the file when given. Raises CampaignError."""
    file = Path(path)
    reader = _Reader(file)
    try:
        text = file.read_text()
    except OSError as e:
        raise CampaignError(file, "(file)", f"cannot read: {e.strerror}") from e
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(file, "(syntax)", f"not valid TOML: {e}") from e

    reader.check_keys(doc, "", ("campaign", "launcher", "kernels", "variants", "scale"))
    doc = _apply_scale(reader, doc, scale)
    top = reader.get(doc, "", "campaign", dict, None)
    if top is None:
        raise reader.error("campaign", "missing table [campaign]", "a [campaign] table with at least name")
    strata_text = reader.get(top, "campaign", "strata", str, "")
    strata_bin = strata or (Path(strata_text) if strata_text else find_strata())
    if not strata_bin.exists():
        raise CampaignError(
            file,
            "campaign.strata",
            f"the strata binary {strata_bin} does not exist",
            "run `make build`, or set STRATA_BIN or campaign.strata",
        )
    cat = catalogue or StrataCatalogue.from_binary(strata_bin)
    reserved = reserved_options(cat)
    reader.check_keys(
        top,
        "campaign",
        (
            "name",
            "description",
            "output",
            "data_dir",
            "seed",
            "shuffle",
            "repetitions",
            "repetitions_per_launch",
            "wait_s",
            "operations",
            "verify",
            *(s.name for s in cat.switches),
            "timeout_s",
            "baseline",
            "ranks",
            "backends",
            "keep_data",
            "strata",
        ),
    )
    name = reader.get(top, "campaign", "name", str, None)
    if not name or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise reader.error("campaign.name", f"missing or unusable name {name!r}", "letters, digits, _ . -")
    base = file.resolve().parent
    output = Path(os.path.normpath(base / reader.get(top, "campaign", "output", str, f"results/{name}")))
    _check_output_folder(reader, output)
    data_dir_text = reader.get(top, "campaign", "data_dir", str, "")
    data_dir = Path(os.path.normpath(base / data_dir_text)) if data_dir_text else output / "data"

    seed = reader.get(top, "campaign", "seed", int, None)
    explicit_seed = seed is not None
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**31)
    repetitions = reader.get(top, "campaign", "repetitions", int, 3)
    per_launch = reader.get(top, "campaign", "repetitions_per_launch", int, 1)
    for key, value in (("repetitions", repetitions), ("repetitions_per_launch", per_launch)):
        if value < 1:
            raise reader.error(f"campaign.{key}", f"must be at least 1, got {value}", "positive integers")
    wait_s = float(reader.get(top, "campaign", "wait_s", float, 0.0))
    timeout_s = float(reader.get(top, "campaign", "timeout_s", float, 600.0))
    if wait_s < 0 or timeout_s <= 0:
        raise reader.error("campaign.wait_s/timeout_s", "must be positive", "wait_s >= 0, timeout_s > 0")
    operations = tuple(reader.str_list(top, "campaign", "operations", ["write", "read"]))
    if not operations or any(op not in OPERATIONS for op in operations):
        raise reader.error("campaign.operations", f"got {list(operations)!r}", "a non-empty subset of write, read")

    launcher_table = reader.get(doc, "", "launcher", dict, {})
    reader.check_keys(
        launcher_table,
        "launcher",
        (
            "type",
            "mpirun",
            "srun",
            "sbatch",
            "args",
            "partition",
            "account",
            "time",
            "nodes",
            "ntasks_per_node",
            "sbatch_args",
            "oversubscribe",
        ),
    )
    kind = reader.get(launcher_table, "launcher", "type", str, "local")
    if kind not in LAUNCHERS:
        raise reader.error("launcher.type", f"unknown launcher {kind!r}", ", ".join(LAUNCHERS))
    nodes = reader.get(launcher_table, "launcher", "nodes", int, 0)
    per_node = reader.get(launcher_table, "launcher", "ntasks_per_node", int, 0)
    launcher = LauncherSpec(
        kind=kind,
        mpirun=reader.get(launcher_table, "launcher", "mpirun", str, "mpirun"),
        srun=reader.get(launcher_table, "launcher", "srun", str, "srun"),
        sbatch=reader.get(launcher_table, "launcher", "sbatch", str, "sbatch"),
        args=tuple(reader.str_list(launcher_table, "launcher", "args", [])),
        partition=reader.get(launcher_table, "launcher", "partition", str, ""),
        account=reader.get(launcher_table, "launcher", "account", str, ""),
        time=reader.get(launcher_table, "launcher", "time", str, "01:00:00"),
        nodes=nodes,
        ntasks_per_node=per_node,
        sbatch_args=tuple(reader.str_list(launcher_table, "launcher", "sbatch_args", [])),
        oversubscribe=reader.get(launcher_table, "launcher", "oversubscribe", str, "auto"),
    )
    if launcher.oversubscribe not in ("auto", "always", "never"):
        raise reader.error("launcher.oversubscribe", f"got {launcher.oversubscribe!r}", "auto, always, never")

    default_ranks = _ranks(reader, top, "campaign", [2])
    kernels = reader.get(doc, "", "kernels", list, None)
    if not kernels:
        raise reader.error("kernels", "no kernels: add at least one [[kernels]] table", ", ".join(cat.kernels))
    # Backends and [[variants]] are for the kernels that have backends; application kernels bring
    # their own modes.
    only_apps = all(isinstance(k, dict) and k.get("name") in cat.kernel_modes for k in kernels)
    variants = _variants(reader, doc, top, cat, allow_empty=only_apps)
    labels = [v.label for v in variants]
    mode_labels = [
        m
        for k in kernels
        if isinstance(k, dict) and k.get("name") in cat.kernel_modes
        for m in cat.kernel_modes[k["name"]][1]
    ]
    default_baseline = "mpiio-coll" if "mpiio-coll" in labels else (labels or mode_labels)[0]
    baseline = reader.get(top, "campaign", "baseline", str, default_baseline)
    if baseline not in labels + mode_labels:
        raise reader.error("campaign.baseline", f"no variant is labelled {baseline!r}", ", ".join(labels))

    configurations: list[Configuration] = []
    for i, ktable in enumerate(kernels):
        where = f"kernels[{i}]"
        if not isinstance(ktable, dict):
            raise reader.error(where, f"expected a table, got {_type_name(ktable)}")
        reader.check_keys(ktable, where, ("name", "params", "ranks", "modes"))
        kname = reader.get(ktable, where, "name", str, None)
        if kname not in cat.kernels:
            raise reader.error(f"{where}.name", f"unknown kernel {kname!r}", ", ".join(cat.kernels))
        kernel_variants = _kernel_variants(reader, ktable, where, kname, cat, variants)
        for variant in kernel_variants:
            _check_variant_args(reader, variant, kname, cat)
        params = reader.str_table(ktable, where, "params")
        normalised: dict[str, Any] = {}
        for key, value in params.items():
            option = key.replace("_", "-")
            if kname in cat.kernel_modes and option == cat.kernel_modes[kname][0]:
                raise reader.error(
                    f"{where}.params.{key}",
                    f"the {kname} variants are its modes: list them in " f"{where}.modes",
                    ", ".join(cat.kernel_modes[kname][1]),
                )
            if option in reserved or option not in cat.kernel_options[kname]:
                allowed = sorted(set(cat.kernel_options[kname]) - reserved)
                why = "set by the harness itself" if option in reserved else f"not an option of {kname}"
                raise reader.error(f"{where}.params.{key}", why, ", ".join(allowed))
            normalised[option] = value
        ranks = _ranks(reader, ktable, where, default_ranks)
        for point in itertools.product(*_axes(normalised)):
            fixed = tuple((k, _text(v)) for k, v in point if v is not False)
            for r in ranks:
                for variant in kernel_variants:
                    configurations.append(Configuration(kname, fixed, r, variant))

    used = [c.label for c in configurations]
    if baseline not in used:
        if "baseline" in top:
            raise reader.error(
                "campaign.baseline", f"no configuration runs variant {baseline!r}", ", ".join(dict.fromkeys(used))
            )
        baseline = used[0]
    keys = [c.key for c in configurations]
    if len(set(keys)) != len(keys):
        raise reader.error("kernels", "two grid points are identical (a repeated value in an array?)")

    shuffle = reader.get(top, "campaign", "shuffle", bool, True)
    runs = _order(configurations, repetitions, seed if shuffle else None)

    return Campaign(
        file=file.resolve(),
        text=text,
        name=name,
        output=output,
        data_dir=data_dir,
        seed=seed,
        explicit_seed=explicit_seed,
        shuffle=shuffle,
        repetitions=repetitions,
        repetitions_per_launch=per_launch,
        wait_s=wait_s,
        operations=operations,
        verify=reader.get(top, "campaign", "verify", bool, True),
        switches=tuple(
            SwitchState(s.name, on, s.label(on))
            for s in cat.switches
            for on in [reader.get(top, "campaign", s.name, bool, False)]
        ),
        timeout_s=timeout_s,
        baseline=baseline,
        keep_data=reader.get(top, "campaign", "keep_data", bool, False),
        launcher=launcher,
        strata=strata_bin.resolve(),
        configurations=configurations,
        runs=runs,
        scale=scale,
    )


def _check_output_folder(reader: _Reader, output: Path) -> None:
    """The results folder can be made and written: found before any run, not after the first."""
    existing = output
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise reader.error("campaign.output", f"{output}: {existing} is not a folder, so the results cannot go there")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise reader.error("campaign.output", f"{output}: {existing} is not writable")


def _check_variant_args(reader: _Reader, variant: Variant, kname: str, cat: StrataCatalogue) -> None:
    """A variant's `args` are options of `strata run KERNEL` (as the catalogue lists them), caught
    by validate rather than by every run of the campaign."""
    known = set(cat.kernel_options[kname])
    reserved = reserved_options(cat)
    for arg in variant.args:
        if not arg.startswith("--"):
            continue  # a value of the option before it
        option = arg[2:].split("=", 1)[0]
        if option in known - reserved:
            continue
        why = "set by the harness itself" if option in reserved else f"not an option of {kname}"
        near = difflib.get_close_matches(option, sorted(known - reserved), n=1)
        hint = f"; did you mean --{near[0]}?" if near else ""
        raise reader.error(
            f"variants (label {variant.label!r}).args",
            f"--{option}: {why}{hint}",
            ", ".join(sorted(known - reserved)),
        )


def _kv_pairs(reader: _Reader, table: dict[str, Any], where: str, key: str) -> tuple[tuple[str, str], ...]:
    value = reader.get(table, where, key, dict, {})
    out = []
    for k, v in value.items():
        if not isinstance(v, _SCALAR):
            raise reader.error(f"{where}.{key}.{k}", f"expected a string or number, got {_type_name(v)} {v!r}")
        out.append((k, _text(v)))
    return tuple(out)


def _kernel_variants(
    reader: _Reader, ktable: dict[str, Any], where: str, kname: str, cat: StrataCatalogue, variants: list[Variant]
) -> list[Variant]:
    """The campaign's variants for a kernel with backends; an application kernel's modes (all of
    them, or its table's `modes`) for one without."""
    if kname not in cat.kernel_modes:
        if "modes" in ktable:
            raise reader.error(
                f"{where}.modes", f"{kname} has backends, not modes: use campaign.backends or " "[[variants]]"
            )
        return variants
    option, known = cat.kernel_modes[kname]
    modes = ktable.get("modes", "all")
    if modes == "all":
        modes = list(known)
    if not isinstance(modes, list) or not modes or any(not isinstance(m, str) for m in modes):
        raise reader.error(
            f"{where}.modes", f'expected a non-empty array of mode names or "all", got {modes!r}', ", ".join(known)
        )
    for m in modes:
        if m not in known:
            raise reader.error(f"{where}.modes", f"unknown {kname} mode {m!r}", ", ".join(known))
    if len(set(modes)) != len(modes):
        raise reader.error(f"{where}.modes", "a mode is listed twice", ", ".join(known))
    return [Variant(label=m, backend=m, selector=option) for m in modes]


def _variants(
    reader: _Reader, doc: dict[str, Any], top: dict[str, Any], cat: StrataCatalogue, allow_empty: bool = False
) -> list[Variant]:
    variants: list[Variant] = []
    backends = top.get("backends", [])
    if backends == "all":
        backends = list(cat.backends)
    elif not isinstance(backends, list) or any(not isinstance(b, str) for b in backends):
        raise reader.error(
            "campaign.backends",
            f'expected an array of backend names or "all", got {backends!r}',
            ", ".join(cat.backends),
        )
    for b in backends:
        if b not in cat.backends:
            raise reader.error("campaign.backends", f"unknown backend {b!r}", ", ".join(cat.backends))
        variants.append(Variant(label=b, backend=b))
    tables = reader.get(doc, "", "variants", list, [])
    for i, vt in enumerate(tables):
        where = f"variants[{i}]"
        if not isinstance(vt, dict):
            raise reader.error(where, f"expected a table, got {_type_name(vt)}")
        reader.check_keys(vt, where, ("label", "backend", "hints", "mca", "args", "env", "launcher_args"))
        backend = reader.get(vt, where, "backend", str, None)
        if backend not in cat.backends:
            raise reader.error(f"{where}.backend", f"unknown backend {backend!r}", ", ".join(cat.backends))
        variants.append(
            Variant(
                label=reader.get(vt, where, "label", str, backend),
                backend=backend,
                hints=_kv_pairs(reader, vt, where, "hints"),
                mca=_kv_pairs(reader, vt, where, "mca"),
                args=tuple(reader.str_list(vt, where, "args", [])),
                env=_kv_pairs(reader, vt, where, "env"),
                launcher_args=tuple(reader.str_list(vt, where, "launcher_args", [])),
            )
        )
    if not variants and not allow_empty:
        raise reader.error(
            "campaign.backends", "empty grid: no backends and no [[variants]]", ", ".join(cat.backends) + ' or "all"'
        )
    labels = [v.label for v in variants]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise reader.error(
            "variants", f"labels must be unique, repeated: {', '.join(dupes)}", "give each [[variants]] its own label"
        )
    return variants
