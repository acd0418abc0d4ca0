"""Start-up time of light commands (issue 17: `tablescout --help` and `tablescout source list` within 0.5 s; issue 35:
those, `note list` and `card` within 0.3 s).

Each command runs as a user runs it (`python -m tablescout ...` in a fresh process) against an installation whose
metadata store is a database on an embedded PostgreSQL this script starts once, so the figures leave out the store's
own start (which `tablescout` pays only when no server runs). For each command it reports the median and the spread
of the wall time over several runs, the time Python spent importing modules (from `-X importtime`, one extra run),
how many modules were imported, and which of the heavy SDKs were among them. `python -c pass` is measured beside
them: the interpreter's own start, which no change to tablescout can remove.

Run:  python -m bench.cli_startup --label before|after [--runs 9] [--note "machine busy with ..."]
Results are kept per label in bench/results/cli_startup.json (other labels already there stay) and the table of all
labels is written to bench/results/cli_startup.md.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

from bench.harness import REPO, Timer, current_run, load_average, md_table, program, read_results, write_results
from core.store.embedded import start_embedded
from tests.cli.test_startup_imports import HEAVY  # what a light command must not import

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")  # pgserver's, on hosts without a runtime dir
COMMANDS: dict[str, list[str]] = {
    "python -c pass (the interpreter alone)": [],
    "tablescout --help": ["--help"],
    "tablescout source list": ["source", "list"],
    "tablescout note list": ["note", "list"],
    "tablescout card shop customers": ["card", "shop", "customers"],
    "tablescout init (store already current)": ["init"],
}
TARGET_S = 0.3  # issue 35 (issue 17's was 0.5)


def environment(home: Path, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    env.update({"TABLESCOUT_HOME": str(home), "TABLESCOUT_DATABASE_URL": database_url, "COLUMNS": "120"})
    return env


def command_line(args: list[str], *flags: str) -> list[str]:
    if not args:
        return [sys.executable, *flags, "-c", "pass"]
    return [sys.executable, *flags, "-m", "tablescout", *args]


def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return proc


def imports_of(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Modules imported and the time spent importing them, from one run under `-X importtime`."""
    stderr = run(command_line(args, "-X", "importtime"), env).stderr
    modules: list[str] = []
    total_us = 0
    by_package: dict[str, int] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if not cumulative.strip().isdigit():
            continue  # the header line
        modules.append(name.strip())
        if not name.startswith("  "):  # a top-level import: its cumulative time holds everything below it
            total_us += int(cumulative)
        # Self time by top-level package: where the import time goes, whoever imported it.
        own = int(line.split("|", 2)[0].removeprefix("import time:").strip())
        root = name.strip().split(".")[0]
        by_package[root] = by_package.get(root, 0) + own
    heavy = sorted({h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in modules)})
    largest = sorted(by_package.items(), key=lambda item: -item[1])[:8]
    return {
        "import_s": round(total_us / 1e6, 3),
        "modules": len(modules),
        "heavy_imported": heavy,
        "largest_packages_s": {name: round(us / 1e6, 3) for name, us in largest},
    }


def measure(args: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    run(command_line(args), env)  # warm the file cache once
    walls = []
    for _ in range(runs):
        with Timer() as wall:
            run(command_line(args), env)
        walls.append(wall.seconds)
    return {
        "runs": runs,
        "median_s": round(statistics.median(walls), 3),
        "min_s": round(min(walls), 3),
        "max_s": round(max(walls), 3),
        **imports_of(args, env),
    }


def prepare(home: Path, database_url: str) -> None:
    """An initialised installation with one analysed source, as a user has after the first steps."""
    env = environment(home, database_url)
    run(command_line(["init"]), env)
    db = home / "shop.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    run(command_line(["source", "add", "shop", f"sqlite:///{db}"]), env)
    run(command_line(["analyze", "shop"]), env)  # `card` shows an analysed table


def markdown(results: dict[str, Any]) -> str:
    labels = list(results)
    lines = [
        "# Start-up time of light commands",
        "",
        f"Target: ≤ {TARGET_S} s of wall time for a light command, leaving out the metadata store's own start "
        "(the store here is a database on an embedded PostgreSQL that is already running). "
        "Each figure is the median wall time of a fresh `python -m tablescout ...` process; "
        "import time and modules come from one more run under `python -X importtime`.",
        "",
    ]
    for label in labels:
        r = results[label]
        cpu = f" ({r['run']['machine']['cpu_model']})" if "run" in r else ""
        lines.append(
            f"- **{label}**: commit {r['commit']}, {r['measured_at']}, {r['cpus']} cores{cpu}, load average "
            f"{r['load_before']} before and {r['load_after']} after the run. {r['note']}".rstrip()
        )
    walls = []
    for name in COMMANDS:
        cells = []
        for label in labels:
            m = results[label]["commands"].get(name)
            cells.append(f"{m['median_s']:.2f} ({m['min_s']:.2f}-{m['max_s']:.2f})" if m else "")
        walls.append([name, *cells, "" if name.startswith("python") else f"≤ {TARGET_S}"])
    lines += ["", *md_table(["command", *(f"{label}: median (min-max) s" for label in labels), "target"], walls)]
    imports = []
    for name in COMMANDS:
        cells = []
        for label in labels:
            m = results[label]["commands"].get(name)
            if m is None:
                cells.append("")
                continue
            heavy = ", ".join(m["heavy_imported"]) or "none"
            cells.append(f"{m['import_s']:.2f} / {m['modules']} / {heavy}")
        imports.append([name, *cells])
    header = ["command", *(f"{label}: import s / modules / heavy SDKs" for label in labels)]
    lines += ["", *md_table(header, imports)]
    last = labels[-1]
    lines += ["", f"Where the import time goes ({last}; self time of each package's modules, largest first):", ""]
    for name in COMMANDS:
        m = results[last]["commands"].get(name)
        if m and m.get("largest_packages_s") and COMMANDS[name]:
            parts = ", ".join(f"{pkg} {sec:.2f}" for pkg, sec in m["largest_packages_s"].items())
            lines.append(f"- {name}: {parts}")
    return "\n".join(lines) + "\n"


def main() -> None:
    current_run()
    parser = argparse.ArgumentParser(prog=program(), description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="name of this measurement, e.g. before or after")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--note", default="", help="what else the machine was doing")
    options = parser.parse_args()

    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="ts_cli_startup_") as tmp:
        server = start_embedded(Path(tmp) / "pgdata")
        try:
            engine = create_engine(server.url.set(database="postgres"), isolation_level="AUTOCOMMIT")
            with engine.connect() as conn:
                conn.execute(text('CREATE DATABASE "ts_cli_startup"'))
            engine.dispose()
            database_url = server.url.set(database="ts_cli_startup").render_as_string(hide_password=False)
            home = Path(tmp) / "home"
            home.mkdir()
            prepare(home, database_url)
            env = environment(home, database_url)
            commands = {name: measure(args, env, options.runs) for name, args in COMMANDS.items()}
        finally:
            server.stop()
    entry = {
        "commit": current_run().commit,  # the commit measured: the one checked out when the run began
        "measured_at": time.strftime("%Y-%m-%d %H:%M"),
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": load_average(),
        "note": options.note,
        "commands": commands,
        "run": current_run().as_dict(),
    }
    # One entry per label (other labels already there stay): the run goes into the entry, not beside the labels.
    results = read_results("cli_startup")
    results[options.label] = entry
    report = markdown(results)
    write_results("cli_startup", results, report, stamp_json=False)
    print(report)


if __name__ == "__main__":
    main()
