"""The Kubernetes manifests (k8s/): every overlay renders with `kubectl kustomize`, passes
kubernetes-validate (strict, Kubernetes KUBERNETES_VERSION) and keeps the invariants of
tests/k8s/manifests.py; and the checker does fail, naming the object and the rule, on manifests
broken on purpose.

Without kubectl the rendering tests skip, unless GLOSSATOR_TEST_K8S_REQUIRED=1 (CI) makes that
a failure.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.k8s.manifests import (
    INTENDED_PATHS,
    KUBERNETES_VERSION,
    PLACEHOLDER,
    ROOT,
    SECRET_TEMPLATE,
    KubectlMissing,
    Profile,
    Violation,
    by_kind,
    check,
    load,
    mutated,
    reachable,
    render,
    secret_keys,
    validate_schema,
    workloads,
)

HERE = Path(__file__).resolve().parent
EXAMPLE_JOB = ROOT / "k8s" / "examples" / "ingest-job.yaml"
INGEST_JOB = workloads(load(EXAMPLE_JOB))
TARGETS = {
    "dev": (
        ROOT / "k8s" / "overlays" / "dev",
        Profile("dev", single_replicas=True, extra_sources=INGEST_JOB),
    ),
    "prod": (ROOT / "k8s" / "overlays" / "prod", Profile("prod", production=True, extra_sources=INGEST_JOB)),
    # prod with the llm and external-qdrant components on top (tls is in prod already)
    "all-components": (
        HERE / "overlays" / "all-components",
        Profile("all-components", production=True, extra_sources=INGEST_JOB),
    ),
}
_rendered: dict[Path, list[dict]] = {}


def rendered(path: Path) -> list[dict]:
    """The kustomization rendered once per test session; a skip (or, when
    GLOSSATOR_TEST_K8S_REQUIRED=1, a failure) without kubectl."""
    if path not in _rendered:
        try:
            _rendered[path] = render(path)
        except KubectlMissing as missing:
            if os.environ.get("GLOSSATOR_TEST_K8S_REQUIRED") == "1":
                pytest.fail(f"{missing}, and GLOSSATOR_TEST_K8S_REQUIRED=1")
            pytest.skip(f"{missing} (set GLOSSATOR_TEST_K8S_REQUIRED=1 to fail instead)")
    return mutated(_rendered[path])


def report(violations: list[Violation]) -> str:
    return "\n".join(["", *map(str, violations)])


# -- the shipped manifests ---------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_overlay_renders_and_passes_kubernetes_validate(target: str) -> None:
    path, _ = TARGETS[target]
    objects = rendered(path)
    assert objects, f"{path} rendered nothing"
    violations = validate_schema(objects)
    assert not violations, f"kubernetes-validate --strict, Kubernetes {KUBERNETES_VERSION}:" + report(
        violations
    )


@pytest.mark.parametrize("target", TARGETS)
def test_overlay_keeps_the_invariants(target: str) -> None:
    path, profile = TARGETS[target]
    violations = check(rendered(path), profile)
    assert not violations, f"{target}:" + report(violations)


@pytest.mark.parametrize("target", TARGETS)
def test_network_policies_allow_exactly_the_intended_paths(target: str) -> None:
    path, profile = TARGETS[target]
    objects = rendered(path)
    actual = reachable(objects, profile.extra_sources)
    apps = {w.app for w in workloads(objects)}
    # Every intended path to a workload of this overlay is open, and nothing else.
    assert actual == {path for path in INTENDED_PATHS if path[1] in apps}


def test_each_overlay_has_what_it_promises() -> None:
    dev = rendered(TARGETS["dev"][0])
    prod = rendered(TARGETS["prod"][0])
    everything = rendered(TARGETS["all-components"][0])

    def names(objects: list[dict], kind: str) -> set[str]:
        return {o["metadata"]["name"] for o in by_kind(objects, kind)}

    assert names(dev, "HorizontalPodAutoscaler") == set()
    assert names(prod, "HorizontalPodAutoscaler") == {"glossator-agent", "glossator-retrieval"}
    assert "glossator-qdrant" in names(dev, "StatefulSet") and "glossator-qdrant" in names(
        prod, "StatefulSet"
    )
    # external-qdrant drops the StatefulSet and everything that belongs to it
    assert names(everything, "StatefulSet") == {"glossator-redis"}
    assert not any("qdrant" in o["metadata"]["name"] for o in everything if o["kind"] != "Deployment")
    # the Secret is never part of an overlay: applying one must not overwrite the real Secret
    for objects in (dev, prod, everything):
        assert names(objects, "Secret") == set()
    # the llm component's endpoint reaches the agent
    (config,) = [
        c for c in by_kind(everything, "ConfigMap") if c["metadata"]["name"].startswith("glossator-config-")
    ]
    assert "GLOSSATOR_AGENT_LLM_BASE_URL" in config["data"]
    assert config["data"]["GLOSSATOR_RETRIEVAL_QDRANT_URL"].startswith("https://")
    # TLS on, and the probes still the kubelet's own, on the plaintext health-only port
    for workload in workloads(prod):
        if workload.kind == "Deployment":
            container = workload.spec["containers"][0]
            assert container["readinessProbe"]["grpc"]["port"] == 8081
            assert "exec" not in container["readinessProbe"]
    assert {c["metadata"]["name"].rsplit("-", 1)[0] for c in by_kind(prod, "ConfigMap")} == {
        "glossator-config",
        "glossator-qdrant-config",
        "glossator-redis-config",
    }


def _referenced_config_maps(objects: list[dict]) -> dict[str, set[str]]:
    """Each workload's ConfigMaps (envFrom and volumes)."""
    return {
        w.name: {
            *(
                s["configMapRef"]["name"]
                for c in w.containers()
                for s in c.get("envFrom", [])
                if "configMapRef" in s
            ),
            *(v["configMap"]["name"] for v in w.spec.get("volumes", []) if "configMap" in v),
        }
        for w in workloads(objects)
    }


