"""Renders the Kubernetes manifests (k8s/) and checks them: schema (kubernetes-validate, strict, one
pinned Kubernetes version) and the deployment's invariants on the rendered objects.

`check(objects, profile)` returns one Violation per broken rule, each naming the object and the
rule, so that a failing CI run says what to fix. The NetworkPolicy rule computes, from the
rendered policies, which pod may reach which port of which other pod, and compares that with the
intended table (INTENDED_PATHS).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import parse_qsl, urlsplit

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parents[2]
# The one Kubernetes version the manifests are validated against (kubernetes-validate schemas).
KUBERNETES_VERSION = "1.31.0"

NAMESPACE = "glossator"
# Where `kubectl apply` puts a namespaced object whose manifest names no namespace: the namespace of
# the applier's current context, which is not ours (its pods would wait for ConfigMaps there).
CURRENT_NAMESPACE = "<the current kubectl context's namespace>"
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Namespace",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "IngressClass",
        "MutatingWebhookConfiguration",
        "PersistentVolume",
        "PriorityClass",
        "StorageClass",
        "ValidatingWebhookConfiguration",
    }
)
IMAGE = "ghcr.io/glossator/glossator"
GLOSSATOR_UID = 10001
SECRET_NAME = "glossator-secrets"
SECRET_TEMPLATE = ROOT / "k8s" / "secret"
PLACEHOLDER = "CHANGE-ME"
APP_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
PART_OF_LABEL = "app.kubernetes.io/part-of"
# A generated ConfigMap's name ends in kustomize's hash of its content.
HASH_SUFFIX = re.compile(r"-[a-z0-9]{10}$")

# service -> (gRPC service name of its health checks, Deployment/app name)
SERVICES = {
    "agent": "glossator.v1.AgentService",
    "retrieval": "glossator.v1.RetrievalService",
    "validation": "glossator.v1.ValidationService",
}
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")
LONG_RUNNING_KINDS = ("Deployment", "StatefulSet", "DaemonSet")

# Sources of traffic that are not workloads of the manifests, for the NetworkPolicy analysis.
CLIENT_NS = "namespace labelled glossator.dev/client"
MONITORING_NS = "namespace labelled glossator.dev/monitoring"
ADMIN_POD = "pod labelled glossator.dev/role=admin"
OTHER_POD = "unlabelled pod in namespace glossator"
OTHER_NS = "pod in another namespace"

# (source, destination app, port): every path ingress may take, and no other.
INTENDED_PATHS = {
    (CLIENT_NS, "glossator-agent", 50051),
    (MONITORING_NS, "glossator-agent", 9090),
    (MONITORING_NS, "glossator-retrieval", 9090),
    (MONITORING_NS, "glossator-validation", 9090),
    ("glossator-agent", "glossator-retrieval", 50052),
    ("glossator-agent", "glossator-validation", 50053),
    ("glossator-agent", "glossator-redis", 6379),
    (ADMIN_POD, "glossator-retrieval", 50052),
    ("glossator-ingest", "glossator-retrieval", 50052),  # k8s/examples/ingest-job.yaml
    ("glossator-retrieval", "glossator-qdrant", 6333),
    ("glossator-qdrant", "glossator-qdrant", 6333),
    ("glossator-qdrant", "glossator-qdrant", 6335),
}


# -- rendering and schema ----------------------------------------------------------------------


class KubectlMissing(RuntimeError):
    pass


def kubectl() -> str:
    found = shutil.which("kubectl") or ("/usr/bin/kubectl" if Path("/usr/bin/kubectl").exists() else None)
    if found is None:
        raise KubectlMissing("kubectl is not installed: the kustomizations cannot be rendered")
    return found


def render(kustomization: Path) -> list[dict]:
    """`kubectl kustomize` of a directory, as a list of objects."""
    result = subprocess.run(
        [kubectl(), "kustomize", str(kustomization)], capture_output=True, text=True, timeout=60, check=False
    )
    if result.returncode != 0:
        raise AssertionError(f"kubectl kustomize {kustomization} failed:\n{result.stderr}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def load(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def namespace_of(obj: dict) -> str | None:
    """The namespace `kubectl apply` puts the object in: its own, the applier's current one when it
    names none, None for a cluster-scoped kind."""
    if obj.get("kind") in CLUSTER_SCOPED_KINDS:
        return None
    return obj.get("metadata", {}).get("namespace") or CURRENT_NAMESPACE


def name_of(obj: dict) -> str:
    meta = obj.get("metadata", {})
    return f"{obj.get('kind')}/{meta.get('name') or meta.get('generateName', '?')}"


@dataclass(frozen=True)
class Violation:
    obj: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.obj} [{self.rule}]: {self.detail}"


def validate_schema(objects: Iterable[dict]) -> list[Violation]:
    """kubernetes-validate, strict (unknown fields are errors), at KUBERNETES_VERSION."""
    found = []
    for obj in objects:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(str(p) for p in error.path)
            found.append(Violation(name_of(obj), "schema", f"{path}: {error.message}"))
        except kubernetes_validate.SchemaNotFoundError as error:
            found.append(Violation(name_of(obj), "schema", str(error)))
    return found


# -- settings documented by `glossator config` --------------------------------------------------


@cache
def glossator_settings() -> dict[str, str | None]:
    """Every variable of `glossator config` with its default (None: unset), plus the client
    commands' GLOSSATOR_<SERVICE>_TARGET (services/commands/connect.py)."""
    from services.commands.config import documented_settings
    from services.common.config_doc import config_reference

    reference = config_reference(documented_settings())
    rows = re.findall(r"^\| `(GLOSSATOR_[A-Z0-9_]+)` \| (.*?) \|", reference, re.M)
    found: dict[str, str | None] = {
        name: None if default == "(unset)" else default.strip("`") for name, default in rows
    }
    for service in SERVICES:
        found.setdefault(f"GLOSSATOR_{service.upper()}_TARGET", None)
    return found


