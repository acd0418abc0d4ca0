"""The Helm chart rendered by real Helm (the Helm v4 Go library through helm-python-sdk) for its default values and
for ci/production-values.yaml; manifests checked against Kubernetes' own schemas and for what the chart promises."""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.config.file import validate_document
from core.errors import ConfigError
from tests.deploy.tooling import CHART, SET_BY_DEPLOYMENT, assert_command_exists, require_module, setting_names

KUBERNETES_VERSION = "1.30.0"
RELEASE = "ts"
NAMESPACE = "tablescout"
HOOK_EVENTS = "pre-install,pre-upgrade"


@pytest.fixture(scope="module")
def helm() -> Any:
    return require_module("helm_python")


@pytest.fixture(scope="module")
def chart(helm: Any) -> Iterator[Any]:
    with helm.Chart.load(str(CHART)) as loaded:
        yield loaded


def production_values() -> dict[str, Any]:
    values = yaml.safe_load((CHART / "ci" / "production-values.yaml").read_text(encoding="utf-8"))
    assert isinstance(values, dict)
    return values


class Rendered:
    """The manifests of one render, by kind and name."""

    def __init__(self, files: dict[str, str]) -> None:
        self.notes = next((text for path, text in files.items() if path.endswith("NOTES.txt")), "")
        self.documents: list[dict[str, Any]] = []
        for path, text in sorted(files.items()):
            if path.endswith("NOTES.txt"):
                continue
            self.documents += [doc for doc in yaml.safe_load_all(text) if doc]

    def kinds(self, kind: str) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if doc["kind"] == kind]

    def get(self, kind: str, name: str) -> dict[str, Any]:
        found = [doc for doc in self.kinds(kind) if doc["metadata"]["name"] == name]
        assert len(found) == 1, f"{kind}/{name}: {[d['metadata']['name'] for d in self.kinds(kind)]}"
        return found[0]

    def has(self, kind: str, name: str) -> bool:
        return any(doc["metadata"]["name"] == name for doc in self.kinds(kind))


def render(chart: Any, values: dict[str, Any] | None) -> Rendered:
    return Rendered(chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True))


def name(component: str) -> str:
    return f"{RELEASE}-tablescout-{component}"


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    result: dict[str, Any] = containers[0]
    return result


@pytest.fixture(scope="module")
def default(chart: Any) -> Rendered:
    return render(chart, None)


@pytest.fixture(scope="module")
def production(chart: Any) -> Rendered:
    return render(chart, production_values())


# --- validity ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["default", "production"])
def test_every_manifest_is_valid_kubernetes(which: str, request: pytest.FixtureRequest) -> None:
    kubernetes_validate = require_module("kubernetes_validate")
    rendered: Rendered = request.getfixturevalue(which)
    assert len(rendered.documents) >= 10
    for document in rendered.documents:
        # strict: an unknown field (a misspelt probe, say) is an error, as kubectl --validate=strict makes it
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("values", [None, "production"])
def test_helm_lint_finds_no_error(helm: Any, values: str | None) -> None:
    report = helm.lint(str(CHART), production_values() if values else None, strict=True)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] > 1] == []  # 1 is INFO ("icon is recommended")


# --- what the default values give ---------------------------------------------------------------------------------


def test_default_values_run_two_bots_two_workers_one_beat(default: Rendered) -> None:
    assert default.get("Deployment", name("bot"))["spec"]["replicas"] == 2
    assert default.get("Deployment", name("worker"))["spec"]["replicas"] == 2
    beat = default.get("Deployment", name("beat"))
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}  # never two schedules at once
    assert container(beat)["args"][:3] == ["celery", "--app=workers.app", "beat"]
    assert default.kinds("HorizontalPodAutoscaler") == []
    assert not default.has("Deployment", name("socket-mode"))
    assert not default.kinds("Ingress")
    assert {d["metadata"]["name"] for d in default.kinds("PodDisruptionBudget")} == {name("bot"), name("worker")}
    assert default.get("Service", name("bot"))["spec"]["ports"][0]["targetPort"] == "http"
    assert default.has("ServiceAccount", f"{RELEASE}-tablescout")
    assert "must both be set" in default.notes  # no store or broker URL given


