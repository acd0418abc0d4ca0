"""deploy/compose.yaml against the Compose Specification's JSON schema (the copy check-jsonschema ships), and against
what tablescout reads: every setting reaches the containers, every variable is documented in .env.example, and the
environment the stack gives a container is one tablescout accepts."""

from __future__ import annotations

import copy
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.compose_file import (
    InterpolationError,
    interpolate,
    interpolate_tree,
    load_yaml,
    parse_env_file,
)
from tests.deploy.tooling import DEPLOY, assert_command_exists, clean_env, require_module, run_command, setting_names

COMPOSE = DEPLOY / "compose.yaml"
ENV_EXAMPLE = DEPLOY / ".env.example"
TABLESCOUT_SERVICES = {"migrate", "bot", "worker", "beat", "sample-load"}
HOME = "/var/lib/tablescout"


def compose_schema() -> dict[str, Any]:
    require_module("check_jsonschema")
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    schema: dict[str, Any] = json.loads(vendor.joinpath("compose-spec.json").read_text(encoding="utf-8"))
    assert schema["title"] == "Compose Specification"
    return schema


def validator() -> Any:
    jsonschema = require_module("jsonschema")
    schema = compose_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def env_example() -> dict[str, str]:
    return parse_env_file(ENV_EXAMPLE)


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    return load_yaml(COMPOSE)


@pytest.fixture(scope="module")
def resolved(raw: dict[str, Any]) -> dict[str, Any]:
    """The file as compose sees it with deploy/.env copied from .env.example."""
    result: dict[str, Any] = interpolate_tree(raw, env_example())
    return result


def services(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = document["services"]
    return result


# --- the Compose Specification -------------------------------------------------------------------------------------


def test_the_file_is_valid_compose_before_and_after_interpolation(
    raw: dict[str, Any], resolved: dict[str, Any]
) -> None:
    check = validator()
    for document in (raw, resolved):
        errors = sorted(check.iter_errors(document), key=lambda e: list(e.path))
        assert errors == [], "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d["services"]["worker"].update(commnd=["tablescout", "worker"]),
        lambda d: d["services"]["redis"].update(healthcheck={"test": ["CMD", "redis-cli", "ping"], "every": "5s"}),
        lambda d: d["services"]["bot"].update(depends_on={"migrate": {"condition": "when_ready"}}),
        lambda d: d.update(servcies={}),
    ],
)
def test_the_schema_check_catches_mistakes(resolved: dict[str, Any], breakage: Any) -> None:
    broken = copy.deepcopy(resolved)
    breakage(broken)
    assert list(validator().iter_errors(broken)) != []


# --- services ------------------------------------------------------------------------------------------------------


