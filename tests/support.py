"""Helpers shared by tests: settings for an isolated installation, and running the real `tablescout` command."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from core.access.mask_key import ensure_key_file
from core.access.permissions import Principal
from core.config.file import ConfigFile, read_document, validate_document
from core.config.settings import Settings

if TYPE_CHECKING:
    from search.encoders import Embedder

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared" / "bench" / "spider" / "database"
MARIADB_SERVER = "mysql+pymysql://root@127.0.0.1:3306/"
POSTGRES_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"

#: Roles for the sample ERP and billing databases: sales sees all but EMP_*, everyone else order/customer/code tables.
SAMPLE_ROLES = """\
roles:
  sales:
    grants:
      - database: erp
        deny: ["EMP_*"]
      - database: billing
  everyone:
    grants:
      - database: erp
        allow: ["ORD_*", "CUST_*", "CODE_*"]
groups:
  - platform: slack
    group: S_SALES
    roles: [sales]
default_role: everyone
"""


def isolated_settings(home: Path, **values: object) -> Settings:
    """Settings of an installation rooted at `home`, with the mask key `tablescout init` would have created."""
    settings = Settings(home=home, **values)  # type: ignore[arg-type]
    ensure_key_file(settings)
    return settings


def run_cli(
    home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `python -m tablescout ARGS` as a user would, in an installation rooted at `home`."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TABLESCOUT_")}
    clean.update({"TABLESCOUT_HOME": str(home), "COLUMNS": "200"})
    clean["TABLESCOUT_MULTILINGUAL_VECTORS"] = os.environ.get("TABLESCOUT_MULTILINGUAL_VECTORS", "true")
    clean.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tablescout", *args],
        capture_output=True,
        text=True,
        env=clean,
        cwd=REPO,
        timeout=timeout,
        check=False,
    )


def role_names(principal: Principal) -> tuple[str, ...]:
    """The names of the roles a principal was resolved to, in order."""
    return tuple(role.name for role in principal.roles)


def load_config(path: Path) -> ConfigFile:
    """The configuration file at `path`, read and validated as every process reads it."""
    return validate_document(path, read_document(path))


@functools.cache
def default_embedder() -> Embedder:
    """The encoder an installation uses by default (`embedding_encoder`: the int8 MiniLM on ONNX Runtime), made once
    per test process, so fixtures index and search with the vectors the product's workers compute."""
    from search.encoders import embedder_for

    home = Path(tempfile.mkdtemp(prefix="ts-test-encoder-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)  # the verified model copy (23 MB) goes with the process
    return embedder_for(Settings(home=home))


@functools.cache
def fast_embedder() -> Embedder:
    """The fast encoder of two-speed indexing (the static word pieces, search.encoder_static), made once per test
    process from the int8 model."""
    from search.encoder_static import StaticEmbedder

    home = Path(tempfile.mkdtemp(prefix="ts-test-fast-encoder-"))
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return StaticEmbedder.prepared(home)


@functools.cache
def _sample_files() -> dict[str, Path]:
    from catalog.sample_erp import build_sqlite

    directory = Path(tempfile.mkdtemp(prefix="ts-test-sample-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return build_sqlite(directory)


def sample_databases(directory: Path) -> dict[str, Path]:
    """`erp.sqlite` and `billing.sqlite` in `directory`, exactly as `catalog.sample_erp.build_sqlite` writes them:
    built once per test process (about 4 s of rows and inserts) and copied, so each caller has its own files to
    change. The tests of the builder itself (tests/catalog/test_sample_erp.py) call it directly."""
    directory.mkdir(parents=True, exist_ok=True)
    return {name: Path(shutil.copyfile(path, directory / path.name)) for name, path in _sample_files().items()}
