"""Builds the agent server: the answerer, sessions, and clients of retrieval and validation."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from datetime import timedelta

from agents.models.interface import Model
from grpc_health.v1 import health_pb2

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2_grpc, validation_pb2_grpc
from services.agent.agent import Answerer, build_agent
from services.agent.config import AgentSettings
from services.agent.conversation import Conversation
from services.agent.models.probe import LLM_HEALTH_SERVICE, probe_models
from services.agent.servicer import AgentServicer
from services.agent.sessions import RedisSessionStore, SessionConfig, SessionStore, SqliteSessionStore
from services.common.clients import ChannelSecurity, make_channel
from services.common.logging import get_logger
from services.common.server import GlossatorServer, create_server

SERVICE_NAME = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
# Every user's questions, answers and comments: for the book's authors only.
ADMIN_METHODS = frozenset({f"/{SERVICE_NAME}/GetCoverageReport"})
log = get_logger("glossator.agent")
# How often a missing LLM model is looked for again.
_LLM_PROBE_PERIOD_S = 30.0


async def open_sessions(settings: AgentSettings) -> SessionStore:
    config = SessionConfig(
        inactive_after=timedelta(minutes=settings.session_inactive_minutes),
        expire_after=timedelta(hours=settings.session_expire_hours),
        max_turns=settings.session_max_turns,
        max_open_per_user=settings.session_max_open_per_user,
        max_stored_bytes_per_user=int(settings.session_storage_quota_mb * 1024 * 1024),
        questions_per_minute=settings.questions_per_minute_per_session,
    )
    if settings.session_backend == "redis":
        password = settings.redis_password.get_secret_value() if settings.redis_password else None
        return await RedisSessionStore.open(settings.redis_url, config, password=password)
    return await SqliteSessionStore.open(settings.data_dir, config)


async def _sweep_forever(sessions: SessionStore, period_s: float) -> None:
    """Expires idle sessions periodically; a failed sweep is logged and retried next period."""
    while True:
        await asyncio.sleep(period_s)
        try:
            result = await sessions.sweep()
            if result.expired or result.purged:
                log.info("sessions_swept", expired=result.expired, purged=result.purged)
        except Exception:
            log.warning("session_sweep_failed", exc_info=True)


async def _watch_llm(server: GlossatorServer, settings: AgentSettings) -> None:
    """Reports whether the LLM endpoint serves the model (log and health), asking until it does."""
    last = ""
    while True:
        result = await probe_models(
            settings.llm_base_url, settings.llm_api_key, settings.llm_model, settings.llm_probe_seconds
        )
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if result.ok
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        await server.health.set(LLM_HEALTH_SERVICE, status)
        if result.detail != last:
            (log.info if result.ok else log.warning)(
                "llm_endpoint_probed", ok=result.ok, detail=result.detail
            )
            last = result.detail
        if result.ok:
            return
        await asyncio.sleep(_LLM_PROBE_PERIOD_S)


async def build_server(
    settings: AgentSettings | None = None, model: Model | None = None
) -> tuple[GlossatorServer, int]:
    """`model` replaces the configured one (tests script the LLM edge with agents.testing)."""
    settings = settings or AgentSettings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    security = ChannelSecurity.for_service(settings.auth, settings.tls)
    retrieval_channel = make_channel(settings.retrieval_target, security=security)
    validation_channel = make_channel(settings.validation_target, security=security)
    retrieval = retrieval_pb2_grpc.RetrievalServiceStub(retrieval_channel)
    validation = validation_pb2_grpc.ValidationServiceStub(validation_channel)
    sessions = await open_sessions(settings)
    answerer = await asyncio.to_thread(Answerer.from_settings, settings, retrieval)
    if model is not None:
        answerer = replace(answerer, agent=build_agent(model), model_name="scripted")
    conversation = Conversation(answerer, sessions, retrieval, validation, settings)
    servicer = AgentServicer(conversation, sessions, settings)

    def register(server) -> list[str]:
        agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    server = create_server("agent", settings, register, ADMIN_METHODS)
    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(_sweep_forever(sessions, settings.session_sweep_seconds))]
    if settings.llm_base_url and model is None:
        # Known from the start, so a health check before the first probe answers UNKNOWN, not NOT_FOUND.
        await server.health.set(LLM_HEALTH_SERVICE, health_pb2.HealthCheckResponse.UNKNOWN)
        tasks.append(loop.create_task(_watch_llm(server, settings)))

    async def close() -> None:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await sessions.close()
        await retrieval_channel.close()
        await validation_channel.close()

    server.cleanups.append(close)
    return server, server.port
