"""Prometheus metrics of a process: per RPC, per pipeline stage, per ingest and per cache.

Names follow Prometheus conventions (base units, `_seconds`, `_total` on counters). One process
may host all three services (`glossator up`), so a stage is labelled with the service of the
call it runs in, which the interceptor records per call: the agent's round trip to validation
is (AgentService, validation), the validation server's own check (ValidationService, validation).
deploy/grafana/glossator.json charts every metric here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from services.common.tracing import stage_span

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
RPCS_IN_FLIGHT = Gauge(
    "glossator_rpcs_in_flight", "RPCs being handled now, by method.", ["service", "method"]
)
STAGE_LATENCY = Histogram(
    "glossator_stage_duration_seconds",
    "Time of one pipeline stage (embedding, search, generation, validation, ...), by the service "
    "whose call ran it.",
    ["service", "stage"],
    buckets=_LATENCY_BUCKETS,
)
ANSWERS_IN_FLIGHT = Gauge(
    "glossator_answers_in_flight", "Answers the agent is running now (admitted: generating or validating)."
)
LLM_CALLS_IN_FLIGHT = Gauge(
    "glossator_llm_calls_in_flight",
    "Calls the agent has open to its LLM endpoint (at most GLOSSATOR_AGENT_LLM_MAX_CONCURRENT_CALLS; "
    "the others wait their turn).",
)
ANSWERS_REPLACED = Counter(
    "glossator_answers_replaced_total",
    "Model answers the agent replaced by the extractive answer or a refusal, or by their own "
    "supported sentences (trimmed), by reason (empty, not_grounded, off_topic, wrong_refusal, echo, "
    "not_an_answer, incomplete, trimmed).",
    ["reason"],
)
# By collection: a server holds at most max_collections of them.
INGEST_DOCUMENTS = Counter(
    "glossator_ingest_documents_total",
    "Documents ingests went through, by collection and outcome (indexed, unchanged, failed, deleted).",
    ["collection", "outcome"],
)
INGEST_CHUNKS_WRITTEN = Counter(
    "glossator_ingest_chunks_written_total", "Chunks ingests wrote, by collection.", ["collection"]
)
INGEST_CHUNKS_DELETED = Counter(
    "glossator_ingest_chunks_deleted_total",
    "Chunks ingests deleted (stale after a change, or of pruned documents), by collection.",
    ["collection"],
)
INGEST_TEXTS_EMBEDDED = Counter(
    "glossator_ingest_texts_embedded_total",
    "Texts ingests ran through the embedding model, by collection and kind (passage, sentence; a "
    "sentence repeated within a group of documents counts once).",
    ["collection", "kind"],
)
CACHE_LOOKUPS = Counter(
    "glossator_cache_lookups_total",
    "Cache lookups, by cache (query_embedding, response) and result (hit, miss).",
    ["cache", "result"],
)
FEEDBACK = Counter(
    "glossator_feedback_total",
    "Ratings readers gave answers (SubmitFeedback), by collection, rating (up, down) and whether it "
    "replaced an earlier rating of the same answer.",
    ["collection", "rating", "replaced"],
)

# The gRPC service of the call this context serves; asyncio tasks and to_thread inherit it.
_CALL_SERVICE: ContextVar[str] = ContextVar("glossator_call_service", default="")


def rpc_started(service: str, method: str) -> None:
    """Counts the call in flight; the stages it runs from now on are labelled with its service."""
    _CALL_SERVICE.set(service)
    RPCS_IN_FLIGHT.labels(service, method).inc()


def rpc_finished(service: str, method: str, code: str, seconds: float) -> None:
    RPCS_IN_FLIGHT.labels(service, method).dec()
    RPC_REQUESTS.labels(service, method, code).inc()
    RPC_LATENCY.labels(service, method).observe(seconds)


@contextmanager
def observe_stage(stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        with stage_span(stage):  # a span of the current trace, when tracing is on
            yield
    finally:
        STAGE_LATENCY.labels(_CALL_SERVICE.get(), stage).observe(time.perf_counter() - start)


def count_ingested(collection: str, outcome: str, chunks_written: int, chunks_deleted: int) -> None:
    INGEST_DOCUMENTS.labels(collection, outcome).inc()
    INGEST_CHUNKS_WRITTEN.labels(collection).inc(chunks_written)
    INGEST_CHUNKS_DELETED.labels(collection).inc(chunks_deleted)


def count_embedded(collection: str, passages: int, sentences: int) -> None:
    INGEST_TEXTS_EMBEDDED.labels(collection, "passage").inc(passages)
    INGEST_TEXTS_EMBEDDED.labels(collection, "sentence").inc(sentences)


def count_cache_lookup(cache: str, *, hit: bool) -> None:
    CACHE_LOOKUPS.labels(cache, "hit" if hit else "miss").inc()


def count_feedback(collection: str, rating: str, *, replaced: bool) -> None:
    FEEDBACK.labels(collection, rating, "true" if replaced else "false").inc()


def start_metrics_endpoint(host: str, port: int) -> int:
    """Serves /metrics in a daemon thread; returns the bound port (useful when port is 0)."""
    server, _thread = start_http_server(port, addr=host)
    return int(server.server_port)