def test_a_changed_setting_or_redis_conf_rolls_the_pods_that_read_them(tmp_path: Path) -> None:
    """An overlay that changes glossator-config and redis.conf, as the README tells users to: the
    ConfigMaps get new names, so the pod templates that read them change and roll; the others not."""
    prod = rendered(TARGETS["prod"][0])
    (tmp_path / "redis.conf").write_text(
        (ROOT / "k8s" / "base" / "redis.conf").read_text() + "maxclients 500\n"
    )
    (tmp_path / "kustomization.yaml").write_text(
        f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: glossator
resources:
  - {os.path.relpath(TARGETS["prod"][0], tmp_path)}
configMapGenerator:
  - name: glossator-config
    behavior: merge
    literals: [GLOSSATOR_AGENT_SESSION_MAX_TURNS=50]
  - name: glossator-redis-config
    behavior: replace
    files: [redis.conf]
"""
    )
    changed = rendered(tmp_path)
    assert not check(changed, TARGETS["prod"][1])
    before, after = _referenced_config_maps(prod), _referenced_config_maps(changed)
    for name in (
        "Deployment/glossator-agent",
        "Deployment/glossator-retrieval",
        "Deployment/glossator-validation",
    ):
        assert {n for n in before[name] if n.startswith("glossator-config-")} != {
            n for n in after[name] if n.startswith("glossator-config-")
        }, name
    assert before["StatefulSet/glossator-redis"] != after["StatefulSet/glossator-redis"]
    assert before["StatefulSet/glossator-qdrant"] == after["StatefulSet/glossator-qdrant"]  # not its config
    # and what reads the changed names is the changed content
    redis_config = _find(changed, "ConfigMap", "glossator-redis-config-")
    assert "maxclients 500" in redis_config["data"]["redis.conf"]
    assert redis_config["metadata"]["name"] in after["StatefulSet/glossator-redis"]


def _readme_jwks_overlay(folder: Path, *, namespace: bool) -> Path:
    """k8s/README.md's JWKS example, as the overlay it tells users to write over prod."""
    readme = (ROOT / "k8s" / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "glossator-jwks" in b]
    overlay = yaml.safe_load(textwrap.dedent(block))
    if not namespace:
        overlay.pop("namespace")
    overlay["resources"] = [os.path.relpath(TARGETS["prod"][0], folder)]
    folder.mkdir(parents=True)
    (folder / "jwks.json").write_text('{"keys": []}')
    (folder / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    return folder


def test_the_readme_jwks_overlay_renders_in_the_namespace_with_its_hashed_config_map(tmp_path: Path) -> None:
    objects = rendered(_readme_jwks_overlay(tmp_path / "documented", namespace=True))
    assert not check(objects, TARGETS["prod"][1])
    (jwks,) = [
        c for c in by_kind(objects, "ConfigMap") if c["metadata"]["name"].startswith("glossator-jwks-")
    ]
    assert jwks["metadata"]["namespace"] == "glossator"
    assert jwks["metadata"]["name"] in _referenced_config_maps(objects)["Deployment/glossator-agent"]
    # Without the overlay's namespace: the ConfigMap lands in the current namespace, unrenamed.
    broken = {
        (v.obj, v.rule) for v in check(rendered(_readme_jwks_overlay(tmp_path / "bare", namespace=False)))
    }
    assert (f"ConfigMap/{jwks['metadata']['name']}", "namespace") in broken
    assert ("Deployment/glossator-agent", "config-rolls") in broken


def test_secret_template_holds_placeholders_only() -> None:
    objects = rendered(SECRET_TEMPLATE)
    assert not validate_schema(objects)
    (secret,) = objects
    assert secret["metadata"] == {
        "name": "glossator-secrets",
        "namespace": "glossator",
        "labels": {"app.kubernetes.io/component": "shared", "app.kubernetes.io/part-of": "glossator"},
    }
    assert (
        set(secret["stringData"])
        == secret_keys()
        == {
            "auth-token",
            "qdrant-api-key",
            "redis-password",
            "llm-api-key",
        }
    )
    assert set(secret["stringData"].values()) == {PLACEHOLDER}
    # fails closed: a service token must be 16+ characters, so the placeholder cannot serve as one
    assert len(PLACEHOLDER) < 16
    assert not check(objects)


def test_example_ingest_job_is_valid_and_admin_labelled() -> None:
    job = load(EXAMPLE_JOB)
    assert not validate_schema(job)
    objects = rendered(TARGETS["dev"][0])
    assert not check([*objects, *job], TARGETS["dev"][1])
    (workload,) = INGEST_JOB
    assert workload.labels["glossator.dev/role"] == "admin"
    assert ("glossator-ingest", "glossator-retrieval", 50052) in reachable(objects, INGEST_JOB)


# -- the checker fails on broken manifests -----------------------------------------------------


def _broken_deployment() -> dict:
    """A Glossator Deployment as someone might write it: locked down, but without probes."""
    container = {
        "name": "agent",
        "image": "ghcr.io/glossator/glossator:0.1.0",
        "args": ["serve", "agent"],
        "env": [{"name": "GLOSSATOR_AGENT_HOST", "value": "0.0.0.0"}],
        "ports": [{"name": "grpc", "containerPort": 50051}],
        "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "broken-agent", "namespace": "glossator"},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "broken-agent"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "broken-agent"}},
                "spec": {
                    "enableServiceLinks": False,
                    "automountServiceAccountToken": False,
                    "containers": [container],
                },
            },
        },
    }


