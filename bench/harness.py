"""What the benchmarks share: timing, the machine they ran on, and writing their results.

- `Timer`, `percentile`, `p50_p95`: wall time of a block and the percentiles the results quote.
- `Machine`, `machine_note`, `commit`, `uncommitted`: the machine (cores, CPU model, memory, Python, load average)
  and the commit a run measured, so a figure from a busy or a different machine says so.
- `Run`, `current_run`: the command line that produced the results and the machine it ran on, from the start of
  the run; `write_results` writes `bench/results/NAME.json` and `NAME.md` with them (the JSON gains a `run` object,
  the markdown a closing line), `md_table` makes the markdown tables.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"

# ---- timing -------------------------------------------------------------------------------------------------------


class Timer:
    """Wall time of a block: `with Timer() as t: ...`, then `t.seconds`. `t.elapsed`: the seconds since it was made
    (or its block began), while it runs."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.seconds = 0.0

    def __enter__(self) -> Timer:
        self.started = time.perf_counter()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.seconds = time.perf_counter() - self.started

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started


def percentile(values: Sequence[float], share: float, method: Literal["nearest", "rank"] = "nearest") -> float:
    """One of the values: with `nearest`, the one at position round(share * (n - 1)) of the sorted values; with
    `rank`, the one with int(share * n) values below it (bench.search_latency's figures have always been made that
    way, so they stay comparable with its earlier results)."""
    ordered = sorted(values)
    position = round(share * (len(ordered) - 1)) if method == "nearest" else int(share * len(ordered))
    return ordered[min(len(ordered) - 1, position)]


def p50_p95(values: Sequence[float], digits: int = 1) -> dict[str, float]:
    return {"p50": round(percentile(values, 0.5), digits), "p95": round(percentile(values, 0.95), digits)}


# ---- the machine and the commit -----------------------------------------------------------------------------------


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


def commit() -> str:
    """The short hash of the commit checked out."""
    return _git("rev-parse", "--short", "HEAD")


def uncommitted(*paths: str) -> bool:
    """Whether the working tree has changes under `paths` (everything but bench/results when none is given)."""
    return bool(_git("status", "--porcelain", "--", *(paths or (".", ":!bench/results"))))


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (OSError, ValueError, AttributeError):
        return None


@dataclass(frozen=True)
class Machine:
    cpus: int
    usable_cpus: int
    cpu_model: str
    memory_gib: float | None
    python: str
    system: str
    load_average: list[float]

    @classmethod
    def now(cls) -> Machine:
        cpus = os.cpu_count() or 1
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
        return cls(
            cpus=cpus,
            usable_cpus=usable,
            cpu_model=_cpu_model(),
            memory_gib=_memory_gib(),
            python=platform.python_version(),
            system=platform.system(),
            load_average=load_average(),
        )

    @property
    def busy(self) -> bool:
        """Other work held at least half of the usable cores over the last minute."""
        return self.load_average[0] >= self.usable_cpus / 2

    def describe(self) -> str:
        cores = f"{self.cpus} cores" + (f" ({self.usable_cpus} usable)" if self.usable_cpus != self.cpus else "")
        memory = f", {self.memory_gib} GiB RAM" if self.memory_gib else ""
        return f"{cores} ({self.cpu_model}){memory}, Python {self.python} on {self.system}"


def machine_note() -> dict[str, Any]:
    """The commit, the time, the cores and the load average now (the note the multilingual and encoder results keep
    per part)."""
    return {
        "commit": commit(),
        "when": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cores": os.cpu_count(),
        "load_average": load_average(),
    }


# ---- the run and its results --------------------------------------------------------------------------------------


def program() -> str:
    """How this program is named on the command line: `python -m bench.NAME` when it runs as a module (the
    `prog` of the benchmarks' argument parsers)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return f"python -m {spec.name}" if spec is not None and spec.name else f"python {sys.argv[0]}"


def command_line() -> str:
    """How this process was started: the program and its arguments."""
    return " ".join([program(), *(shlex.quote(a) for a in sys.argv[1:])])


@dataclass
class Run:
    """One run of a benchmark: its command line, commit and machine, taken when it started."""

    command: str
    commit: str
    uncommitted: bool
    started: str
    machine: Machine
    clock: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def begin(cls) -> Run:
        return cls(
            command=command_line(),
            commit=commit(),
            uncommitted=uncommitted(),
            started=dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
            machine=Machine.now(),
        )

    @property
    def minutes(self) -> float:
        return round((time.monotonic() - self.clock) / 60, 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "commit": self.commit,
            "uncommitted_changes": self.uncommitted,
            "started": self.started,
            "minutes": self.minutes,
            "machine": asdict(self.machine),
            "load_average_at_end": load_average(),
        }

    def line(self) -> str:
        """The closing line of a results file: what ran, where, and whether the machine was busy."""
        load = self.machine.load_average
        state = "busy: figures of speed read low" if self.machine.busy else "idle"
        tree = " with uncommitted changes" if self.uncommitted else ""
        return (
            f"Run: `{self.command}` at commit {self.commit}{tree}, {self.started}, {self.minutes} min; "
            f"{self.machine.describe()}; load average {' / '.join(f'{x:.2f}' for x in load)} at the start "
            f"({state}), {load_average()[0]:.2f} at the end."
        )


_run: Run | None = None


def current_run() -> Run:
    """This process's run, begun at the first call (call it first thing in `main`, so the load average is the one
    the run started on)."""
    global _run
    if _run is None:
        _run = Run.begin()
    return _run


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A markdown table's lines: `| a | b |`, `|---|---|`, one line a row."""
    return [_md_row(header), "|" + "---|" * len(header), *(_md_row(row) for row in rows)]


def _md_row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def write_results(
    name: str,
    data: Mapping[str, Any] | None = None,
    markdown: str | None = None,
    *,
    stamp_json: bool = True,
    ensure_ascii: bool = True,
    default: Any = None,
) -> None:
    """Write `bench/results/NAME.json` (`data`, with the run under `run` unless `stamp_json` is false: for a file
    whose top-level keys mean something else) and `NAME.md` (`markdown`, with the run's line at the end)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    run = current_run()
    if data is not None:
        payload = {**data, "run": run.as_dict()} if stamp_json else dict(data)
        text = json.dumps(payload, indent=2, ensure_ascii=ensure_ascii, default=default) + "\n"
        (RESULTS / f"{name}.json").write_text(text, encoding="utf-8")
    if markdown is not None:
        (RESULTS / f"{name}.md").write_text(markdown.rstrip("\n") + "\n\n" + run.line() + "\n", encoding="utf-8")


def read_results(name: str) -> dict[str, Any]:
    """What `bench/results/NAME.json` holds (empty when there is none), for a run that merges into it."""
    path = RESULTS / f"{name}.json"
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return found
