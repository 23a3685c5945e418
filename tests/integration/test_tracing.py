"""Tracing and request ids through the real suite.

One AskStream is one trace: the caller's span, the agent's call, its stages and its Search and
Validate calls, and the retrieval and validation servers' calls and stages beneath them. The
caller's x-request-id is what retrieval and validation log the agent's calls under.
"""

from __future__ import annotations

import asyncio

import pytest
import structlog
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from structlog.testing import capture_logs

from glossator.v1 import agent_pb2
from services.common.tracing import (
    TracingConfigError,
    configure_tracing,
    flush_tracing,
    shutdown_tracing,
    trace_exporters_from_env,
)
from tests.conftest import running_suite, suite_settings
from tests.integration.test_auth import QUESTION, _docs, _ingest

_OTEL_VARIABLES = (
    "OTEL_SDK_DISABLED",
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
)


@pytest.fixture
def otel_env(monkeypatch):
    """No OTEL_* variable of the caller's shell; the test sets its own."""
    for name in _OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("variables", "exporters"),
    [
        ({}, []),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, [OTLPSpanExporter]),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317"}, [OTLPSpanExporter]),
        ({"OTEL_TRACES_EXPORTER": "console,otlp"}, [ConsoleSpanExporter, OTLPSpanExporter]),
        ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}, []),
        ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, []),
    ],
)
def test_tracing_is_off_unless_an_otel_variable_names_an_exporter(otel_env, variables, exporters):
    for name, value in variables.items():
        otel_env.setenv(name, value)
    assert trace_exporters_from_env() == exporters


@pytest.mark.parametrize(
    "variables",
    [
        {"OTEL_TRACES_EXPORTER": "nonesuch"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "smtp"},
    ],
)
def test_an_exporter_that_is_not_installed_is_a_clear_error(otel_env, variables):
    for name, value in variables.items():
        otel_env.setenv(name, value)
    with pytest.raises(TracingConfigError):
        trace_exporters_from_env()


@pytest.fixture(scope="module")
def traced():
    """The suite built with tracing on, exporting in memory, with two pages ingested."""
    exporter = InMemorySpanExporter()
    configure_tracing(exporter=exporter)
    try:
        yield exporter
    finally:
        shutdown_tracing()


@pytest.fixture(scope="module")
async def traced_suite(traced, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("traced-suite")
    _docs(data_dir / "pages")
    async with running_suite(suite_settings(data_dir)) as suite:
        await _ingest(suite)
        yield suite


def _label(span: ReadableSpan) -> str:
    """`AgentService/Ask (server)` for a call's span, the stage's name for a stage's."""
    if "rpc.service" not in span.attributes:
        return span.name
    return f"{span.name.rpartition('.')[2]} ({span.kind.name.lower()})"


def _paths(spans: tuple[ReadableSpan, ...]) -> set[str]:
    """Each span's ancestry, root first: `a > b > c`."""
    by_id = {span.context.span_id: span for span in spans}
    paths = set()
    for span in spans:
        labels = [_label(span)]
        while span.parent is not None:
            span = by_id[span.parent.span_id]  # a parent missing from the trace fails the test here
            labels.append(_label(span))
        paths.add(" > ".join(reversed(labels)))
    return paths


async def test_one_ask_is_one_trace_through_the_three_services(traced, traced_suite):
    await flush_tracing()
    traced.clear()  # the ingest's spans
    call = traced_suite.agent.AskStream(agent_pb2.AskRequest(query=QUESTION), timeout=60)
    events = [event async for event in call]
    assert events[-1].completed.response.sources
    await flush_tracing()
    spans = traced.get_finished_spans()

    assert len({span.context.trace_id for span in spans}) == 1
    paths = _paths(spans)
    caller = "AgentService/AskStream (client)"
    ask = f"{caller} > AgentService/AskStream (server)"
    search = "RetrievalService/Search (client) > RetrievalService/Search (server)"
    validate = "ValidationService/Validate (client) > ValidationService/Validate (server)"
    assert f"{ask} > {search} > search" in paths  # a question outside a session searches once, first
    assert not any(search in path for path in paths if path.startswith(f"{ask} > generation"))
    assert f"{ask} > validation > {validate} > validation" in paths
    assert any(path.endswith(f"{search} > embedding") for path in paths)  # the first Search embeds
    assert all(path == caller or path.startswith(ask) for path in paths)


async def test_the_callers_request_id_is_the_one_retrieval_and_validation_log(traced_suite):
    question = agent_pb2.AskRequest(query="What does an IMU report?")  # not answered from the cache
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        await traced_suite.agent.Ask(question, metadata=[("x-request-id", "ask-7f3a")], timeout=60)
        await asyncio.sleep(0.1)  # the servers write rpc_done once the reply has gone
    done = [(line["rpc"], line["request_id"]) for line in logs if line["event"] == "rpc_done"]
    assert {rpc for rpc, _ in done} == {
        "glossator.v1.AgentService/Ask",
        "glossator.v1.RetrievalService/Search",
        "glossator.v1.ValidationService/Validate",
    }
    assert {request_id for _, request_id in done} == {"ask-7f3a"}