# -- objects -----------------------------------------------------------------------------------


@dataclass
class Workload:
    obj: dict
    pod: dict  # the pod template

    @property
    def name(self) -> str:
        return name_of(self.obj)

    @property
    def kind(self) -> str:
        return self.obj["kind"]

    @property
    def namespace(self) -> str:
        return namespace_of(self.obj) or NAMESPACE

    @property
    def labels(self) -> dict[str, str]:
        return self.pod.get("metadata", {}).get("labels", {})

    @property
    def app(self) -> str:
        return self.labels.get(APP_LABEL) or self.obj["metadata"].get("name", "?")

    @property
    def spec(self) -> dict:
        return self.pod.get("spec", {})

    def containers(self, init: bool = True) -> list[dict]:
        return [*(self.spec.get("initContainers", []) if init else []), *self.spec.get("containers", [])]


def workloads(objects: Iterable[dict]) -> list[Workload]:
    found = []
    for obj in objects:
        if obj.get("kind") == "CronJob":
            found.append(Workload(obj, obj["spec"]["jobTemplate"]["spec"]["template"]))
        elif obj.get("kind") in WORKLOAD_KINDS:
            found.append(Workload(obj, obj["spec"]["template"]))
    return found


def by_kind(objects: Iterable[dict], kind: str) -> list[dict]:
    return [obj for obj in objects if obj.get("kind") == kind]


def glossator_service(container: dict) -> str | None:
    """agent / retrieval / validation for a container running `glossator serve <service>` (by its
    arguments, whatever registry the image is pulled from)."""
    args = [*container.get("command", [])[1:], *container.get("args", [])]
    if len(args) >= 2 and args[0] == "serve" and args[1] in SERVICES:
        return args[1]
    return None


def selector_matches(selector: dict | None, labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels and matchExpressions) against a set of labels."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


_FROM_SECRET = "<from Secret>"
_FROM_FIELD = "<from field>"


def container_env(container: dict, objects: list[dict]) -> tuple[dict[str, str], list[str]]:
    """The container's environment as the kubelet builds it (envFrom, then env over it), and the
    ConfigMap references that do not resolve. Values taken from Secrets or fields are markers."""
    config_maps = {cm["metadata"]["name"]: cm.get("data", {}) for cm in by_kind(objects, "ConfigMap")}
    env: dict[str, str] = {}
    missing = []
    for source in container.get("envFrom", []):
        prefix = source.get("prefix", "")
        if "configMapRef" in source:
            ref = source["configMapRef"]
            if ref["name"] not in config_maps:
                if not ref.get("optional"):
                    missing.append(ref["name"])
                continue
            env.update({prefix + key: str(value) for key, value in config_maps[ref["name"]].items()})
        elif "secretRef" in source:
            missing.append(f"secretRef {source['secretRef']['name']} (secrets go in env, key by key)")
    for variable in container.get("env", []):
        if "value" in variable:
            env[variable["name"]] = str(variable["value"])
        elif "secretKeyRef" in variable.get("valueFrom", {}):
            env[variable["name"]] = _FROM_SECRET
        else:
            env[variable["name"]] = _FROM_FIELD
    return env, missing


def setting(env: dict[str, str], name: str) -> str | None:
    """A setting's value in the container: its env, else the documented default."""
    return env[name] if name in env else glossator_settings().get(name)


# -- invariants --------------------------------------------------------------------------------


@dataclass
class Profile:
    """What a rendered overlay must also satisfy beyond the common invariants."""

    name: str
    single_replicas: bool = False  # dev: one replica of everything
    production: bool = False  # prod: replicas, required secrets, TLS
    extra_sources: list[Workload] = field(default_factory=list)  # e.g. the example ingest Job


def check(objects: list[dict], profile: Profile | None = None) -> list[Violation]:
    """Every invariant of the manifests; [] when they all hold."""
    profile = profile or Profile("any")
    found: list[Violation] = []
    for rule in (
        _namespaces,
        _labels,
        _config_rolls,
        _containers,
        _termination_grace,
        _glossator_settings,
        _settings_parse,
        _probe_targets,
        _services,
        _headless_targets,
        _autoscalers,
        _disruption_budgets,
        _secrets,
        _config_refs,
        _service_accounts,
        _qdrant,
        _redis,
    ):
        found.extend(rule(objects))
    found.extend(network_violations(objects, profile.extra_sources))
    if profile.single_replicas:
        found.extend(_single_replicas(objects))
    if profile.production:
        found.extend(_production(objects))
    return found


def _namespaces(objects: list[dict]) -> Iterator[Violation]:
    for obj in objects:
        namespace = namespace_of(obj)
        if namespace is not None and namespace != NAMESPACE:
            yield Violation(
                name_of(obj),
                "namespace",
                f"renders in {namespace}, not {NAMESPACE}: `kubectl apply -k` would put it there",
            )


def _labels(objects: list[dict]) -> Iterator[Violation]:
    """part-of and component on every object and pod template (a pod's as its workload's), and
    selectors of the app name only: a Deployment's selector is immutable, so a label added to it
    would stop the next `kubectl apply` of the existing Deployment."""
    for obj in objects:
        labels = obj.get("metadata", {}).get("labels") or {}
        if labels.get(PART_OF_LABEL) != "glossator":
            yield Violation(name_of(obj), "labels", f"{PART_OF_LABEL} is not glossator")
        if not labels.get(COMPONENT_LABEL):
            yield Violation(name_of(obj), "labels", f"no {COMPONENT_LABEL}")
    for workload in workloads(objects):
        own = workload.obj.get("metadata", {}).get("labels") or {}
        for key in (PART_OF_LABEL, COMPONENT_LABEL):
            if workload.labels.get(key) != own.get(key):
                yield Violation(workload.name, "labels", f"the pod template's {key} is not the workload's")
        selector = workload.obj["spec"].get("selector")
        if workload.kind in ("Deployment", "StatefulSet", "DaemonSet") and selector != {
            "matchLabels": {APP_LABEL: workload.labels.get(APP_LABEL)}
        }:
            yield Violation(
                workload.name, "labels", f"selects {selector}, not its {APP_LABEL} alone (immutable)"
            )


