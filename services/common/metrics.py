"""Prometheus metrics of a process: per RPC and per pipeline stage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Histogram, start_http_server

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

RPC_REQUESTS = Counter(
    "glossator_rpc_requests_total", "RPCs handled, by method and status code.", ["service", "method", "code"]
)
RPC_LATENCY = Histogram(
    "glossator_rpc_duration_seconds",
    "RPC latency, by method.",
    ["service", "method"],
    buckets=_LATENCY_BUCKETS,
)
STAGE_LATENCY = Histogram(
    "glossator_stage_duration_seconds",
    "Time of one pipeline stage (embedding, search, generation, validation, ...).",
    ["stage"],
    buckets=_LATENCY_BUCKETS,
)


@contextmanager
def observe_stage(stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        STAGE_LATENCY.labels(stage).observe(time.perf_counter() - start)


def start_metrics_endpoint(host: str, port: int) -> int:
    """Serves /metrics in a daemon thread; returns the bound port (useful when port is 0)."""
    server, _thread = start_http_server(port, addr=host)
    return int(server.server_port)
