"""What the deployment tests share: the settings tablescout reads, the external tools, and running commands."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import AliasChoices, SecretStr

from core.config.settings import ENV_PREFIX, Settings
from tests.redis_server import redis_url
from tests.support import REPO

DEPLOY = REPO / "deploy"
CHART = REPO / "helm" / "tablescout"
#: Set by the chart and the image themselves, never by an operator's values.
SET_BY_DEPLOYMENT = {"TABLESCOUT_HOME", "TABLESCOUT_CONFIG"}


def env_name(field: str) -> str:
    """The environment variable a Settings field is read from (pydantic-settings: prefix + name, or its alias)."""
    alias = Settings.model_fields[field].validation_alias
    if alias is None:
        return ENV_PREFIX + field.upper()
    if isinstance(alias, AliasChoices):
        first = alias.choices[0]
        assert isinstance(first, str), f"{field}: alias path {first!r}"
        return first
    assert isinstance(alias, str), f"{field}: alias {alias!r}"
    return alias


def is_secret(field: str) -> bool:
    annotation = Settings.model_fields[field].annotation
    return annotation is SecretStr or SecretStr in typing.get_args(annotation)


def setting_names() -> dict[str, bool]:
    """Every environment variable tablescout reads, mapped to whether it is a secret."""
    return {env_name(field): is_secret(field) for field in Settings.model_fields}


def require_module(name: str) -> ModuleType:
    """A tool the deployment tests need: skipped with the reason on a machine without it, a failure in CI."""
    try:
        return importlib.import_module(name)
    except ImportError:
        _missing(f"the Python package that provides {name!r}")
        raise


def require_executable(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        _missing(f"the {name!r} executable")
        raise AssertionError("unreachable")
    return found


def _missing(what: str) -> None:
    message = f"{what} is not installed; `pip install -e '.[dev]'` installs it (bash .ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}, and CI must run this test")
    pytest.skip(message)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without tablescout's settings, plus `extra`."""
    names = set(setting_names())
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIX) and k not in names}
    return env | extra


def run_command(argv: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a command of the image (`tablescout ...`, `celery ...`) with this checkout's installation."""
    if argv[0] == "tablescout":
        argv = [sys.executable, "-m", "tablescout", *argv[1:]]
    elif argv[0] == "celery":
        argv = [sys.executable, "-m", "celery", *argv[1:]]
    elif argv[0] == "python":
        argv = [sys.executable, *argv[1:]]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)


def assert_command_exists(argv: list[str], home: Path) -> None:
    """A container's command is one this installation has, with options it accepts: run it with --help."""
    assert argv[0] in ("tablescout", "celery", "python"), argv
    if argv[0] == "python":
        script = Path(argv[1])
        local = DEPLOY / "sample" / script.name
        assert local.is_file(), f"{argv}: no {local}"
        argv = ["python", str(local), *argv[2:]]
    env = clean_env(TABLESCOUT_HOME=str(home), TABLESCOUT_REDIS_URL=redis_url(9))
    result = run_command([*argv, "--help"], env)
    assert result.returncode == 0, f"{' '.join(argv)} --help failed:\n{result.stdout}\n{result.stderr}"
