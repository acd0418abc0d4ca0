"""The layering rules of SPEC §1, checked on the source: who may import whom, no import cycles, no private names
taken from another module, each vendor SDK inside one package, and SQL statements only where the store's
repositories and the source-database readers live.

Every check reads the modules' syntax trees (all imports, including those inside functions and under
`TYPE_CHECKING`, which hide a cycle from the interpreter but not from a reader). Each has a planted-violation
test below that runs the same check on a small tree written to a temporary directory, so a check that could not
fail would fail here.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO

PACKAGES = ("core", "catalog", "search", "workers", "bot", "api", "tablescout")
FORBIDDEN = {
    "core": {"catalog", "search", "workers", "bot", "api", "tablescout"},
    "catalog": {"search", "workers", "bot", "api", "tablescout"},
    "search": {"catalog", "workers", "bot", "api", "tablescout"},
    "bot": {"workers", "api", "tablescout"},
    "workers": {"api", "tablescout"},
    "api": {"tablescout"},
}
#: Each vendor SDK and the one package (a module path prefix) that may import it.
VENDOR_PACKAGES = {
    "anthropic": ("workers/models/",),
    "openai": ("workers/models/",),
    "xllamacpp": ("workers/models/",),
    "slack_sdk": ("bot/slack/",),
    "slack_bolt": ("bot/slack/",),
    "botbuilder": ("bot/teams/",),
    "msal": ("bot/entra.py", "bot/teams/"),
    "sentence_transformers": ("search/",),
    "onnxruntime": ("search/",),
    "mcp": ("api/",),
}
#: The subpackages of workers/, lowest first: a subpackage imports only those before it.
WORKERS_ORDER = ("models", "sql", "charts", "tools", "turns", "tasks")
#: Where SQL statements are built or run: the store's repositories (and its migrations and plumbing), the
#: source-database executor, and the catalog modules that read a source database's own catalog.
SQL_HOMES = (
    "core/store/",
    "workers/sql/",
    "catalog/connectors/",
    "catalog/sample_erp/",
    "catalog/account_mysql.py",
    "catalog/account_postgres.py",
    "catalog/probe.py",
    "catalog/view_definitions.py",
    "catalog/view_reads.py",
)
STATEMENT_BUILDERS = frozenset(
    {"select", "insert", "update", "delete", "text", "union", "union_all", "exists", "literal_column", "table"}
)
EXECUTE_METHODS = frozenset({"execute", "exec_driver_sql", "executescript", "executemany"})
SQL_TEXT = re.compile(
    r"^\s*(SELECT\s.+?\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\S+\s+SET\s|DELETE\s+FROM\s|DROP\s+(TABLE|INDEX|VIEW)\s"
    r"|TRUNCATE\s+\S+)",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class Imported:
    """One imported name: `module` as written and `name` (None for `import module`)."""

    module: str
    name: str | None


def module_name(path: Path, root: Path) -> str:
    name = ".".join(path.relative_to(root).with_suffix("").parts)
    return name.removesuffix(".__init__")


def modules(root: Path = REPO) -> dict[str, Path]:
    """Dotted module name → file, for every module of the product packages under `root`."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(path, root)] = path
    return found


def trees(root: Path = REPO) -> dict[str, tuple[Path, ast.Module]]:
    return {name: (path, ast.parse(path.read_text(encoding="utf-8"))) for name, path in modules(root).items()}