def _config_rolls(objects: list[dict]) -> Iterator[Violation]:
    """Every ConfigMap a pod reads has kustomize's content hash in its name: a change renames it,
    which changes the pod template and rolls the workload (a fixed name changes under running pods,
    which read env at start and see files change whenever the kubelet syncs)."""
    for workload in workloads(objects):
        names = {
            source["configMapRef"]["name"]
            for container in workload.containers()
            for source in container.get("envFrom", [])
            if "configMapRef" in source
        }
        names |= {
            variable["valueFrom"]["configMapKeyRef"]["name"]
            for container in workload.containers()
            for variable in container.get("env", [])
            if "configMapKeyRef" in variable.get("valueFrom", {})
        }
        names |= {v["configMap"]["name"] for v in workload.spec.get("volumes", []) if "configMap" in v}
        names |= {
            projected["configMap"]["name"]
            for v in workload.spec.get("volumes", [])
            for projected in v.get("projected", {}).get("sources", [])
            if "configMap" in projected
        }
        for name in sorted(names):
            if not HASH_SUFFIX.search(name):
                yield Violation(
                    workload.name,
                    "config-rolls",
                    f"reads ConfigMap {name}, whose name has no content hash: a change would not roll the pods",
                )


def _effective(container: dict, pod_spec: dict, key: str) -> Any:
    """A securityContext field of the container, else of the pod."""
    own = container.get("securityContext", {})
    return own[key] if key in own else pod_spec.get("securityContext", {}).get(key)


def _containers(objects: list[dict]) -> Iterator[Violation]:
    for workload in workloads(objects):
        spec = workload.spec
        if spec.get("enableServiceLinks") is not False:
            yield Violation(
                workload.name,
                "service-links",
                "enableServiceLinks must be false: Service glossator-<svc> would inject GLOSSATOR_<SVC>_PORT=tcp://...",
            )
        if spec.get("automountServiceAccountToken") is not False:
            yield Violation(
                workload.name, "service-account-token", "automountServiceAccountToken must be false"
            )
        for container in workload.containers():
            where = f"container {container['name']}"
            if workload.kind in LONG_RUNNING_KINDS and container in spec.get("containers", []):
                for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                    if not container.get(probe):
                        yield Violation(workload.name, "probes", f"{where} has no {probe}")
            resources = container.get("resources", {})
            for kind in ("requests", "limits"):
                for resource in ("cpu", "memory"):
                    if resource not in resources.get(kind, {}):
                        yield Violation(workload.name, "resources", f"{where} has no {kind}.{resource}")
            if _effective(container, spec, "runAsNonRoot") is not True:
                yield Violation(workload.name, "non-root", f"{where}: runAsNonRoot is not true")
            if _effective(container, spec, "runAsUser") == 0:
                yield Violation(workload.name, "non-root", f"{where}: runAsUser is 0")
            if glossator_service(container) or container.get("image", "").startswith(IMAGE):
                uid = _effective(container, spec, "runAsUser")
                if uid != GLOSSATOR_UID:
                    yield Violation(
                        workload.name, "non-root", f"{where}: runs as uid {uid}, not {GLOSSATOR_UID}"
                    )
            own = container.get("securityContext", {})
            if own.get("readOnlyRootFilesystem") is not True:
                yield Violation(
                    workload.name, "read-only-root", f"{where}: readOnlyRootFilesystem is not true"
                )
            if own.get("allowPrivilegeEscalation") is not False:
                yield Violation(
                    workload.name,
                    "no-privilege-escalation",
                    f"{where}: allowPrivilegeEscalation is not false",
                )
            if own.get("privileged"):
                yield Violation(workload.name, "no-privilege-escalation", f"{where} is privileged")
            if "ALL" not in own.get("capabilities", {}).get("drop", []) or own.get("capabilities", {}).get(
                "add"
            ):
                yield Violation(
                    workload.name, "capabilities", f"{where}: capabilities must drop ALL and add none"
                )
            seccomp = _effective(container, spec, "seccompProfile") or {}
            if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
                yield Violation(workload.name, "seccomp", f"{where}: seccompProfile is not RuntimeDefault")
            image = container.get("image", "")
            if "@sha256:" not in image:
                tag = image.rsplit("/", 1)[-1].partition(":")[2]
                if not tag or tag == "latest":
                    yield Violation(workload.name, "image-pinned", f"{where}: image {image!r} is not pinned")


def _glossator_containers(objects: list[dict]) -> Iterator[tuple[Workload, dict, str]]:
    for workload in workloads(objects):
        for container in workload.containers(init=False):
            service = glossator_service(container)
            if service is not None:
                yield workload, container, service


def _seconds(value: str | None) -> float:
    return float(value) if value not in (None, "") else 0.0


def _termination_grace(objects: list[dict]) -> Iterator[Violation]:
    for workload, container, service in _glossator_containers(objects):
        env, _ = container_env(container, objects)
        prefix = f"GLOSSATOR_{service.upper()}_"
        parts = {
            part: _seconds(setting(env, prefix + part))
            for part in ("DRAIN_SECONDS", "GRACE_SECONDS", "EXIT_MARGIN_SECONDS")
        }
        needed = sum(parts.values())
        period = workload.spec.get("terminationGracePeriodSeconds", 30)
        if not period > needed:
            detail = " + ".join(f"{k.lower()} {v:g}" for k, v in parts.items())
            yield Violation(
                workload.name,
                "termination-grace",
                f"terminationGracePeriodSeconds {period} must exceed {detail} = {needed:g} (container {container['name']})",
            )