def test_checker_names_the_object_and_rule_of_a_deployment_without_probes() -> None:
    violations = check([_broken_deployment()])
    probes = [v for v in violations if v.rule == "probes"]
    assert [str(v) for v in probes] == [
        f"Deployment/broken-agent [probes]: container agent has no {probe}"
        for probe in ("livenessProbe", "readinessProbe", "startupProbe")
    ]
    # the schema is fine: only the invariant check catches it
    assert not validate_schema([_broken_deployment()])


def test_schema_check_names_the_object_and_field() -> None:
    deployment = _broken_deployment()
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = {"grpc": {"port": "grpc"}}
    deployment["spec"]["replica"] = 2
    messages = [str(v) for v in validate_schema([deployment])]
    assert messages and all(m.startswith("Deployment/broken-agent [schema]:") for m in messages)


def _find(objects: list[dict], kind: str, name: str) -> dict:
    """The object of that kind and name; a name ending in "-" is the prefix of a hashed one."""
    (found,) = [
        o
        for o in objects
        if o["kind"] == kind
        and (o["metadata"]["name"] == name or (name.endswith("-") and o["metadata"]["name"].startswith(name)))
    ]
    return found


def _container(objects: list[dict], kind: str, name: str) -> dict:
    return _find(objects, kind, name)["spec"]["template"]["spec"]["containers"][0]


