"""The process's metrics, and the Grafana dashboard that charts them."""

from __future__ import annotations

import contextvars
import json
import re
from pathlib import Path

from prometheus_client import REGISTRY
from prometheus_client.metrics import MetricWrapperBase

from services.agent.cache import ResponseCache
from services.common import metrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "glossator.json"
DATASOURCE = {"type": "prometheus", "uid": "${DS_PROMETHEUS}"}
# The series a metric of each type exposes, after its name.
_SUFFIXES = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_count", "_sum")}


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _exposed_labels() -> dict[str, set[str]]:
    """Every series name the registry exposes for a glossator metric, with its label names."""
    labels = {
        m._name: set(m._labelnames)  # prometheus_client keeps label names only on the metric objects
        for m in vars(metrics).values()
        if isinstance(m, MetricWrapperBase)
    }
    exposed = {}
    for family in REGISTRY.collect():
        if family.name.startswith("glossator_"):
            for suffix in _SUFFIXES[family.type]:
                le = {"le"} if suffix == "_bucket" else set()
                exposed[family.name + suffix] = labels[family.name] | le
    return exposed


def _panels() -> list[dict]:
    return [panel for panel in json.loads(DASHBOARD.read_text())["panels"] if panel["type"] != "row"]


def test_the_dashboard_queries_only_metrics_and_labels_the_registry_has():
    exposed = _exposed_labels()
    used = set()
    for panel in _panels():
        for target in panel["targets"]:
            expr = target["expr"]
            names = set(re.findall(r"\bglossator_\w+", expr))
            assert names, f"{panel['title']}: {expr}"
            grouped = {g.strip() for by in re.findall(r"by \(([^)]*)\)", expr) for g in by.split(",")}
            matched = set(re.findall(r"(\w+)\s*[=!]~?\"", expr))
            for name in names:
                assert name in exposed, f"{panel['title']}: {name} is not a metric"
                assert grouped | matched <= exposed[name], f"{panel['title']}: labels of {name}"
            used |= names
    # And every metric is charted (a histogram by its buckets).
    assert {name for name in exposed if not name.endswith(("_count", "_sum"))} <= used


def test_the_dashboard_takes_its_prometheus_from_the_ds_prometheus_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["schemaVersion"] >= 39
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    for panel in _panels():
        assert panel["datasource"] == DATASOURCE
        assert all(target["datasource"] == DATASOURCE for target in panel["targets"])


def test_a_stage_is_labelled_with_the_service_of_the_call_it_runs_in():
    """Two calls of one process (`glossator up`): each stage counts under its own call's service."""

    def call(service: str) -> None:
        metrics.rpc_started(service, "Check")
        with metrics.observe_stage("validation"):
            pass
        metrics.rpc_finished(service, "Check", "OK", 0.01)

    def counts() -> tuple[float, float]:
        return tuple(
            _sample("glossator_stage_duration_seconds_count", service=s, stage="validation") for s in "AB"
        )

    before = counts()
    for service in ("A", "B", "B"):
        contextvars.copy_context().run(call, service)
    assert counts() == (before[0] + 1, before[1] + 2)


def test_a_call_is_in_flight_from_its_start_to_its_end():
    labels = {"service": "test.Flight", "method": "Run"}
    context = contextvars.copy_context()
    context.run(metrics.rpc_started, "test.Flight", "Run")
    assert _sample("glossator_rpcs_in_flight", **labels) == 1
    metrics.rpc_finished("test.Flight", "Run", "NOT_FOUND", 0.002)
    assert _sample("glossator_rpcs_in_flight", **labels) == 0
    assert _sample("glossator_rpc_requests_total", **labels, code="NOT_FOUND") == 1
    assert _sample("glossator_rpc_duration_seconds_count", **labels) == 1


def test_the_response_cache_counts_its_hits_and_misses():
    now = [0.0]
    cache: ResponseCache[str] = ResponseCache(ttl_seconds=10, clock=lambda: now[0])

    def lookups() -> tuple[float, float]:
        return tuple(
            _sample("glossator_cache_lookups_total", cache="response", result=r) for r in ("hit", "miss")
        )

    hits, misses = lookups()
    assert cache.get("k") is None
    cache.put("k", "answer")
    assert cache.get("k") == "answer"
    now[0] = 11.0
    assert cache.get("k") is None  # expired
    assert lookups() == (hits + 1, misses + 2)