def _glossator_settings(objects: list[dict]) -> Iterator[Violation]:
    """Real setting names only; the settings a pod needs in Kubernetes."""
    known = glossator_settings()
    for workload in workloads(objects):
        for container in workload.containers():
            env, missing = container_env(container, objects)
            for name in missing:
                yield Violation(
                    workload.name,
                    "config-refs",
                    f"container {container['name']}: envFrom {name} does not resolve",
                )
            for name in sorted(env):
                if name.startswith("GLOSSATOR_") and name not in known:
                    yield Violation(
                        workload.name,
                        "env-names",
                        f"container {container['name']}: {name} is not a setting of `glossator config`",
                    )
    for workload, container, service in _glossator_containers(objects):
        env, _ = container_env(container, objects)
        prefix = f"GLOSSATOR_{service.upper()}_"
        where = f"container {container['name']}"
        if setting(env, prefix + "HOST") != "0.0.0.0":
            yield Violation(
                workload.name, "listen-address", f"{where}: {prefix}HOST must be 0.0.0.0 in a pod"
            )
        for name, reason in (
            ("DRAIN_SECONDS", "endpoints must stop sending before the grace period starts"),
            ("MAX_CONNECTION_AGE_SECONDS", "clients must reconnect to spread over new replicas"),
        ):
            if _seconds(setting(env, prefix + name)) <= 0:
                yield Violation(workload.name, "scale-out", f"{where}: {prefix}{name} must be > 0 ({reason})")
        if setting(env, prefix + "LOG_FORMAT") != "json":
            yield Violation(workload.name, "logging", f"{where}: {prefix}LOG_FORMAT must be json")
        if service == "agent":
            yield from _answer_fits_grace(workload, env)
        if (
            service == "agent"
            and _secret_ref(container, "GLOSSATOR_AGENT_REDIS_PASSWORD") != REDIS_PASSWORD_KEY
        ):
            yield Violation(
                workload.name,
                "sessions",
                f"{where}: GLOSSATOR_AGENT_REDIS_PASSWORD must come from Secret key {REDIS_PASSWORD_KEY}, as Redis' requirepass",
            )
        if service == "agent" and setting(env, "GLOSSATOR_AGENT_SESSION_BACKEND") != "redis":
            yield Violation(
                workload.name, "sessions", f"{where}: replicas share sessions only with the redis backend"
            )


def _settings_parse(objects: list[dict]) -> Iterator[Violation]:
    """The container's environment is accepted by the service's own settings classes (values
    from Secrets stand in as 32 characters)."""
    from pydantic import ValidationError

    from services.commands.config import documented_settings

    classes = documented_settings()
    for workload, container, service in _glossator_containers(objects):
        env, _ = container_env(container, objects)
        env = {k: "x" * 32 if v == _FROM_SECRET else "1" if v == _FROM_FIELD else v for k, v in env.items()}
        for settings_class in (classes[service], *(c for name, c in classes.items() if name not in SERVICES)):
            with mock.patch.dict(os.environ, env, clear=True):
                try:
                    settings_class(_env_file=None)
                except ValidationError as error:
                    for problem in error.errors():
                        where = ".".join(str(part) for part in problem["loc"])
                        yield Violation(
                            workload.name,
                            "settings",
                            f"container {container['name']}: {settings_class.__name__}.{where}: {problem['msg']}",
                        )


def _answer_fits_grace(workload: Workload, env: dict[str, str]) -> Iterator[Violation]:
    """An answer still running MAX_CONNECTION_AGE_GRACE_SECONDS after its connection reached
    MAX_CONNECTION_AGE_SECONDS is cut, and one still running GRACE_SECONDS after SIGTERM too: both
    must cover the longest answer (retrieval + validation deadlines, and the LLM run if configured)."""
    parts = ["GLOSSATOR_AGENT_RETRIEVAL_TIMEOUT_SECONDS", "GLOSSATOR_AGENT_VALIDATION_TIMEOUT_SECONDS"]
    if setting(env, "GLOSSATOR_AGENT_LLM_BASE_URL"):
        parts.append("GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS")
    longest = sum(_seconds(setting(env, name)) for name in parts)
    graces = ["GLOSSATOR_AGENT_GRACE_SECONDS"]
    if _seconds(setting(env, "GLOSSATOR_AGENT_MAX_CONNECTION_AGE_SECONDS")) > 0:
        graces.append("GLOSSATOR_AGENT_MAX_CONNECTION_AGE_GRACE_SECONDS")
    for name in graces:
        grace = _seconds(setting(env, name))
        if grace < longest:
            yield Violation(
                workload.name,
                "stream-grace",
                f"{name} {grace:g} < {' + '.join(parts)} = {longest:g}: answers running past it are cut",
            )


def _ports(container: dict) -> dict[str, int]:
    return {
        port.get("name", str(port["containerPort"])): port["containerPort"]
        for port in container.get("ports", [])
    }