def test_every_container_runs_as_non_root_on_a_read_only_root(default: Rendered, production: Rendered) -> None:
    for rendered in (default, production):
        for workload in rendered.kinds("Deployment") + rendered.kinds("Job"):
            pod = workload["spec"]["template"]["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True
            assert pod["securityContext"]["runAsUser"] == 10001  # the image's user
            assert pod["automountServiceAccountToken"] is False
            security = container(workload)["securityContext"]
            assert security["readOnlyRootFilesystem"] is True
            assert security["allowPrivilegeEscalation"] is False
            mounts = {m["mountPath"] for m in container(workload)["volumeMounts"]}
            assert {"/tmp", "/var/lib/tablescout", "/etc/tablescout"} <= mounts  # noqa: S108
            assert container(workload)["resources"]["requests"]["memory"]


def test_worker_grace_period_outlasts_a_turn(default: Rendered) -> None:
    pod = default.get("Deployment", name("worker"))["spec"]["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] > 180  # the default turn deadline


# --- production values ---------------------------------------------------------------------------------------------


def test_production_autoscales_workers_on_cpu_and_queue_length(production: Rendered) -> None:
    worker = production.get("Deployment", name("worker"))
    assert "replicas" not in worker["spec"]  # the HPA owns the replica count
    hpa = production.get("HorizontalPodAutoscaler", name("worker"))
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name("worker")}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 20)
    metrics = {m["type"]: m for m in hpa["spec"]["metrics"]}
    assert metrics["Resource"]["resource"] == {
        "name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": 70},
    }
    external = metrics["External"]["external"]
    assert external["metric"]["name"] == "tablescout_celery_queue_length"
    assert external["target"] == {"type": "AverageValue", "averageValue": "4"}


def test_production_runs_socket_mode_with_two_replicas_and_a_pdb(production: Rendered) -> None:
    socket = production.get("Deployment", name("socket-mode"))
    assert socket["spec"]["replicas"] == 2
    assert container(socket)["args"][:5] == ["tablescout", "serve", "--slack-socket-mode", "--platform", "slack"]
    assert production.get("PodDisruptionBudget", name("socket-mode"))["spec"]["minAvailable"] == 1
    bot = production.get("Deployment", name("bot"))
    assert bot["spec"]["replicas"] == 3
    assert container(bot)["args"][-2:] == ["--platform", "teams"]  # Slack is the Socket Mode pods' alone


def test_production_exposes_only_the_platform_endpoint(production: Rendered) -> None:
    ingress = production.get("Ingress", name("bot"))
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == "tablescout.example.com"
    assert [(p["path"], p["pathType"]) for p in rule["http"]["paths"]] == [("/api/messages", "Exact")]
    assert rule["http"]["paths"][0]["backend"]["service"] == {"name": name("bot"), "port": {"number": 80}}
    assert ingress["spec"]["tls"][0]["secretName"] == "tablescout-tls"


def test_production_uses_the_existing_secret_and_external_urls(production: Rendered) -> None:
    assert production.kinds("Secret") == []  # nothing secret is rendered by the chart
    for workload in production.kinds("Deployment") + production.kinds("Job"):
        spec = container(workload)
        refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in spec["env"] if "valueFrom" in e}
        assert refs["TABLESCOUT_DATABASE_URL"] == {"name": "tablescout-secrets", "key": "TABLESCOUT_DATABASE_URL"}
        assert refs["TABLESCOUT_REDIS_URL"] == {"name": "tablescout-secrets", "key": "TABLESCOUT_REDIS_URL"}
        assert {"secretRef": {"name": "tablescout-secrets"}} in spec["envFrom"]
    # no bundled database: nothing but tablescout's own image runs
    images = {container(w)["image"] for w in production.kinds("Deployment") + production.kinds("Job")}
    assert images == {"registry.example.com/tablescout:0.1.0"}
    assert production.kinds("StatefulSet") == []


def _mask_keys(rendered: Rendered) -> set[str]:
    return {base64.b64decode(s["data"]["TABLESCOUT_MASK_KEY"]).decode() for s in rendered.kinds("Secret")}


def test_every_pod_hashes_with_one_mask_key(chart: Any) -> None:
    """Issue 30 item 4: each pod's data directory is its own, so the key of `hash` masks comes from the Secret: one
    random key per install (the migration job's copy of the Secret holds the same), or the one the values give."""
    installed = render(chart, None)
    assert len(installed.kinds("Secret")) == 2  # the release's and the migration job's copy
    (key,) = _mask_keys(installed)
    assert re.fullmatch(r"[A-Za-z0-9]{64}", key)
    assert _mask_keys(render(chart, None)) != {key}  # a new installation gets a key of its own
    given = {"secret": {"existingSecret": "", "values": {"TABLESCOUT_MASK_KEY": "k" * 40}}}
    assert _mask_keys(render(chart, given)) == {"k" * 40}
    for workload in installed.kinds("Deployment") + installed.kinds("Job"):
        assert {"secretRef": {"name": workload_secret(workload)}} in container(workload)["envFrom"]
    assert "TABLESCOUT_MASK_KEY" in installed.notes


