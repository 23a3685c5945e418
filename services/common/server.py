"""One way to build and run a grpc.aio server.

`create_server` gives every service the same runtime: the observability interceptor, health
(grpc.health.v1) and reflection, message size and concurrency limits. `run_until_signal` serves
until SIGTERM/SIGINT, then drains: health NOT_SERVING first (so load balancers stop sending),
then `stop(grace)` lets running RPCs finish, then the services' resources are closed.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common.interceptors import ObservabilityInterceptor
from services.common.settings import ServiceSettings

log = structlog.get_logger("glossator.server")

Cleanup = Callable[[], Awaitable[None]]


@dataclass
class GlossatorServer:
    """A started-or-startable grpc.aio server with its health service and cleanups."""

    name: str
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    service_names: list[str]
    port: int
    grace_seconds: float
    cleanups: list[Cleanup] = field(default_factory=list)

    async def start(self) -> None:
        await self.server.start()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        log.info("server_started", service=self.name, port=self.port)

    async def stop(self, grace: float | None = None) -> None:
        """Drains: NOT_SERVING, running RPCs get `grace` seconds, then resources close."""
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(self.grace_seconds if grace is None else grace)
        for cleanup in reversed(self.cleanups):
            await cleanup()
        log.info("server_stopped", service=self.name)

    async def _set_health(self, status: int) -> None:
        for name in ["", *self.service_names]:
            await self.health.set(name, status)


def create_server(
    name: str,
    settings: ServiceSettings,
    register: Callable[[grpc.aio.Server], Sequence[str]],
) -> GlossatorServer:
    """Builds the server; `register` adds the servicers and returns their full service names."""
    options = [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ]
    server = grpc.aio.server(
        interceptors=[ObservabilityInterceptor()],
        options=options,
        maximum_concurrent_rpcs=settings.max_concurrent_rpcs,
    )
    service_names = list(register(server))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
        server,
    )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise OSError(f"cannot bind {settings.host}:{settings.port}")
    return GlossatorServer(name, server, health_servicer, service_names, port, settings.grace_seconds)


async def run_until_signal(
    servers: Sequence[GlossatorServer], on_started: Callable[[], None] | None = None
) -> None:
    """Starts the servers, waits for SIGTERM or SIGINT, then stops them all gracefully."""
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop_requested.set)
    try:
        for server in servers:
            await server.start()
        if on_started:
            on_started()
        await stop_requested.wait()
        log.info("shutdown_requested")
        await asyncio.gather(*(server.stop() for server in servers))
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