def _probe_targets(objects: list[dict]) -> Iterator[Violation]:
    """Probes are the kubelet's own gRPC probes of grpc.health.v1: readiness and startup about the
    service, liveness about the server (""), on the health-only port when one is set, else on the
    service port. The kubelet speaks plaintext only, so a server that serves TLS needs the former."""
    for workload, container, service in _glossator_containers(objects):
        env, _ = container_env(container, objects)
        prefix = f"GLOSSATOR_{service.upper()}_"
        port = int(setting(env, prefix + "PORT") or 0)
        health_port = int(setting(env, prefix + "HEALTH_PORT") or 0)
        ports = _ports(container)
        if ports.get("grpc") != port:
            yield Violation(
                workload.name, "probe-target", f"container port 'grpc' is not {prefix}PORT {port}"
            )
        if health_port and ports.get("health") != health_port:
            yield Violation(
                workload.name,
                "probe-target",
                f"container port 'health' is not {prefix}HEALTH_PORT {health_port}",
            )
        if setting(env, "GLOSSATOR_TLS_CERT_FILE") and not health_port:
            yield Violation(
                workload.name,
                "probe-target",
                f"the service port serves TLS, which the kubelet's gRPC probes cannot speak: set {prefix}HEALTH_PORT",
            )
        probed = health_port or port
        for probe, expected in (
            ("startupProbe", SERVICES[service]),
            ("readinessProbe", SERVICES[service]),
            ("livenessProbe", ""),
        ):
            spec = container.get(probe) or {}
            if "grpc" not in spec:
                yield Violation(workload.name, "probe-target", f"{probe} is not a gRPC probe")
                continue
            target = (spec["grpc"].get("port"), spec["grpc"].get("service", ""))
            if target != (probed, expected):
                yield Violation(
                    workload.name, "probe-target", f"{probe} checks {target}, expected {(probed, expected)}"
                )


def _pods_selected(objects: list[dict], selector: dict, namespace: str) -> list[Workload]:
    return [
        w for w in workloads(objects) if w.namespace == namespace and selector_matches(selector, w.labels)
    ]


def _services(objects: list[dict]) -> Iterator[Violation]:
    for service in by_kind(objects, "Service"):
        name, spec = name_of(service), service["spec"]
        namespace = namespace_of(service)
        selected = _pods_selected(objects, {"matchLabels": spec.get("selector", {})}, namespace)
        if not spec.get("selector") or not selected:
            yield Violation(name, "service-selector", "selects no pods of the manifests")
            continue
        containers = [c for w in selected for c in w.containers(init=False)]
        ports = {p for c in containers for p in (*_ports(c), *_ports(c).values())}
        ours = any(glossator_service(c) for c in containers)
        for port in spec.get("ports", []):
            target = port.get("targetPort", port["port"])
            if target not in ports:
                yield Violation(
                    name,
                    "service-ports",
                    f"port {port.get('name')}: targetPort {target} is no container port",
                )
            port_name = port.get("name", "")
            if ours and not (port_name in ("grpc", "metrics") or port_name.startswith("grpc-")):
                yield Violation(
                    name,
                    "service-port-names",
                    f"port {port_name or port['port']} must be named grpc, grpc-* or metrics",
                )


def _headless_targets(objects: list[dict]) -> Iterator[Violation]:
    """The agent reaches retrieval and validation through dns:/// names of headless Services."""
    services = {(namespace_of(s), s["metadata"]["name"]): s for s in by_kind(objects, "Service")}
    for workload, container, service in _glossator_containers(objects):
        if service != "agent":
            continue
        env, _ = container_env(container, objects)
        for dependency in ("retrieval", "validation"):
            variable = f"GLOSSATOR_AGENT_{dependency.upper()}_TARGET"
            target = setting(env, variable) or ""
            match = re.fullmatch(r"dns:///([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local:(\d+)", target)
            if not match:
                yield Violation(
                    workload.name,
                    "round-robin",
                    f"{variable}={target!r} is not dns:///<service>.<ns>.svc.cluster.local:<port>",
                )
                continue
            headless = services.get((match[2], match[1]))
            if headless is None or headless["spec"].get("clusterIP") != "None":
                yield Violation(
                    workload.name,
                    "round-robin",
                    f"{variable}: {match[1]}.{match[2]} is not a headless Service of the manifests",
                )
                continue
            pods = _pods_selected(objects, {"matchLabels": headless["spec"].get("selector", {})}, match[2])
            if not any(glossator_service(c) == dependency for w in pods for c in w.containers(init=False)):
                yield Violation(
                    workload.name, "round-robin", f"{variable}: {match[1]} does not select {dependency} pods"
                )
            if int(match[3]) not in {p["port"] for p in headless["spec"].get("ports", [])}:
                yield Violation(
                    workload.name, "round-robin", f"{variable}: port {match[3]} is not a port of {match[1]}"
                )


def _autoscalers(objects: list[dict]) -> Iterator[Violation]:
    targets = {
        (o["kind"], o["metadata"]["name"]): o
        for o in objects
        if o.get("kind") in ("Deployment", "StatefulSet")
    }
    for hpa in by_kind(objects, "HorizontalPodAutoscaler"):
        ref = hpa["spec"]["scaleTargetRef"]
        target = targets.get((ref["kind"], ref["name"]))
        if target is None or ref.get("apiVersion") != "apps/v1":
            yield Violation(
                name_of(hpa),
                "hpa-target",
                f"scaleTargetRef {ref['kind']}/{ref['name']} is not a workload of the manifests",
            )
            continue
        if "replicas" in target["spec"]:
            yield Violation(
                name_of(target),
                "hpa-target",
                f"sets replicas, which every apply would reset under {name_of(hpa)}",
            )
        if hpa["spec"].get("minReplicas", 1) > hpa["spec"]["maxReplicas"]:
            yield Violation(name_of(hpa), "hpa-target", "minReplicas exceeds maxReplicas")
        resources = {m.get("resource", {}).get("name") for m in hpa["spec"].get("metrics", [])}
        for container in target["spec"]["template"]["spec"]["containers"]:
            for resource in resources - {None}:
                if resource not in container.get("resources", {}).get("requests", {}):
                    yield Violation(
                        name_of(hpa),
                        "hpa-target",
                        f"scales on {resource}, which container {container['name']} does not request",
                    )


def _disruption_budgets(objects: list[dict]) -> Iterator[Violation]:
    for pdb in by_kind(objects, "PodDisruptionBudget"):
        namespace = namespace_of(pdb)
        if not _pods_selected(objects, pdb["spec"].get("selector"), namespace):
            yield Violation(name_of(pdb), "pdb-selector", "selects no pods of the manifests")
        if pdb["spec"].get("maxUnavailable") == 0 or str(pdb["spec"].get("maxUnavailable")) == "0%":
            yield Violation(name_of(pdb), "pdb-selector", "maxUnavailable 0 blocks every node drain")


