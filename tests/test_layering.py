"""The layering rules of SPEC §1, checked on the source: who may import whom, and one module per vendor SDK."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support import REPO

PACKAGES = ("core", "catalog", "search", "workers", "bot", "tablescout")
VENDOR_SDKS = (
    "anthropic",
    "openai",
    "slack_sdk",
    "slack_bolt",
    "botbuilder",
    "sentence_transformers",
    "msal",
    "xllamacpp",
)
FORBIDDEN = {
    "core": {"catalog", "search", "workers", "bot", "tablescout"},
    "catalog": {"search", "workers", "bot", "tablescout"},
    "search": {"catalog", "workers", "bot", "tablescout"},
    "bot": {"workers", "tablescout"},
    "workers": {"tablescout"},
}


def imports() -> dict[str, set[str]]:
    """Module path → top-level names it imports (absolute imports only; the project uses no relative ones across
    packages)."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            names: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names.add(node.module)
            found[str(path.relative_to(REPO))] = names
    return found


def test_packages_import_only_what_their_layer_allows() -> None:
    broken = []
    for module, names in imports().items():
        package = Path(module).parts[0]
        for name in names:
            if name.split(".")[0] in FORBIDDEN.get(package, set()):
                broken.append(f"{module} imports {name}")
    assert broken == []


def test_each_vendor_sdk_is_imported_by_exactly_one_module() -> None:
    users: dict[str, set[str]] = defaultdict(set)
    for module, names in imports().items():
        for name in names:
            root = name.split(".")[0]
            if root in VENDOR_SDKS:
                users[root].add(module)
    assert {sdk: sorted(modules) for sdk, modules in users.items() if len(modules) != 1} == {}
    assert set(users) >= {
        "anthropic",
        "openai",
        "slack_sdk",
        "botbuilder",
        "sentence_transformers",
        "msal",
        "xllamacpp",
    }
