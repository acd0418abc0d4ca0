"""Build the wheel, install it into a fresh virtual environment and check the installed copy, not the checkout.

The tests import the checkout (pytest's `pythonpath = ["."]`), so a packaging mistake (a data file left out of
package-data, a subpackage without `__init__.py`) passes them. This check:

1. copies the working tree (tracked and untracked files git does not ignore) to a temporary directory and builds
   the wheel there with the current environment's setuptools (`--no-build-isolation`: no download), so stale
   `build/` output in the checkout cannot hide or add files;
2. makes a fresh virtual environment, installs the wheel into it without dependencies and lists the current
   environment's site-packages in a `.pth` file for them (a directory added by a `.pth` line does not have its own
   `.pth` files processed, so the editable install's finder there never loads);
3. compares the checkout's tracked files under the product packages with the installed ones (missing ones fail;
   contents must match byte for byte);
4. in the new environment, from a working directory outside the checkout and with `python -I`: imports every
   installed module and checks that each comes from the new environment (and that no directory of modules lacks
   `__init__.py`: setuptools installs it only as a namespace package), reads every packaged data file through
   importlib.resources, compares the Alembic head read from the scripts with the one Alembic computes from the
   installed migrations, and runs the installed `tablescout --help`, `tablescout init --help` and
   `python -m tablescout --help`.

Usage: python .ci/wheel_check.py [--ref COMMIT] [--keep]  (with the project's virtual environment active; --ref checks
a commit instead of the working tree). Exit 1 on failure.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from pathlib import Path

# ruff: noqa: S603, S607 - fixed command lines (git, tar, pip, the new environment's python), no shell, as in tests/

ROOT = Path(__file__).resolve().parent.parent
#: modules that are not imported: `__main__` runs the command line (run as `python -m` instead), Alembic's
#: env.py runs migrations on import (Alembic loads it; the installer compiles it)
NOT_IMPORTED = ("__main__", "core.store.migrations.env")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="check this commit (git archive) instead of the working tree")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory and print its path")
    parser.add_argument("--inside", nargs=3, metavar=("CHECKOUT", "ENV", "TOPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inside:
        checkout, env, tops = args.inside
        return inside(Path(checkout), Path(env), tops.split(","))
    return outside(ref=args.ref, keep=args.keep)


def outside(*, ref: str | None, keep: bool) -> int:
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="wheel-check-"))
    try:
        source, files = snapshot(work / "source", ref)
        tops = product_packages(source, files)
        wheel = build(work, source)
        env = work / "wheelenv"
        install(wheel, env)
        installed = Path(run_text([str(env / "bin" / "python"), "-I", "-c", PURELIB]).strip())
        problems = compare_files(source, files, tops, installed)
        # cwd outside the checkout and `-I` (no PYTHONPATH, no script directory on sys.path)
        checked = subprocess.run(
            [str(env / "bin" / "python"), "-I", str(Path(__file__).resolve()), "--inside", str(ROOT), str(env),
             ",".join(tops)],
            cwd=work, env=clean_env(env), check=False,
        )  # fmt: skip
        if checked.returncode != 0:
            problems.append(f"the checks in the installed environment failed (exit {checked.returncode})")
    finally:
        if keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - started
    if problems:
        print(f"\nwheel check FAILED ({seconds:.1f}s):", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print(f"wheel check passed ({seconds:.1f}s)")
    return 0


PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def snapshot(source: Path, ref: str | None) -> tuple[Path, list[str]]:
    """A copy of the sources to build (the working tree: what git tracks or does not ignore; or commit `ref`) and the
    files git tracks in it. Built and compared from the copy, so edits during the check cannot make it disagree with
    itself, and stale `build/` output in the checkout cannot hide or add files."""
    source.mkdir(parents=True)
    if ref is not None:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", ref], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
        listed = run_text(["git", "-C", str(ROOT), "ls-tree", "-r", "-z", "--name-only", ref]).split("\0")
    else:
        copied = run_text(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        for path in sorted(set(copied.split("\0"))):
            if path and (ROOT / path).is_file():
                (source / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / path, source / path)
        listed = run_text(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--deduplicate"]).split("\0")
    return source, [path for path in listed if path and (source / path).is_file()]


def product_packages(source: Path, files: list[str]) -> list[str]:
    """The top-level directories that pyproject's `packages.find` include patterns name."""
    config = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    tops = {path.split("/")[0] for path in files if "/" in path}
    return sorted(top for top in tops if any(fnmatch.fnmatchcase(top, p) for p in patterns))


def is_test(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        any(part in ("tests", "test") for part in parts[:-1])
        or fnmatch.fnmatchcase(name, "test_*.py")
        or fnmatch.fnmatchcase(name, "*_test.py")
        or name == "conftest.py"
    )