def _allow_all_to_redis(objects: list[dict]) -> None:
    objects.append(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"name": "oops", "namespace": "glossator"},
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "glossator-redis"}},
                "ingress": [{}],
            },
        }
    )


def _set(target: dict, **values) -> None:
    target.update(values)


Breakage = Callable[[list[dict]], None]
BREAKAGES: dict[str, tuple[Breakage, str, str]] = {
    "no readiness probe": (
        lambda o: _container(o, "Deployment", "glossator-agent").pop("readinessProbe"),
        "Deployment/glossator-agent",
        "probes",
    ),
    "grace period too short": (
        lambda o: _set(
            _find(o, "Deployment", "glossator-agent")["spec"]["template"]["spec"],
            terminationGracePeriodSeconds=33,
        ),
        "Deployment/glossator-agent",
        "termination-grace",
    ),
    "an answer longer than the grace": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-config-")["data"], GLOSSATOR_AGENT_RETRIEVAL_TIMEOUT_SECONDS="30"
        ),
        "Deployment/glossator-agent",
        "stream-grace",
    ),
    "a value the settings refuse": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-config-")["data"], GLOSSATOR_AGENT_SESSION_BACKEND="memcached"
        ),
        "Deployment/glossator-agent",
        "settings",
    ),
    "grace raised in the ConfigMap": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-config-")["data"], GLOSSATOR_RETRIEVAL_GRACE_SECONDS="40"
        ),
        "Deployment/glossator-retrieval",
        "termination-grace",
    ),
    "Redis open to everyone": (_allow_all_to_redis, "NetworkPolicy (to glossator-redis)", "network-policy"),
    "validation unreachable": (
        lambda o: o.remove(_find(o, "NetworkPolicy", "glossator-validation-ingress")),
        "NetworkPolicy (to glossator-validation)",
        "network-policy",
    ),
    "Qdrant without its policy nor the default deny": (
        lambda o: [
            o.remove(_find(o, "NetworkPolicy", "glossator-default-deny-ingress")),
            o.remove(_find(o, "NetworkPolicy", "glossator-qdrant-ingress")),
        ],
        "NetworkPolicy (to glossator-qdrant)",
        "network-policy",
    ),
    "a real secret": (
        lambda o: o.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "glossator-secrets"},
                "stringData": {"auth-token": "s3cr3t-t0ken-of-32-characters-xx"},
            }
        ),
        "Secret/glossator-secrets",
        "secret-placeholder",
    ),
    "a token in the ConfigMap": (
        lambda o: _set(_find(o, "ConfigMap", "glossator-config-")["data"], GLOSSATOR_AUTH_TOKEN="x" * 32),
        "ConfigMap/glossator-config-",
        "secret-in-configmap",
    ),
    "a Secret key the template lacks": (
        lambda o: _set(
            next(
                e["valueFrom"]["secretKeyRef"]
                for e in _container(o, "Deployment", "glossator-agent")["env"]
                if "secretKeyRef" in e.get("valueFrom", {})
            ),
            key="token",
        ),
        "Deployment/glossator-agent",
        "secret-refs",
    ),
    "image latest": (
        lambda o: _set(
            _container(o, "Deployment", "glossator-validation"), image="ghcr.io/glossator/glossator:latest"
        ),
        "Deployment/glossator-validation",
        "image-pinned",
    ),
    "image without tag": (
        lambda o: _set(_container(o, "StatefulSet", "glossator-redis"), image="redis"),
        "StatefulSet/glossator-redis",
        "image-pinned",
    ),
    "a Service port named http": (
        lambda o: _set(_find(o, "Service", "glossator-retrieval")["spec"]["ports"][0], name="http"),
        "Service/glossator-retrieval",
        "service-port-names",
    ),
    "HPA of a missing Deployment": (
        lambda o: _set(
            _find(o, "HorizontalPodAutoscaler", "glossator-agent")["spec"]["scaleTargetRef"],
            name="glossator-agnet",
        ),
        "HorizontalPodAutoscaler/glossator-agent",
        "hpa-target",
    ),
    "PDB selecting nothing": (
        lambda o: _set(
            _find(o, "PodDisruptionBudget", "glossator-validation")["spec"]["selector"],
            matchLabels={"app": "validation"},
        ),
        "PodDisruptionBudget/glossator-validation",
        "pdb-selector",
    ),
    "writable root filesystem": (
        lambda o: _set(
            _container(o, "StatefulSet", "glossator-qdrant")["securityContext"], readOnlyRootFilesystem=False
        ),
        "StatefulSet/glossator-qdrant",
        "read-only-root",
    ),
    "may run as root": (
        lambda o: [
            _container(o, "Deployment", "glossator-retrieval")["securityContext"].pop("runAsNonRoot"),
            _find(o, "Deployment", "glossator-retrieval")["spec"]["template"]["spec"]["securityContext"].pop(
                "runAsNonRoot"
            ),
        ],
        "Deployment/glossator-retrieval",
        "non-root",
    ),
    "privilege escalation": (
        lambda o: _set(
            _container(o, "Deployment", "glossator-agent")["securityContext"], allowPrivilegeEscalation=True
        ),
        "Deployment/glossator-agent",
        "no-privilege-escalation",
    ),
    "no memory limit": (
        lambda o: _container(o, "Deployment", "glossator-validation")["resources"]["limits"].pop("memory"),
        "Deployment/glossator-validation",
        "resources",
    ),
    "a misspelt setting": (
        lambda o: _container(o, "Deployment", "glossator-agent")["env"].append(
            {"name": "GLOSSATOR_AGENT_GRACE_SECOND", "value": "5"}
        ),
        "Deployment/glossator-agent",
        "env-names",
    ),
    "service links on": (
        lambda o: _find(o, "Deployment", "glossator-agent")["spec"]["template"]["spec"].pop(
            "enableServiceLinks"
        ),
        "Deployment/glossator-agent",
        "service-links",
    ),
    "probe on another port": (
        lambda o: _set(_container(o, "Deployment", "glossator-agent")["readinessProbe"]["grpc"], port=50052),
        "Deployment/glossator-agent",
        "probe-target",
    ),
    "retrieval Service not headless": (
        lambda o: _find(o, "Service", "glossator-retrieval-headless")["spec"].pop("clusterIP"),
        "Deployment/glossator-agent",
        "round-robin",
    ),
    "Redis evicting sessions": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-redis-config-")["data"],
            **{"redis.conf": "appendonly yes\nappendfsync everysec\nmaxmemory-policy allkeys-lru\n"},
        ),
        "StatefulSet/glossator-redis",
        "redis",
    ),
    "an object rendered without a namespace": (
        lambda o: _find(o, "ConfigMap", "glossator-redis-config-")["metadata"].pop("namespace"),
        "ConfigMap/glossator-redis-config-",
        "namespace",
    ),
    "a ConfigMap read by pods under a fixed name": (
        lambda o: [
            _set(_find(o, "ConfigMap", "glossator-redis-config-")["metadata"], name="glossator-redis-config"),
            _set(
                _find(o, "StatefulSet", "glossator-redis")["spec"]["template"]["spec"]["volumes"][0][
                    "configMap"
                ],
                name="glossator-redis-config",
            ),
        ],
        "StatefulSet/glossator-redis",
        "config-rolls",
    ),
    "no component label": (
        lambda o: _find(o, "Service", "glossator-agent")["metadata"]["labels"].pop(
            "app.kubernetes.io/component"
        ),
        "Service/glossator-agent",
        "labels",
    ),
    "a new label in an immutable selector": (
        lambda o: _set(
            _find(o, "Deployment", "glossator-retrieval")["spec"]["selector"]["matchLabels"],
            **{"app.kubernetes.io/component": "retrieval"},
        ),
        "Deployment/glossator-retrieval",
        "labels",
    ),
    "probes on the TLS service port": (
        lambda o: _set(
            _container(o, "Deployment", "glossator-validation")["livenessProbe"]["grpc"], port=50053
        ),
        "Deployment/glossator-validation",
        "probe-target",
    ),
    "TLS without a health port": (
        lambda o: _find(o, "ConfigMap", "glossator-config-")["data"].pop("GLOSSATOR_AGENT_HEALTH_PORT"),
        "Deployment/glossator-agent",
        "probe-target",
    ),
    "Redis open without a password": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-redis-config-")["data"],
            **{
                "redis.conf": "appendonly yes\nappendfsync everysec\nmaxmemory-policy noeviction\nprotected-mode no\n"
            },
        ),
        "StatefulSet/glossator-redis",
        "redis",
    ),
    "the agent without Redis' password": (
        lambda o: _container(o, "Deployment", "glossator-agent")["env"].remove(
            next(
                e
                for e in _container(o, "Deployment", "glossator-agent")["env"]
                if e["name"] == "GLOSSATOR_AGENT_REDIS_PASSWORD"
            )
        ),
        "Deployment/glossator-agent",
        "sessions",
    ),
    "an optional Redis password in prod": (
        lambda o: _set(
            next(
                e
                for e in _container(o, "StatefulSet", "glossator-redis")["env"]
                if e["name"] == "REDISCLI_AUTH"
            )["valueFrom"]["secretKeyRef"],
            optional=True,
        ),
        "StatefulSet/glossator-redis",
        "prod-secrets",
    ),
    "a TLS-only Redis dialled in plaintext": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-config-")["data"],
            GLOSSATOR_AGENT_REDIS_URL="redis://glossator-redis.glossator.svc.cluster.local:6379/0",
        ),
        "Deployment/glossator-agent",
        "sessions",
    ),
    "more copies than Qdrant nodes": (
        lambda o: _set(
            _find(o, "ConfigMap", "glossator-qdrant-config-")["data"],
            QDRANT__STORAGE__COLLECTION__REPLICATION_FACTOR="2",
        ),
        "StatefulSet/glossator-qdrant",
        "qdrant",
    ),
}