def secret_keys() -> set[str]:
    """The keys of the Secret's template (k8s/secret/secret.yaml)."""
    (template,) = load(SECRET_TEMPLATE / "secret.yaml")
    return set(template.get("stringData", {})) | set(template.get("data", {}))


def _secrets(objects: list[dict]) -> Iterator[Violation]:
    for secret in by_kind(objects, "Secret"):
        if secret.get("data"):
            yield Violation(
                name_of(secret),
                "secret-placeholder",
                "holds base64 data: a template has stringData placeholders only",
            )
        for key, value in (secret.get("stringData") or {}).items():
            if value not in (PLACEHOLDER, ""):
                yield Violation(
                    name_of(secret),
                    "secret-placeholder",
                    f"{key} holds a value other than the placeholder {PLACEHOLDER!r}",
                )
    for config_map in by_kind(objects, "ConfigMap"):
        for key in config_map.get("data", {}):
            if re.search(r"(^|_)(TOKEN|API_KEY|PASSWORD|SECRET)$", key):
                yield Violation(
                    name_of(config_map), "secret-in-configmap", f"{key} belongs in Secret {SECRET_NAME}"
                )
    keys = secret_keys()
    for workload in workloads(objects):
        for container in workload.containers():
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("secretKeyRef")
                if ref and (ref["name"] != SECRET_NAME or ref["key"] not in keys):
                    yield Violation(
                        workload.name,
                        "secret-refs",
                        f"{variable['name']} reads {ref['name']}/{ref['key']}, not a key of the template {SECRET_TEMPLATE.relative_to(ROOT)}",
                    )


def _config_refs(objects: list[dict]) -> Iterator[Violation]:
    config_maps = {cm["metadata"]["name"] for cm in by_kind(objects, "ConfigMap")}
    for workload in workloads(objects):
        volumes = workload.spec.get("volumes", [])
        for volume in volumes:
            ref = volume.get("configMap")
            if ref and ref["name"] not in config_maps and not ref.get("optional"):
                yield Violation(
                    workload.name,
                    "config-refs",
                    f"volume {volume['name']}: ConfigMap {ref['name']} is not rendered",
                )
        names = {v["name"] for v in volumes} | {
            t["metadata"]["name"] for t in workload.obj["spec"].get("volumeClaimTemplates", [])
        }
        for container in workload.containers():
            for mount in container.get("volumeMounts", []):
                if mount["name"] not in names:
                    yield Violation(
                        workload.name,
                        "config-refs",
                        f"container {container['name']} mounts unknown volume {mount['name']}",
                    )


def _service_accounts(objects: list[dict]) -> Iterator[Violation]:
    accounts = {sa["metadata"]["name"]: sa for sa in by_kind(objects, "ServiceAccount")}
    for account in accounts.values():
        if account.get("automountServiceAccountToken") is not False:
            yield Violation(
                name_of(account), "service-account-token", "automountServiceAccountToken must be false"
            )
    for workload in workloads(objects):
        if workload.kind in LONG_RUNNING_KINDS:
            account = workload.spec.get("serviceAccountName")
            if account not in accounts:
                yield Violation(
                    workload.name,
                    "service-account",
                    f"runs as ServiceAccount {account!r}, not one of its own",
                )


def _env_of(workload: Workload, objects: list[dict]) -> dict[str, str]:
    return container_env(workload.spec["containers"][0], objects)[0]


def _qdrant(objects: list[dict]) -> Iterator[Violation]:
    for workload in workloads(objects):
        container = workload.spec["containers"][0]
        if not container.get("image", "").startswith("qdrant/qdrant:"):
            continue
        env = _env_of(workload, objects)
        replicas = workload.obj["spec"].get("replicas", 1)
        factor = int(env.get("QDRANT__STORAGE__COLLECTION__REPLICATION_FACTOR", "1"))
        shards = int(env.get("QDRANT__STORAGE__COLLECTION__SHARD_NUMBER", str(replicas)))
        if env.get("QDRANT__CLUSTER__ENABLED") != "true":
            yield Violation(
                workload.name, "qdrant", "QDRANT__CLUSTER__ENABLED must be true (distributed mode)"
            )
        if factor > replicas:
            yield Violation(
                workload.name, "qdrant", f"replication factor {factor} exceeds the {replicas} nodes"
            )
        if shards < replicas:
            yield Violation(
                workload.name, "qdrant", f"{shards} shards leave some of the {replicas} nodes empty"
            )
        if not workload.obj["spec"].get("volumeClaimTemplates"):
            yield Violation(workload.name, "qdrant", "storage needs a volumeClaimTemplate")
        if env.get("QDRANT__SERVICE__API_KEY") != _FROM_SECRET:
            yield Violation(workload.name, "qdrant", "QDRANT__SERVICE__API_KEY must come from the Secret")
        lock = ROOT / "requirements.lock"
        client = re.search(r"^qdrant-client==(\d+)\.(\d+)", lock.read_text(), re.M) if lock.exists() else None
        server = re.search(r":v(\d+)\.(\d+)\.\d+", container["image"])
        if server is None:
            yield Violation(workload.name, "qdrant", f"image {container['image']} is not pinned to vX.Y.Z")
        elif client and (int(server[1]), int(server[2])) < (int(client[1]), int(client[2])):
            yield Violation(
                workload.name,
                "qdrant",
                f"server {server[0][1:]} is older than the locked qdrant-client {client[1]}.{client[2]} (its requests use newer fields)",
            )


REDIS_PASSWORD_KEY = "redis-password"