def imported(tree: ast.Module) -> list[Imported]:
    """Every absolute import of a module (the project uses no relative ones across packages)."""
    found: list[Imported] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Imported(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [Imported(node.module, alias.name) for alias in node.names]
    return found


def _resolve(target: str, known: Mapping[str, object]) -> str | None:
    """The product module `target` (a module, or a name inside one) lies in, if any."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(parsed: Mapping[str, tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """Module → the product modules it imports (a name imported from a package counts as its submodule when one
    exists by that name)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (_, tree) in parsed.items():
        graph[name]
        for item in imported(tree):
            target = _resolve(f"{item.module}.{item.name}" if item.name else item.module, parsed)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The import cycles of `graph`: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so a long chain of imports never hits the recursion limit
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def private_imports(parsed: Mapping[str, tuple[Path, ast.Module]]) -> list[str]:
    """`module imports other._name`: a private name taken from another module."""
    broken = []
    for name, (_, tree) in parsed.items():
        for item in imported(tree):
            private = item.name is not None and item.name.startswith("_") and not item.name.startswith("__")
            if private and item.module.split(".")[0] in PACKAGES and item.module != name:
                broken.append(f"{name} imports {item.module}.{item.name}")
            parts = item.module.split(".")
            if parts[0] in PACKAGES and any(p.startswith("_") and not p.startswith("__") for p in parts):
                broken.append(f"{name} imports the private module {item.module}")
    return sorted(broken)


def sql_outside_homes(parsed: Mapping[str, tuple[Path, ast.Module]], root: Path = REPO) -> list[str]:
    """Modules outside `SQL_HOMES` that build SQL statements (sqlalchemy's statement builders), execute a string,
    or hold SQL text."""
    broken = []
    for path, tree in parsed.values():
        where = path.relative_to(root).as_posix()
        if where.startswith(SQL_HOMES):
            continue
        for why in _sql_in(tree):
            broken.append(f"{where}: {why}")
    return sorted(set(broken))


def _sql_in(tree: ast.Module) -> list[str]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "sqlalchemy":
            builders = sorted(alias.name for alias in node.names if alias.name in STATEMENT_BUILDERS)
            if builders:
                found.append(f"imports {', '.join(builders)} from {node.module}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in EXECUTE_METHODS and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
                found.append(f"executes SQL text on line {node.lineno}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:  # noqa: SIM102
            if SQL_TEXT.match(node.value):
                found.append(f"holds SQL text on line {node.lineno}: {node.value.strip()[:40]!r}")
    return found


def vendor_outside_packages(parsed: Mapping[str, tuple[Path, ast.Module]], root: Path = REPO) -> list[str]:
    broken = []
    for _, (path, tree) in parsed.items():
        where = path.relative_to(root).as_posix()
        for item in imported(tree):
            sdk = item.module.split(".")[0]
            if sdk in VENDOR_PACKAGES and not where.startswith(VENDOR_PACKAGES[sdk]):
                broken.append(f"{where} imports {sdk}")
    return sorted(set(broken))


def workers_out_of_order(graph: Mapping[str, Iterable[str]]) -> list[str]:
    broken = []
    for module, targets in graph.items():
        parts = module.split(".")
        if parts[0] != "workers" or len(parts) < 3 or parts[1] not in WORKERS_ORDER:
            continue
        rank = WORKERS_ORDER.index(parts[1])
        for target in targets:
            other = target.split(".")
            below = other[0] == "workers" and len(other) >= 3 and other[1] in WORKERS_ORDER
            if below and WORKERS_ORDER.index(other[1]) > rank:
                broken.append(f"{module} imports {target}")
    return sorted(broken)


# --- the product ----------------------------------------------------------------------------------------------------


def test_packages_import_only_what_their_layer_allows() -> None:
    broken = []
    for module, (_, tree) in trees().items():
        for item in imported(tree):
            if item.module.split(".")[0] in FORBIDDEN.get(module.split(".")[0], set()):
                broken.append(f"{module} imports {item.module}")
    assert broken == []


def test_no_import_cycles_between_modules() -> None:
    assert cycles(import_graph(trees())) == []


def test_no_private_name_is_imported_from_another_module() -> None:
    assert private_imports(trees()) == []


def test_workers_subpackages_import_only_those_below_them() -> None:
    assert workers_out_of_order(import_graph(trees())) == []


def test_sql_statements_live_in_repositories_and_the_source_readers() -> None:
    assert sql_outside_homes(trees()) == []


def test_each_vendor_sdk_stays_inside_its_package() -> None:
    parsed = trees()
    assert vendor_outside_packages(parsed) == []
    used = {item.module.split(".")[0] for _, tree in parsed.values() for item in imported(tree)}
    assert used >= {
        "anthropic",
        "openai",
        "slack_sdk",
        "botbuilder",
        "sentence_transformers",
        "msal",
        "xllamacpp",
        "mcp",
    }


def test_no_product_module_is_over_400_lines() -> None:
    long = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > 400}
    assert long == {}


# --- each check fails on a planted violation ------------------------------------------------------------------------


def plant(root: Path, files: Mapping[str, str]) -> dict[str, tuple[Path, ast.Module]]:
    for relative, source in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    for package in PACKAGES:
        (root / package).mkdir(exist_ok=True)
    return trees(root)


def test_a_planted_cycle_is_found_even_behind_type_checking(tmp_path: Path) -> None:
    parsed = plant(
        tmp_path,
        {
            "workers/__init__.py": "",
            "workers/turns/__init__.py": "",
            "workers/turns/engine.py": "from workers.turns.guided import answer\n",
            "workers/turns/guided.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from workers.turns.engine import Run\n"
            ),
        },
    )
    assert cycles(import_graph(parsed)) == [["workers.turns.engine", "workers.turns.guided"]]


def test_a_planted_private_import_is_found(tmp_path: Path) -> None:
    parsed = plant(
        tmp_path,
        {
            "search/__init__.py": "",
            "search/encoders.py": "def _locked(): ...\n",
            "search/encoder_use.py": "def load():\n    from search.encoders import _locked\n",
        },
    )
    assert private_imports(parsed) == ["search.encoder_use imports search.encoders._locked"]


def test_planted_sql_in_bot_is_found(tmp_path: Path) -> None:
    parsed = plant(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/delivery.py": "PENDING = \"SELECT id FROM outbox_messages WHERE status = 'pending'\"\n",
            "bot/relay.py": "from sqlalchemy import select\n",
            "bot/server.py": 'def ping(conn):\n    conn.exec_driver_sql("select 1")\n',
            "bot/cards.py": '"""Shows SELECT * FROM t as the model wrote it."""\n',
            "core/store/repositories/outbox.py": 'from sqlalchemy import select\nSQL = "DELETE FROM outbox"\n',
        },
    )
    assert sql_outside_homes(parsed, tmp_path) == [
        "bot/delivery.py: holds SQL text on line 1: 'SELECT id FROM outbox_messages WHERE sta'",
        "bot/relay.py: imports select from sqlalchemy",
        "bot/server.py: executes SQL text on line 2",
    ]


def test_a_planted_vendor_import_and_subpackage_order_are_found(tmp_path: Path) -> None:
    parsed = plant(
        tmp_path,
        {
            "bot/__init__.py": "",
            "bot/intake.py": "import slack_sdk\n",
            "bot/slack/web.py": "from slack_sdk import WebClient\n",
            "workers/__init__.py": "",
            "workers/tools/base.py": "from workers.turns.state import TurnRun\n",
            "workers/turns/state.py": "from workers.tools.base import ToolContext\n",
        },
    )
    assert vendor_outside_packages(parsed, tmp_path) == ["bot/intake.py imports slack_sdk"]
    assert workers_out_of_order(import_graph(parsed)) == ["workers.tools.base imports workers.turns.state"]
