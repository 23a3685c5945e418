"""OpenTelemetry tracing, off unless the standard OTEL_* variables ask for it.

On, every server and client channel runs opentelemetry-instrumentation-grpc's interceptors, which
carry the W3C trace context (`traceparent` metadata) from service to service, and every pipeline
stage (embedding, search, generation, validation) is a span: one Ask is one trace through the
agent, retrieval and validation. Health and reflection calls are left out (probes would drown
the traces).

Variables: OTEL_TRACES_EXPORTER (`otlp`, `console`, `none` or any installed exporter's entry
point; OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone means `otlp`),
OTEL_EXPORTER_OTLP_PROTOCOL (`grpc`, the only one installed), OTEL_SERVICE_NAME (default
`glossator`: one tracer provider per process, so the embedded suite's three services share it and
spans tell them apart by rpc.service), OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
OTEL_PROPAGATORS, and OTEL_SDK_DISABLED=true, which wins over all of them. With none set, no
interceptor is added, stages open no span and the SDK is not even imported: tracing costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from contextlib import AbstractContextManager
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from services.common.infrastructure_rpcs import INFRASTRUCTURE_SERVICES

if TYPE_CHECKING:
    import grpc
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

DEFAULT_SERVICE_NAME = "glossator"
# At shutdown, spans still batched get this long to reach the collector.
_FLUSH_TIMEOUT_MS = 5_000
_OTLP_BY_PROTOCOL = {"grpc": "otlp_proto_grpc", "http/protobuf": "otlp_proto_http"}


class TracingConfigError(RuntimeError):
    """The OTEL_* variables name an exporter or protocol that is not installed."""


@dataclass
class _Tracing:
    """This process's tracing: read from the environment on first use, unless configured before."""

    configured: bool = False
    provider: TracerProvider | None = None
    tracer: Tracer | None = None


_state = _Tracing()


def configure_tracing(exporter: SpanExporter | None = None) -> TracerProvider | None:
    """Turns tracing on, exporting to `exporter` or else to the exporters the OTEL_* variables
    name; returns the provider, or None (tracing off) when there is none. Servers and channels
    built afterwards are traced."""
    shutdown_tracing()
    exporters = [exporter] if exporter is not None else [factory() for factory in trace_exporters_from_env()]
    _state.configured = True
    if not exporters:
        return None
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes[SERVICE_NAME]).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: DEFAULT_SERVICE_NAME}))
    provider = TracerProvider(resource=resource)
    for each in exporters:
        provider.add_span_processor(BatchSpanProcessor(each))
    _state.provider, _state.tracer = provider, provider.get_tracer("glossator")
    return provider


def shutdown_tracing() -> None:
    """Exports what is batched and turns tracing off (until configured again)."""
    if _state.provider is not None:
        _state.provider.shutdown()
    _state.provider = _state.tracer = None


async def flush_tracing() -> None:
    """Exports the spans still batched: a server process ends with os._exit, which would drop them."""
    if _state.provider is not None:
        await asyncio.to_thread(_state.provider.force_flush, _FLUSH_TIMEOUT_MS)


def _provider() -> TracerProvider | None:
    if not _state.configured:
        configure_tracing()
    return _state.provider


def server_interceptors() -> list[grpc.aio.ServerInterceptor]:
    """The tracing server interceptor, to run first (its span then covers the whole call), or none."""
    provider = _provider()
    if provider is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor(tracer_provider=provider, filter_=_traced_calls())]


def client_interceptors() -> list[grpc.aio.ClientInterceptor]:
    """The tracing client interceptors (one per kind of call), which send `traceparent`, or none."""
    provider = _provider()
    if provider is None:
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return aio_client_interceptors(tracer_provider=provider, filter_=_traced_calls())


def stage_span(stage: str) -> AbstractContextManager[object]:
    """A span named after the pipeline stage, child of the current call's span; nothing when off."""
    _provider()  # reads the environment on first use
    if _state.tracer is None:
        return contextlib.nullcontext()
    return _state.tracer.start_as_current_span(stage, attributes={"glossator.stage": stage})


def _traced_calls():
    """Every call but health and reflection."""
    from opentelemetry.instrumentation.grpc.filters import any_of, negate, service_name

    return negate(any_of(*(service_name(name) for name in sorted(INFRASTRUCTURE_SERVICES))))


def trace_exporters_from_env() -> list[type]:
    """The exporter classes the OTEL_* variables name: none unless they name one."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    names = os.environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not names:
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        names = "otlp" if endpoint else "none"
    chosen = [name.strip() for name in names.split(",") if name.strip() and name.strip() != "none"]
    return [_exporter_class(name) for name in chosen]


def _exporter_class(name: str) -> type:
    """The class the `opentelemetry_traces_exporter` entry point `name` names; `otlp` is the one of
    the configured OTLP protocol (grpc by default)."""
    if name == "otlp":
        protocol = (
            os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "grpc"
        ).strip()
        if protocol not in _OTLP_BY_PROTOCOL:
            raise TracingConfigError(f"unknown OTLP protocol {protocol!r}: use grpc or http/protobuf")
        name = _OTLP_BY_PROTOCOL[protocol]
    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise TracingConfigError(
            f"no trace exporter {name!r} is installed (see OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_PROTOCOL)"
        )
    return next(iter(found)).load()