def build(work: Path, source: Path) -> Path:
    """The wheel, built with this environment's setuptools."""
    dist = work / "dist"
    step("build", [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                   "--check-build-dependencies", "--no-index", "-w", str(dist), str(source)])  # fmt: skip
    wheels = list(dist.glob("*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one wheel in {dist}, found {wheels}")
    return wheels[0]


def install(wheel: Path, env: Path) -> None:
    """A fresh environment with the wheel alone; the dependencies come from this environment's site-packages."""
    step("venv", [sys.executable, "-m", "venv", "--without-pip", str(env)])
    python = env / "bin" / "python"
    step("install", [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                     "--no-index", str(wheel)])  # fmt: skip
    site = Path(run_text([str(python), "-I", "-c", PURELIB]).strip())
    paths = sysconfig.get_paths()
    ours = dict.fromkeys([paths["purelib"], paths["platlib"]])
    (site / "zz_dependencies_from_ci_env.pth").write_text("".join(f"{p}\n" for p in ours), encoding="utf-8")


def compare_files(source: Path, files: list[str], tops: list[str], installed: Path) -> list[str]:
    """Every tracked, non-test file under the product packages is installed, with the same content."""
    expected = {p for p in files if p.split("/")[0] in tops and "__pycache__" not in p and not is_test(p)}
    found = {
        path.relative_to(installed).as_posix()
        for top in tops
        for path in (installed / top).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    problems = [f"not in the wheel: {p}" for p in sorted(expected - found)]
    problems += [
        f"installed content differs from the sources built: {p}"
        for p in sorted(expected & found)
        if (installed / p).read_bytes() != (source / p).read_bytes()
    ]
    extra = sorted(found - expected)
    if extra:
        print(f"note: installed but not tracked by git ({len(extra)}): {', '.join(extra)}", flush=True)
    print(f"files: {len(expected)} tracked under {', '.join(tops)}; {len(found)} installed", flush=True)
    return problems


def step(name: str, command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        raise SystemExit(f"wheel check: {name} failed (exit {done.returncode}): {' '.join(command)}")


def run_text(command: list[str]) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def clean_env(env: Path) -> dict[str, str]:
    variables = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    variables["VIRTUAL_ENV"] = str(env)
    variables["PATH"] = f"{env / 'bin'}{os.pathsep}{variables.get('PATH', '')}"
    return variables


# --- run inside the new environment ---------------------------------------------------------------------------------


def inside(checkout: Path, env: Path, tops: list[str]) -> int:
    import importlib
    import importlib.resources
    import traceback

    problems: list[str] = []
    env = env.resolve()
    checkout = checkout.resolve()

    def located(name: str, file: str | None) -> None:
        if file is None:
            problems.append(f"{name}: no __file__ (a namespace package?)")
            return
        path = Path(file).resolve()
        if not path.is_relative_to(env) or path.is_relative_to(checkout):
            problems.append(f"{name}: imported from {path}, not from {env}")

    editable = [m for m in sys.modules if "__editable__" in m] + [
        repr(f) for f in sys.meta_path if "editable" in f"{getattr(f, '__module__', '')} {f!r}".lower()
    ]
    if editable:
        problems.append(f"the editable install's finder is active here: {editable}")
    if any(Path(p).resolve() == checkout for p in sys.path if p):
        problems.append(f"the checkout is on sys.path: {sys.path}")

    # every installed .py file is a module to import; a directory of modules without __init__.py is a namespace
    # package: installed only while packages.find keeps `namespaces = true`, and skipped by pkgutil and others
    site = Path(sysconfig.get_paths()["purelib"])
    names: list[str] = []
    data_files: list[Path] = []
    for top in tops:
        if not (site / top).is_dir():
            problems.append(f"package {top} is not installed in {site}")
            continue
        for path in sorted((site / top).rglob("*")):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(site).with_suffix("").parts
            if path.is_dir() and any(path.glob("*.py")) and not (path / "__init__.py").is_file():
                problems.append(f"{path.relative_to(site)}/ has modules but no __init__.py")
            elif path.suffix == ".py":
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
            elif path.is_file():
                data_files.append(path)

    modules = 0
    for name in sorted(names):
        if name in NOT_IMPORTED or name.rsplit(".", 1)[-1] in NOT_IMPORTED:
            continue
        try:
            module = importlib.import_module(name)
        except Exception:
            problems.append(f"import {name}:\n{indent(traceback.format_exc(limit=-3))}")
            continue
        modules += 1
        located(name, module.__file__)

    # every data file, read through importlib.resources from the package that holds it
    for path in data_files:
        holder = path.parent
        while not (holder / "__init__.py").is_file() and holder != site:
            holder = holder.parent
        package = ".".join(holder.relative_to(site).parts)
        try:
            resource = importlib.resources.files(package).joinpath(path.relative_to(holder).as_posix())
            resource.read_bytes()
            located(f"{package}: {path.relative_to(holder)}", str(resource))
        except Exception as error:
            problems.append(f"read {path.relative_to(site)} from package {package!r}: {error!r}")
    data = len(data_files)

    try:
        from core.store import migrate

        located("core.store.migrate.MIGRATIONS", str(migrate.MIGRATIONS / "env.py"))
        scripted, computed = migrate.scripted_head(migrate.MIGRATIONS / "versions"), migrate.alembic_head_revision()
        if scripted != computed:
            problems.append(f"Alembic head: {scripted!r} from the scripts, {computed!r} from Alembic")
        heads = f"Alembic head {computed}"
    except Exception:
        problems.append(f"Alembic head from the installed migrations:\n{indent(traceback.format_exc())}")
        heads = "no Alembic head"

    python = env / "bin" / "python"
    for command in (
        ["tablescout", "--help"],
        ["tablescout", "init", "--help"],
        [str(python), "-m", "tablescout", "--help"],
    ):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or "Usage" not in done.stdout:
            problems.append(f"{' '.join(command)} exited {done.returncode}:\n{indent(done.stdout + done.stderr)}")
    which = shutil.which("tablescout")
    if which is None or not Path(which).is_relative_to(env):
        problems.append(f"tablescout on PATH is {which}, not the new environment's")

    print(f"installed: {modules} modules imported, {data} data files read, {heads}", flush=True)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    return 1 if problems else 0


def indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.rstrip().splitlines())


if __name__ == "__main__":
    sys.exit(main())