def _secret_ref(container: dict, variable: str) -> str | None:
    """The key of Secret glossator-secrets the variable reads, if it reads one."""
    for entry in container.get("env", []):
        ref = entry.get("valueFrom", {}).get("secretKeyRef", {})
        if entry["name"] == variable and ref.get("name") == SECRET_NAME:
            return ref.get("key")
    return None


def _redis_tls(objects: list[dict], redis: Workload, container: dict) -> Iterator[Violation]:
    """Redis serves TLS: its probes speak it, and the agent dials rediss:// with files it mounts."""
    if "--tls" not in str(_env_of(redis, objects).get("REDIS_CLI_TLS", "")).split():
        yield Violation(
            redis.name, "redis", "serves TLS, but REDIS_CLI_TLS gives the probes' redis-cli no --tls"
        )
    for workload, agent, service in _glossator_containers(objects):
        if service != "agent":
            continue
        url = urlsplit(setting(container_env(agent, objects)[0], "GLOSSATOR_AGENT_REDIS_URL") or "")
        if url.scheme != "rediss":
            yield Violation(
                workload.name,
                "sessions",
                "Redis serves TLS only: GLOSSATOR_AGENT_REDIS_URL must be rediss://",
            )
        mounts = [m["mountPath"] for m in agent.get("volumeMounts", [])]
        for key, path in parse_qsl(url.query):
            if (
                key.startswith("ssl_")
                and path.startswith("/")
                and not any(path.startswith(m + "/") for m in mounts)
            ):
                yield Violation(
                    workload.name, "sessions", f"the Redis URL's {key} {path} is not in a mounted volume"
                )


def _redis(objects: list[dict]) -> Iterator[Violation]:
    config_maps = {cm["metadata"]["name"]: cm.get("data", {}) for cm in by_kind(objects, "ConfigMap")}
    for workload in workloads(objects):
        container = workload.spec["containers"][0]
        if not container.get("image", "").startswith("redis:"):
            continue
        conf = "\n".join(
            text
            for volume in workload.spec.get("volumes", [])
            if "configMap" in volume
            for text in config_maps.get(volume["configMap"]["name"], {}).values()
        )
        settings = dict(
            line.split(None, 1) for line in conf.splitlines() if line.strip() and not line.startswith("#")
        )
        for key, value in (
            ("appendonly", "yes"),
            ("appendfsync", "everysec"),
            ("maxmemory-policy", "noeviction"),
        ):
            if settings.get(key) != value:
                yield Violation(
                    workload.name, "redis", f"redis.conf must set {key} {value} (sessions are durable)"
                )
        if settings.get("protected-mode") == "no":
            yield Violation(
                workload.name,
                "redis",
                "redis.conf turns protected-mode off: only the start script may, when no password is set",
            )
        if _secret_ref(container, "REDISCLI_AUTH") != REDIS_PASSWORD_KEY:
            yield Violation(
                workload.name,
                "redis",
                f"REDISCLI_AUTH (requirepass) must come from Secret key {REDIS_PASSWORD_KEY}",
            )
        if settings.get("tls-port"):
            yield from _redis_tls(objects, workload, container)
        if workload.obj["spec"].get("replicas", 1) != 1:
            yield Violation(workload.name, "redis", "one primary: replicas must be 1")
        claims = {t["metadata"]["name"] for t in workload.obj["spec"].get("volumeClaimTemplates", [])}
        if not any(
            m["name"] in claims and m["mountPath"] == "/data" for m in container.get("volumeMounts", [])
        ):
            yield Violation(workload.name, "redis", "/data must be a PersistentVolumeClaim")


def _single_replicas(objects: list[dict]) -> Iterator[Violation]:
    for obj in by_kind(objects, "HorizontalPodAutoscaler"):
        yield Violation(name_of(obj), "dev-replicas", "dev runs one replica of everything: no autoscaler")
    for workload in workloads(objects):
        if workload.kind in ("Deployment", "StatefulSet") and workload.obj["spec"].get("replicas", 1) != 1:
            yield Violation(
                workload.name, "dev-replicas", f"{workload.obj['spec']['replicas']} replicas, dev runs 1"
            )


def _production(objects: list[dict]) -> Iterator[Violation]:
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in by_kind(objects, "HorizontalPodAutoscaler")}
    for workload, container, service in _glossator_containers(objects):
        name = workload.obj["metadata"]["name"]
        replicas = (
            hpas[name]["spec"].get("minReplicas", 1)
            if name in hpas
            else workload.obj["spec"].get("replicas", 1)
        )
        if replicas < 2:
            yield Violation(workload.name, "prod-replicas", f"at least 2 replicas in prod, has {replicas}")
        env, _ = container_env(container, objects)
        for variable in container.get("env", []):
            ref = variable.get("valueFrom", {}).get("secretKeyRef", {})
            if (
                ref.get("key") in ("auth-token", "qdrant-api-key", REDIS_PASSWORD_KEY)
                and ref.get("optional") is not False
            ):
                yield Violation(
                    workload.name, "prod-secrets", f"{variable['name']} must be required (optional: false)"
                )
        if "GLOSSATOR_AUTH_TOKEN" not in env:
            yield Violation(workload.name, "prod-secrets", "GLOSSATOR_AUTH_TOKEN must be set (auth on)")
        for variable in ("GLOSSATOR_TLS_CERT_FILE", "GLOSSATOR_TLS_KEY_FILE", "GLOSSATOR_TLS_CA_FILE"):
            if not setting(env, variable):
                yield Violation(workload.name, "prod-tls", f"{variable} must be set (TLS on)")
        if service != "agent" and setting(env, "GLOSSATOR_TLS_CLIENT_AUTH") != "true":
            yield Violation(
                workload.name, "prod-tls", "GLOSSATOR_TLS_CLIENT_AUTH must be true (mTLS between services)"
            )
    for workload in workloads(objects):
        container = workload.spec["containers"][0]
        if container.get("image", "").startswith("redis:"):
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("secretKeyRef", {})
                if ref.get("key") == REDIS_PASSWORD_KEY and ref.get("optional") is not False:
                    yield Violation(
                        workload.name,
                        "prod-secrets",
                        f"{variable['name']} must be required (optional: false)",
                    )
        if container.get("image", "").startswith("qdrant/qdrant:"):
            env = _env_of(workload, objects)
            if workload.obj["spec"].get("replicas", 1) < 3:
                yield Violation(workload.name, "prod-replicas", "Qdrant runs 3 nodes in prod")
            if int(env.get("QDRANT__STORAGE__COLLECTION__REPLICATION_FACTOR", "1")) < 2:
                yield Violation(
                    workload.name, "prod-replicas", "Qdrant's replication factor is at least 2 in prod"
                )
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {}).get("secretKeyRef", {})
                if ref.get("key") == "qdrant-api-key" and ref.get("optional") is not False:
                    yield Violation(
                        workload.name,
                        "prod-secrets",
                        f"{variable['name']} must be required (optional: false)",
                    )


