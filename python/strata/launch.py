"""Launchers: turn a configuration into an `mpirun` or `srun` command line, and write sbatch scripts.

`local` runs `mpirun` on this machine, adding `--oversubscribe` when a run asks for more ranks
than there are cores. `slurm` runs `srun` inside an allocation, or writes one `sbatch` script per
campaign whose lines run every configuration in the campaign's shuffled order; the results are
collected afterwards with `strata-bench run CAMPAIGN --resume`.

MCA parameters go on the mpirun command line (`--mca io romio321`); under srun they travel as
`OMPI_MCA_*` environment variables, which Open MPI reads the same way.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .campaign import Campaign, Configuration, Run

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LauncherSpec:
    kind: str = "local"
    mpirun: str = "mpirun"
    srun: str = "srun"
    sbatch: str = "sbatch"
    args: tuple[str, ...] = ()
    partition: str = ""
    account: str = ""
    time: str = "01:00:00"
    nodes: int = 0
    ntasks_per_node: int = 0
    sbatch_args: tuple[str, ...] = ()
    oversubscribe: str = "auto"


def find_strata() -> Path:
    """STRATA_BIN, else the build tree next to this package, else `strata` on PATH."""
    if os.environ.get("STRATA_BIN"):
        return Path(os.environ["STRATA_BIN"])
    built = ROOT / "build" / "bin" / "strata"
    if built.exists():
        return built
    found = shutil.which("strata")
    return Path(found) if found else built


def physical_cores() -> int:
    """Cores Open MPI counts as slots by default: physical cores, not hardware threads."""
    try:
        pairs = set()
        physical = core = None
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("physical id"):
                physical = line.split(":")[1].strip()
            elif line.startswith("core id"):
                core = line.split(":")[1].strip()
                pairs.add((physical, core))
        if pairs:
            return len(pairs)
    except OSError:
        pass
    return os.cpu_count() or 1


def run_environment(extra: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    """The environment of a launch: ours, plus what Open MPI needs to run as root, plus the variant's."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.update(dict(extra))
    return env


# The `strata run` options strata_arguments sets (besides the variant's selector and the campaign-wide
# switches of the catalogue, which it sets too).
HARNESS_OPTIONS = ("hints", "write", "read", "verify", "repetitions", "output", "json", "quiet")


def strata_arguments(campaign: Campaign, run: Run, run_dir: Path, data_path: Path) -> list[str]:
    """`strata run ...` for one run: kernel, parameters, backend, hints, operations, JSON record."""
    c = run.configuration
    args = [str(campaign.strata), "run", c.kernel]
    for key, value in c.params:
        args += [f"--{key}"] if value == "true" else [f"--{key}", value]
    args += [f"--{c.variant.selector}", c.variant.backend]
    if c.variant.hints:
        args += ["--hints", ",".join(f"{k}={v}" for k, v in c.variant.hints)]
    args += list(c.variant.args)
    args += [f"--{op}" for op in campaign.operations]
    if campaign.verify:
        args.append("--verify")
    args += [f"--{s.name}" for s in campaign.switches if s.on]
    args += [
        "--repetitions",
        str(campaign.repetitions_per_launch),
        "--output",
        str(data_path),
        "--json",
        str(run_dir / "record.json"),
        "--quiet",
    ]
    return args


def mpirun_command(spec: LauncherSpec, c: Configuration, strata_args: list[str], cores: int | None = None) -> list[str]:
    cmd = [spec.mpirun, *spec.args]
    for key, value in c.variant.mca:
        cmd += ["--mca", key, value]
    for key, _ in c.variant.env:
        cmd += ["-x", key]
    cmd += ["-n", str(c.ranks)]
    over = spec.oversubscribe == "always" or (
        spec.oversubscribe == "auto" and c.ranks > (cores if cores is not None else physical_cores())
    )
    if over:
        cmd.append("--oversubscribe")
    return [*cmd, *c.variant.launcher_args, *strata_args]