def test_the_stack_has_its_services(resolved: dict[str, Any]) -> None:
    found = services(resolved)
    assert set(found) == {"postgres", "redis", "migrate", "bot", "worker", "beat", "sample-db", "sample-load"}
    assert found["postgres"]["image"] == "pgvector/pgvector:pg16"
    assert found["sample-db"]["image"].startswith("mariadb:")
    for name in TABLESCOUT_SERVICES:
        assert found[name]["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}
        assert found[name]["image"] == "tablescout:local"
    assert (DEPLOY / ".." / "deploy" / "Dockerfile").is_file()


def test_redis_keeps_jobs_across_restarts_and_never_evicts_them(resolved: dict[str, Any]) -> None:
    command = services(resolved)["redis"]["command"]
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--appendonly"] == "yes"
    assert options["--maxmemory-policy"] == "noeviction"
    assert _volume(services(resolved)["redis"], "/data") == {"source": "redis-data", "target": "/data"}


def test_commands_and_start_order(resolved: dict[str, Any], tmp_path: Path) -> None:
    found = services(resolved)
    assert found["migrate"]["command"] == ["tablescout", "init"]
    assert found["migrate"]["restart"] == "no"
    assert found["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert found["bot"]["command"] == ["tablescout", "serve", "--host", "0.0.0.0", "--port", "3000"]  # noqa: S104
    assert found["bot"]["ports"] == ["3000:3000"]
    assert found["worker"]["command"] == ["tablescout", "worker", "--concurrency", "8"]
    assert found["beat"]["command"][:3] == ["celery", "--app=workers.app", "beat"]
    assert f"--schedule={HOME}/celerybeat-schedule" in found["beat"]["command"]  # on the volume
    for name in ("bot", "worker", "beat"):
        assert found[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert found[name]["depends_on"]["redis"] == {"condition": "service_healthy"}
    for name in TABLESCOUT_SERVICES:
        assert_command_exists(found[name]["command"], tmp_path)
    for service in found.values():
        test = service.get("healthcheck", {}).get("test")
        if test and test[0] == "CMD" and test[1] == "tablescout":
            assert_command_exists(test[1:], tmp_path)


def test_workers_scale_and_stop_gracefully(resolved: dict[str, Any]) -> None:
    worker = services(resolved)["worker"]
    # `--scale worker=N` needs no fixed container name and no host port
    assert "container_name" not in worker
    assert "ports" not in worker
    assert worker["healthcheck"]["test"][:4] == ["CMD", "tablescout", "health", "worker"]
    seconds = int(worker["stop_grace_period"].removesuffix("s"))
    assert seconds > 180  # the default turn deadline: running turns finish before the worker stops
    assert "beat" not in " ".join(worker["command"])  # the schedule runs once, in its own service


def test_the_sample_database_is_optional(resolved: dict[str, Any]) -> None:
    found = services(resolved)
    for name, service in found.items():
        assert ("profiles" in service) == (name in ("sample-db", "sample-load")), name
    assert found["sample-db"]["profiles"] == ["sample"] == found["sample-load"]["profiles"]
    script = next(v for v in found["sample-load"]["volumes"] if v.endswith(":ro"))
    source = script.split(":")[0]
    assert (DEPLOY / source).resolve() == (DEPLOY / "sample" / "load_sample.py").resolve()


# --- volumes -------------------------------------------------------------------------------------------------------


def _volume(service: dict[str, Any], target: str) -> dict[str, str]:
    for entry in service.get("volumes", []):
        source, _, rest = entry.partition(":")
        if rest.split(":")[0] == target:
            return {"source": source, "target": target}
    raise AssertionError(f"nothing is mounted at {target}")


def test_state_lives_on_named_volumes(resolved: dict[str, Any]) -> None:
    found = services(resolved)
    needed = {
        ("postgres", "/var/lib/postgresql/data"): "postgres-data",
        ("redis", "/data"): "redis-data",
        ("sample-db", "/var/lib/mysql"): "sample-db-data",
    }
    needed |= {(name, HOME): "tablescout-home" for name in TABLESCOUT_SERVICES}
    for (service, target), volume in needed.items():
        assert _volume(found[service], target)["source"] == volume, (service, target)
    declared = set(resolved["volumes"])
    mounted = {
        entry.split(":")[0]
        for service in found.values()
        for entry in service.get("volumes", [])
        if not entry.startswith((".", "/"))
    }
    assert mounted == declared == set(needed.values())


# --- environment ---------------------------------------------------------------------------------------------------


def documented_names() -> dict[str, str]:
    """NAME -> its comment, for each `NAME=...` or `# NAME=...` line of .env.example that follows a comment."""
    lines = ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    found: dict[str, str] = {}
    comment: list[str] = []
    for line in lines:
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]*)=", line)
        if match:
            found[match.group(1)] = " ".join(comment)
        elif line.startswith("#") and not line.startswith("# ----"):
            comment.append(line.lstrip("# "))
            continue
        if not line.strip():
            comment = []
    return found


def test_every_setting_is_documented_in_the_env_example() -> None:
    documented = documented_names()
    missing = [name for name in setting_names() if name not in documented]
    assert missing == [], f"settings tablescout reads that deploy/.env.example does not list: {missing}"
    undocumented = [name for name, comment in documented.items() if len(comment) < 15]
    assert undocumented == [], f"no comment above: {undocumented}"


def test_the_stack_passes_every_setting_to_every_tablescout_service(raw: dict[str, Any]) -> None:
    settings = set(setting_names())
    for name in TABLESCOUT_SERVICES:
        service = services(raw)[name]
        # every line of deploy/.env reaches the container, so every documented setting does
        assert service["env_file"] == ".env", name
        assert set(service["environment"]) <= settings, name
    example = env_example()
    for name in set(example) | set(documented_names()):
        if name.startswith("TABLESCOUT_"):
            assert name in settings, f"{name} is not a tablescout setting; tablescout would refuse to start"


def test_every_variable_the_file_uses_is_in_the_env_example(raw: dict[str, Any]) -> None:
    used: set[str] = set()
    interpolate_tree(raw, env_example(), used)
    assert used, "the file interpolates nothing?"
    assert used <= set(documented_names()), used - set(documented_names())
    with pytest.raises(InterpolationError, match="POSTGRES_PASSWORD"):
        interpolate_tree(raw, {})  # without deploy/.env compose stops with the reason


def test_the_containers_environment_is_one_tablescout_accepts(resolved: dict[str, Any], tmp_path: Path) -> None:
    """The environment a worker gets (deploy/.env, then the service's `environment`) loads as tablescout settings."""
    worker = services(resolved)["worker"]
    environment = env_example() | {k: str(v) for k, v in worker["environment"].items()}
    assert environment["TABLESCOUT_DATABASE_URL"] == (
        f"postgresql+psycopg://tablescout:{env_example()['POSTGRES_PASSWORD']}@postgres:5432/tablescout"
    )
    assert environment["TABLESCOUT_REDIS_URL"] == "redis://redis:6379/0"
    environment["TABLESCOUT_HOME"] = str(tmp_path)  # the image's /var/lib/tablescout, here
    probe = "from core.config.settings import load_settings; s = load_settings(); print(s.model, s.max_rounds)"
    result = run_command(["python", "-c", probe], clean_env(**environment))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["anthropic:claude-sonnet-4-5", "12"]
    # and an operator's own URL in deploy/.env wins over the bundled service
    own = interpolate(worker_url_template(), {"TABLESCOUT_REDIS_URL": "redis://cache.internal:6379/2"})
    assert own == "redis://cache.internal:6379/2"


def worker_url_template() -> str:
    value: str = load_yaml(COMPOSE)["services"]["worker"]["environment"]["TABLESCOUT_REDIS_URL"]
    return value


def test_interpolation_follows_the_specification() -> None:
    env = {"SET": "a", "EMPTY": ""}
    assert interpolate("${SET:-x} ${EMPTY:-x} ${UNSET:-x} ${EMPTY-x} ${UNSET-x}", env) == "a x x  x"
    assert interpolate("${SET:+y}|${EMPTY:+y}|${EMPTY+y}|$$SET|$SET", env) == "y||y|$SET|a"
    assert interpolate("${UNSET:-p${SET}q}", env) == "paq"
    with pytest.raises(InterpolationError, match="UNSET: needed"):
        interpolate("${UNSET:?needed}", env)