# Broken in prod, or with every component, rather than dev (dev has no autoscalers, no TLS).
IN_ALL_COMPONENTS = {"a TLS-only Redis dialled in plaintext"}
IN_PROD = {
    "HPA of a missing Deployment",
    "an optional Redis password in prod",
    "probes on the TLS service port",
    "TLS without a health port",
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_checker_names_the_object_and_rule_of_each_broken_invariant(breakage: str) -> None:
    target = "prod" if breakage in IN_PROD else "all-components" if breakage in IN_ALL_COMPONENTS else "dev"
    path, profile = TARGETS[target]
    objects = rendered(path)
    assert not check(objects, profile)
    breaks, obj, rule = BREAKAGES[breakage]
    breaks(objects)
    violations = check(objects, profile)
    assert any(v.obj.startswith(obj) and v.rule == rule for v in violations), (
        f"expected a violation of {rule} by {obj}, got:" + report(violations)
    )


def test_prod_checks_catch_an_optional_token_and_a_single_replica() -> None:
    path, profile = TARGETS["prod"]
    objects = rendered(path)
    _container(objects, "Deployment", "glossator-retrieval")["env"][0]["valueFrom"]["secretKeyRef"][
        "optional"
    ] = True
    _find(objects, "Deployment", "glossator-validation")["spec"]["replicas"] = 1
    found = {(v.obj, v.rule) for v in check(objects, profile)}
    assert ("Deployment/glossator-retrieval", "prod-secrets") in found
    assert ("Deployment/glossator-validation", "prod-replicas") in found