def srun_command(spec: LauncherSpec, c: Configuration, strata_args: list[str]) -> list[str]:
    """srun inherits the environment; MCA parameters and the variant's variables go through `env`."""
    env = [f"OMPI_MCA_{k}={v}" for k, v in c.variant.mca] + [f"{k}={v}" for k, v in c.variant.env]
    cmd = ["env", *env] if env else []
    cmd += [spec.srun, "--ntasks", str(c.ranks)]
    if spec.ntasks_per_node:
        cmd += ["--ntasks-per-node", str(spec.ntasks_per_node)]
    return [*cmd, *spec.args, *c.variant.launcher_args, *strata_args]


def launch_command(campaign: Campaign, run: Run, run_dir: Path, data_path: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run one configuration with the campaign's launcher."""
    strata_args = strata_arguments(campaign, run, run_dir, data_path)
    c = run.configuration
    if campaign.launcher.kind == "slurm":
        return srun_command(campaign.launcher, c, strata_args), run_environment()
    return mpirun_command(campaign.launcher, c, strata_args), run_environment(c.variant.env)


def in_slurm_allocation() -> bool:
    return bool(os.environ.get("SLURM_JOB_ID"))


def sbatch_script(campaign: Campaign, runs: Sequence[Run], run_dirs: dict[int, Path]) -> str:
    """A batch script running `runs` in order with srun, each into its own folder.

    Each run leaves stdout.txt, stderr.txt, record.json, exit_code and times (start and end, in
    seconds since the epoch) in its folder; `strata-bench run CAMPAIGN --resume` ingests them.
    """
    spec = campaign.launcher
    ranks = max((r.configuration.ranks for r in runs), default=1)
    lines = ["#!/bin/bash", f"#SBATCH --job-name=strata-{campaign.name}"]
    if spec.nodes:
        lines.append(f"#SBATCH --nodes={spec.nodes}")
    if spec.ntasks_per_node:
        lines.append(f"#SBATCH --ntasks-per-node={spec.ntasks_per_node}")
    else:
        lines.append(f"#SBATCH --ntasks={ranks}")
    lines.append(f"#SBATCH --time={spec.time}")
    if spec.partition:
        lines.append(f"#SBATCH --partition={spec.partition}")
    if spec.account:
        lines.append(f"#SBATCH --account={spec.account}")
    lines.append(f"#SBATCH --output={campaign.output / 'sbatch-%j.out'}")
    lines += [f"#SBATCH {a}" for a in spec.sbatch_args]
    lines += [
        "",
        f"# Strata campaign {campaign.name!r} from {campaign.file}",
        f"# {len(runs)} runs in shuffled order (seed {campaign.seed}), {campaign.wait_s:g} s between runs.",
        f"# Collect the results afterwards: strata-bench run {shlex.quote(str(campaign.file))} --resume",
        "set -u",
        f"mkdir -p {shlex.quote(str(campaign.data_dir))}",
        "strata_run() {",
        "  local dir=$1; shift",
        '  mkdir -p "$dir"',
        "  local start; start=$(date +%s.%N)",
        '  "$@" > "$dir/stdout.txt" 2> "$dir/stderr.txt"',
        "  local status=$?",
        '  echo "$start $(date +%s.%N)" > "$dir/times"',
        '  echo "$status" > "$dir/exit_code"',
        "}",
        "",
    ]
    for i, run in enumerate(runs):
        run_dir = run_dirs[run.order]
        data = campaign.data_dir / f"{run.dirname}.dat"
        cmd = srun_command(spec, run.configuration, strata_arguments(campaign, run, run_dir, data))
        lines.append(
            f"# run {run.order}: {run.configuration.cell} | {run.configuration.label} | "
            f"repetition {run.repetition + 1}"
        )
        lines.append(f"strata_run {shlex.quote(str(run_dir))} {shlex.join(cmd)}")
        if not campaign.keep_data:
            lines.append(f"rm -rf {shlex.quote(str(data))}*")
        if campaign.wait_s and i + 1 < len(runs):
            lines.append(f"sleep {campaign.wait_s:g}")
    lines.append("")
    return "\n".join(lines)