def workload_secret(workload: dict[str, Any]) -> str:
    found: str = next(e["secretRef"]["name"] for e in container(workload)["envFrom"] if "secretRef" in e)
    return found


# --- migrations ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["default", "production"])
def test_migrations_run_as_a_hook_before_install_and_upgrade(which: str, request: pytest.FixtureRequest) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    job = rendered.get("Job", name("migrations"))
    annotations = job["metadata"]["annotations"]
    assert annotations["helm.sh/hook"] == HOOK_EVENTS
    assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded"
    assert container(job)["args"] == ["tablescout", "init"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    # Everything the job reads exists before it: hook resources of lower weight (the release's own ConfigMaps and
    # Secret are created only after pre-install hooks), or the operator's existing Secret.
    pod = job["spec"]["template"]["spec"]
    config_map = next(v["configMap"]["name"] for v in pod["volumes"] if v["name"] == "config")
    env_map = next(e["configMapRef"]["name"] for e in container(job)["envFrom"] if "configMapRef" in e)
    secret = next(e["secretRef"]["name"] for e in container(job)["envFrom"] if "secretRef" in e)
    needed = [("ConfigMap", config_map), ("ConfigMap", env_map)]
    if which == "default":
        needed.append(("Secret", secret))
    else:
        assert secret == "tablescout-secrets"
    for kind, resource in needed:
        hook = rendered.get(kind, resource)["metadata"]["annotations"]
        assert hook["helm.sh/hook"] == HOOK_EVENTS
        assert int(hook["helm.sh/hook-weight"]) < int(annotations["helm.sh/hook-weight"])
    assert pod["serviceAccountName"] == "default"  # the chart's own account does not exist yet at pre-install
    assert not any("helm.sh/hook" in d["metadata"].get("annotations", {}) for d in rendered.kinds("Deployment"))


# --- probes --------------------------------------------------------------------------------------------------------


def test_bot_probes_ask_healthz_on_the_served_port(production: Rendered) -> None:
    for component in ("bot", "socket-mode"):
        spec = container(production.get("Deployment", name(component)))
        [port] = spec["ports"]
        assert port["name"] == "http"
        served = spec["args"][spec["args"].index("--port") + 1]
        assert served == str(port["containerPort"])
        for probe in ("startupProbe", "readinessProbe"):
            assert spec[probe]["httpGet"] == {"path": "/healthz", "port": "http"}
        # liveness does not depend on the store: an outage takes pods out of the Service without restarting them
        assert spec["livenessProbe"]["tcpSocket"] == {"port": "http"}


def test_worker_liveness_pings_its_own_celery_worker(default: Rendered) -> None:
    spec = container(default.get("Deployment", name("worker")))
    for probe in ("startupProbe", "livenessProbe"):
        command = spec[probe]["exec"]["command"]
        assert command[:3] == ["tablescout", "health", "worker"]
        assert spec[probe]["timeoutSeconds"] > float(command[command.index("--timeout") + 1])


def test_every_container_command_is_a_real_command(production: Rendered, tmp_path: Path) -> None:
    commands: list[list[str]] = []
    for workload in production.kinds("Deployment") + production.kinds("Job"):
        spec = container(workload)
        commands.append(spec["args"])
        commands += [spec[p]["exec"]["command"] for p in ("startupProbe", "livenessProbe") if "exec" in spec.get(p, {})]
    assert len(commands) >= 7
    for argv in {tuple(c) for c in commands}:
        assert_command_exists(list(argv), tmp_path)


# --- configuration and secrets -------------------------------------------------------------------------------------


def test_the_configuration_file_is_valid_for_tablescout(
    production: Rendered, default: Rendered, tmp_path: Path
) -> None:
    ruamel = require_module("ruamel.yaml")
    for rendered in (default, production):
        text = rendered.get("ConfigMap", f"{RELEASE}-tablescout")["data"]["tablescout.yaml"]
        path = tmp_path / "tablescout.yaml"
        path.write_text(text, encoding="utf-8")
        document = ruamel.YAML(typ="rt").load(text)
        validate_document(path, document)  # the same validation tablescout runs at start-up
    config = yaml.safe_load(production.get("ConfigMap", f"{RELEASE}-tablescout")["data"]["tablescout.yaml"])
    assert config["sources"]["erp"]["url"].startswith("mysql+pymysql://tablescout:${ERP_DB_PASSWORD}@")
    assert config["default_role"] == "analyst"


def test_a_broken_configuration_fails_in_tablescout_too(tmp_path: Path) -> None:
    """The schema's view of `config` and tablescout's own agree on a mistake: an unknown key."""
    from ruamel.yaml import YAML

    path = tmp_path / "tablescout.yaml"
    with pytest.raises(ConfigError, match="unknown key"):
        validate_document(path, YAML(typ="rt").load("roles:\n  analyst:\n    grant: []\n"))


def test_no_secret_reaches_a_config_map(chart: Any) -> None:
    secrets = {name: f"s3cret-{name.lower()}-value" for name, secret in setting_names().items() if secret}
    secrets["ERP_DB_PASSWORD"] = "s3cret-erp-password"
    values = production_values()
    values["secret"] = {"existingSecret": "", "values": secrets}
    rendered = render(chart, values)
    for config_map in rendered.kinds("ConfigMap"):
        text = json.dumps(config_map)
        assert not [v for v in secrets.values() if v in text], config_map["metadata"]["name"]
        assert not set(config_map.get("data", {})) & set(secrets), config_map["metadata"]["name"]
    for secret in rendered.kinds("Secret"):
        decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
        assert decoded == secrets
    # nothing secret in a pod spec either: only references to the Secret
    for workload in rendered.kinds("Deployment") + rendered.kinds("Job"):
        text = json.dumps(workload)
        assert not [v for v in secrets.values() if v in text]


def test_values_name_only_settings_tablescout_reads(chart: Any) -> None:
    """values.schema.json lists the settings by kind; a setting added to core/config/settings.py must be added here."""
    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    settings = setting_names()
    plain = {n for n, secret in settings.items() if not secret} - SET_BY_DEPLOYMENT
    secret = {n for n, secret in settings.items() if secret}
    assert set(schema["properties"]["env"]["propertyNames"]["enum"]) == plain
    assert set(schema["properties"]["secret"]["properties"]["values"]["propertyNames"]["anyOf"][0]["enum"]) == secret
    chart_values = chart.values
    assert set(chart_values["env"]) <= plain
    assert set(chart_values["secret"]["values"]) <= secret


def test_a_config_change_rolls_the_pods(chart: Any) -> None:
    before = render(chart, None).get("Deployment", name("worker"))["spec"]["template"]["metadata"]["annotations"]
    values = {"config": {"roles": {"analyst": {"grants": [{"database": "erp"}]}}, "sources": {}, "groups": []}}
    after = render(chart, values).get("Deployment", name("worker"))["spec"]["template"]["metadata"]["annotations"]
    assert before["checksum/config"] != after["checksum/config"]
    assert before["checksum/env"] == after["checksum/env"]


# --- the schema refuses bad values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"socketMode": {"enabled": True, "replicas": 1}}, "/socketMode/replicas"),
        ({"env": {"TABLESCOUT_DATABASE_URL": "postgresql://u:p@db/x"}}, "invalid propertyName"),
        ({"env": {"TABLESCOUT_MODLE": "anthropic:x"}}, "invalid propertyName"),
        ({"secret": {"existingSecret": "", "values": {"TABLESCOUT_REDIS": "redis://r"}}}, "invalid propertyName"),
        ({"workers": {"replicas": 3}}, "additional properties 'workers' not allowed"),
        ({"worker": {"concurrency": 0}}, "/worker/concurrency"),
        ({"worker": {"autoscaling": {"targetCPUUtilizationPercentage": 150}}}, "targetCPUUtilizationPercentage"),
        ({"config": {"groups": [{"platform": "discord", "group": "g", "roles": []}]}}, "/config/groups/0/platform"),
        ({"image": {"pullPolicy": "Sometimes"}}, "/image/pullPolicy"),
    ],
)
def test_the_schema_rejects_a_bad_value(chart: Any, helm: Any, values: dict[str, Any], message: str) -> None:
    merged = _merge(chart.values, values)
    with pytest.raises(helm.HelmValuesError, match=message):
        chart.validate_schema(merged)
    with pytest.raises(helm.HelmValuesError):  # rendering validates too: a bad value never reaches a cluster
        chart.render(merged, name=RELEASE, namespace=NAMESPACE)


def test_the_schema_accepts_the_shipped_values(chart: Any) -> None:
    chart.validate_schema(None)
    chart.validate_schema(production_values())


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