# -- NetworkPolicies ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """A pod that may send traffic: a workload's, or a stand-in for pods outside the manifests."""

    name: str
    namespace: str
    labels: tuple[tuple[str, str], ...]
    namespace_labels: tuple[tuple[str, str], ...]


def _peer(name: str, namespace: str, labels: dict[str, str], namespace_labels: dict[str, str]) -> Peer:
    ns_labels = {"kubernetes.io/metadata.name": namespace, **namespace_labels}
    return Peer(name, namespace, tuple(sorted(labels.items())), tuple(sorted(ns_labels.items())))


def _namespace_labels(objects: list[dict], namespace: str) -> dict[str, str]:
    for obj in by_kind(objects, "Namespace"):
        if obj["metadata"]["name"] == namespace:
            return obj["metadata"].get("labels", {})
    return {}


def sources(objects: list[dict], extra: Iterable[Workload] = ()) -> list[Peer]:
    found = [
        _peer(w.app, w.namespace, w.labels, _namespace_labels(objects, w.namespace))
        for w in [*workloads(objects), *extra]
    ]
    own = _namespace_labels(objects, NAMESPACE)
    found += [
        _peer(CLIENT_NS, "clients", {"app": "client"}, {"glossator.dev/client": "true"}),
        _peer(MONITORING_NS, "monitoring", {"app": "prometheus"}, {"glossator.dev/monitoring": "true"}),
        _peer(ADMIN_POD, NAMESPACE, {"glossator.dev/role": "admin"}, own),
        _peer(OTHER_POD, NAMESPACE, {"app": "something-else"}, own),
        _peer(OTHER_NS, "elsewhere", {APP_LABEL: "glossator-agent"}, {}),
    ]
    return list({peer.name: peer for peer in found}.values())


def _peer_matches(rule_peer: dict, policy_namespace: str, source: Peer) -> bool:
    if "ipBlock" in rule_peer:
        return True  # addresses, not pods: counted as letting anyone in
    if "namespaceSelector" in rule_peer:
        namespace_ok = selector_matches(rule_peer["namespaceSelector"], dict(source.namespace_labels))
    else:
        namespace_ok = source.namespace == policy_namespace
    pod_ok = "podSelector" not in rule_peer or selector_matches(rule_peer["podSelector"], dict(source.labels))
    return namespace_ok and pod_ok


def _port_matches(rule_ports: list[dict] | None, name: str, number: int, protocol: str) -> bool:
    if not rule_ports:
        return True
    for port in rule_ports:
        if port.get("protocol", "TCP") != protocol:
            continue
        value = port.get("port")
        if value is None or value == name:
            return True
        if isinstance(value, int) and value <= number <= port.get("endPort", value):
            return True
    return False


def reachable(objects: list[dict], extra_sources: Iterable[Workload] = ()) -> set[tuple[str, str, int]]:
    """(source, destination app, port) for every ingress the rendered NetworkPolicies allow."""
    extra = list(extra_sources)
    policies = by_kind(objects, "NetworkPolicy")
    allowed = set()
    for destination in workloads(objects):
        selecting = [
            p
            for p in policies
            if namespace_of(p) == destination.namespace
            and selector_matches(p["spec"].get("podSelector", {}), destination.labels)
            and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
        ]
        for container in destination.containers(init=False):
            for port in container.get("ports", []):
                name, number, protocol = (
                    port.get("name", ""),
                    port["containerPort"],
                    port.get("protocol", "TCP"),
                )
                for source in sources(objects, extra):
                    if not selecting or any(
                        _port_matches(rule.get("ports"), name, number, protocol)
                        and (
                            not rule.get("from")
                            or any(
                                _peer_matches(peer, destination.namespace, source) for peer in rule["from"]
                            )
                        )
                        for policy in selecting
                        for rule in policy["spec"].get("ingress", [])
                    ):
                        allowed.add((source.name, destination.app, number))
    return allowed


def network_violations(objects: list[dict], extra_sources: Iterable[Workload] = ()) -> list[Violation]:
    extra = list(extra_sources)
    present_sources = {peer.name for peer in sources(objects, extra)}
    present_destinations = {w.app for w in workloads(objects)}
    intended = {(s, d, p) for s, d, p in INTENDED_PATHS if s in present_sources and d in present_destinations}
    actual = reachable(objects, extra)
    found = [
        Violation(
            f"NetworkPolicy (to {d})",
            "network-policy",
            f"{s} may reach {d}:{p}, which is not an intended path",
        )
        for s, d, p in sorted(actual - intended)
    ]
    found += [
        Violation(f"NetworkPolicy (to {d})", "network-policy", f"{s} cannot reach {d}:{p}, an intended path")
        for s, d, p in sorted(intended - actual)
    ]
    return found


def mutated(objects: list[dict]) -> list[dict]:
    """A deep copy, for tests that break one thing."""
    return copy.deepcopy(objects)
