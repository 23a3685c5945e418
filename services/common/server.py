"""One way to build and run a grpc.aio server.

`create_server` gives every service the same runtime: the observability interceptor (and the
tracing one, when OTEL_* variables turn tracing on), health (grpc.health.v1) and reflection,
message size and concurrency limits, a port of its own (no
SO_REUSEPORT: a second server on a port in use fails instead of silently taking half its calls),
and a maximum connection age, so that clients' connections rebalance over new replicas. Health
says SERVING only once the service's warm-ups ran (models loaded, a first call made): a
readiness probe then means what it says. `run_until_signal` serves
until SIGTERM/SIGINT, then drains: health NOT_SERVING for `drain_seconds` while calls are still
served (so load balancers stop sending), then `stop(grace)` lets running RPCs finish and cancels
the rest, then the services' resources are closed, all within grace + `exit_margin_seconds`.
With `health_port` set, a second, plaintext server answers grpc.health.v1 and nothing else, from
the same health servicer (same statuses, NOT_SERVING on SIGTERM alike): the kubelet's own gRPC
probes cannot speak TLS, and this keeps them when the service port serves it.
`run_server_process` then ends the process at once: work that cancelled calls left in worker
threads (a forward pass of the model) would otherwise keep it alive, and Kubernetes kills at 30 s.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common.auth import Authenticator, AuthSettings
from services.common.interceptors import ObservabilityInterceptor
from services.common.settings import ServiceSettings
from services.common.tls import server_credentials
from services.common.tracing import flush_tracing, server_interceptors

log = structlog.get_logger("glossator.server")

Cleanup = Callable[[], Awaitable[None]]
Warmup = Callable[[], Awaitable[None]]
# The watchdog fires this long after the orderly shutdown's own deadline, so that one which
# used all of its time still ends the process itself (exit code 0).
_WATCHDOG_SLACK_SECONDS = 0.5


@dataclass
class GlossatorServer:
    """A started-or-startable grpc.aio server with its health service and cleanups."""

    name: str
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    service_names: list[str]
    port: int
    grace_seconds: float
    drain_seconds: float
    exit_margin_seconds: float
    cleanups: list[Cleanup] = field(default_factory=list)
    # Run after the port opens and before health says SERVING: what the first call would wait for.
    warmups: list[Warmup] = field(default_factory=list)
    # The plaintext health-only server and its port, when settings.health_port is set.
    health_server: grpc.aio.Server | None = None
    health_port: int | None = None

    async def start(self) -> None:
        """Opens the port (health NOT_SERVING), runs the warm-ups, then says SERVING."""
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        log.info("server_started", service=self.name, port=self.port, health_port=self.health_port)
        started = time.perf_counter()
        for warmup in self.warmups:
            await warmup()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        log.info("server_ready", service=self.name, warmup_ms=round((time.perf_counter() - started) * 1000))

    async def drain(self) -> None:
        """NOT_SERVING while calls are still served for `drain_seconds`, so that load balancers
        (Kubernetes endpoints take a few seconds) stop sending before the port closes."""
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        if self.drain_seconds:
            log.info("server_draining", service=self.name, seconds=self.drain_seconds)
            await asyncio.sleep(self.drain_seconds)

    async def stop(self, grace: float | None = None) -> None:
        """NOT_SERVING, running RPCs get `grace` seconds and are cancelled after it, then the
        resources close; past grace + exit margin whatever has not finished is left behind."""
        grace = self.grace_seconds if grace is None else grace
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace + self.exit_margin_seconds
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self._within(deadline, self.server.stop(grace), "grpc_server")
        if self.health_server is not None:  # probes see NOT_SERVING until the service port closes
            await self._within(deadline, self.health_server.stop(0), "health_server")
        for cleanup in reversed(self.cleanups):
            await self._within(deadline, cleanup(), cleanup.__qualname__)
        log.info("server_stopped", service=self.name)

    async def _within(self, deadline: float, step: Awaitable[None], what: str) -> None:
        """Runs one shutdown step until the deadline; a step that fails or overruns is logged and
        left behind, so that the next one still runs."""
        try:
            await asyncio.wait_for(step, max(0.0, deadline - asyncio.get_running_loop().time()))
        except TimeoutError:
            log.warning("shutdown_step_timed_out", service=self.name, step=what)
        except Exception:
            log.exception("shutdown_step_failed", service=self.name, step=what)

    async def _set_health(self, status: int) -> None:
        for name in ["", *self.service_names]:
            await self.health.set(name, status)


def create_server(
    name: str,
    settings: ServiceSettings,
    register: Callable[[grpc.aio.Server], Sequence[str]],
    admin_methods: frozenset[str] = frozenset(),
) -> GlossatorServer:
    """Builds the server; `register` adds the servicers and returns their full service names.

    With auth on, every call but health and reflection needs a token, and `admin_methods` (full
    method names such as /glossator.v1.RetrievalService/Ingest) need the admin role.
    """
    options = [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_concurrent_streams", settings.max_concurrent_streams_per_connection),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        # gRPC sets SO_REUSEPORT by default on Linux: two servers on one port share its calls.
        ("grpc.so_reuseport", 0),
    ]
    if settings.max_connection_age_seconds:
        # Clients reconnect (and re-resolve) after this age, spreading over replicas added since;
        # calls running on the old connection may go on for the age grace.
        options += [
            ("grpc.max_connection_age_ms", int(settings.max_connection_age_seconds * 1000)),
            ("grpc.max_connection_age_grace_ms", int(settings.max_connection_age_grace_seconds * 1000)),
        ]
    # The limit lives in the interceptor, not in gRPC's maximum_concurrent_rpcs: that one counts
    # health checks and reflection too, so a server full of idle streams failed its probes.
    authenticator = Authenticator(settings.auth) if settings.auth.enabled else None
    interceptor = ObservabilityInterceptor(
        settings.max_concurrent_rpcs, authenticator, admin_methods, settings.stream_write_timeout_seconds
    )
    # Tracing first: its span covers the whole call, and the observability interceptor, which keeps
    # one wrapped handler per method, sees the same handler every time.
    server = grpc.aio.server(interceptors=[*server_interceptors(), interceptor], options=options)
    service_names = list(register(server))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
        server,
    )
    credentials = server_credentials(settings.tls) if settings.tls.serves_tls else None
    port = _bind(server, settings.host, settings.port, credentials, f"the {name} service")
    health_server, health_port = None, None
    if settings.health_port is not None:
        health_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, health_server)
        health_port = _bind(
            health_server,
            settings.host,
            settings.health_port,
            None,
            f"the {name} service's health checks",
        )
    _warn_if_exposed(name, settings)
    _warn_if_any_audience_passes(name, settings.auth)
    return GlossatorServer(
        name,
        server,
        health_servicer,
        service_names,
        port,
        settings.grace_seconds,
        settings.drain_seconds,
        settings.exit_margin_seconds,
        cleanups=[flush_tracing],  # the last to run: spans of the calls that just ended
        health_server=health_server,
        health_port=health_port,
    )


class PortUnavailable(OSError):
    """The server's address cannot be bound (in use, or not local)."""


def _bind(
    server: grpc.aio.Server, host: str, port: int, credentials: grpc.ServerCredentials | None, what: str
) -> int:
    """Adds the port (TLS with `credentials`, else plaintext); PortUnavailable when it cannot,
    checked before gRPC tries (its C core would log its own error line first)."""
    address = f"{host}:{port}"
    unavailable = PortUnavailable(
        f"cannot listen on {address} for {what}: another server is using the port, "
        "or the address is not one of this machine's"
    )
    if not _bindable(host, port):
        raise unavailable
    try:
        if credentials is not None:
            port = server.add_secure_port(address, credentials)
        else:
            port = server.add_insecure_port(address)
    except RuntimeError:  # gRPC's "Failed to bind", whatever the cause
        port = 0
    if port == 0:
        raise unavailable
    return port


def _bindable(host: str, port: int) -> bool:
    """Whether a listener could bind host:port now, as gRPC would: at least one of the addresses
    the host resolves to (gRPC listens on those it can). Port 0 always can; a host that does not
    resolve is left to gRPC to report."""
    if port == 0:
        return True
    try:
        addresses = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError:
        return True
    for family, kind, protocol, _name, address in addresses:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC: TIME_WAIT is no use
            try:
                probe.bind(address)
            except OSError:
                continue
        return True
    return False


def _warn_if_exposed(name: str, settings: ServiceSettings) -> None:
    """A loud warning when a server any host can reach lets anyone in, or takes tokens in plaintext."""
    if _is_loopback(settings.host):
        return
    if not settings.auth.enabled:
        event = "auth_off_on_network"
        advice = (
            "anyone who reaches this port can ingest, delete and read every session: set "
            "GLOSSATOR_AUTH_TOKEN or GLOSSATOR_AUTH_JWKS_FILE, or bind 127.0.0.1"
        )
    elif not settings.tls.serves_tls:
        event = "tokens_in_plaintext"
        advice = (
            "bearer tokens cross the network unencrypted: set GLOSSATOR_TLS_CERT_FILE and "
            "GLOSSATOR_TLS_KEY_FILE, unless a service mesh encrypts the traffic"
        )
    else:
        return
    log.warning(event, service=name, host=settings.host, advice=advice)


def _warn_if_any_audience_passes(name: str, auth: AuthSettings) -> None:
    """JWTs without an audience check: a token the identity provider issued for any other
    application of the same issuer is accepted here too."""
    if auth.jwks_file is not None and not auth.audience:
        log.warning(
            "jwt_audience_unchecked",
            service=name,
            advice="JWTs issued for any application of this issuer are accepted: set "
            "GLOSSATOR_AUTH_AUDIENCE to the audience your identity provider puts in Glossator's tokens",
        )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


async def run_until_signal(
    servers: Sequence[GlossatorServer], on_started: Callable[[], None] | None = None
) -> None:
    """Starts the servers, waits for SIGTERM or SIGINT, then drains and stops them all.

    From the signal on, a watchdog ends the process if the shutdown overruns its bound: the
    longest drain, then the longest grace + exit margin.
    """
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
        drain = max(server.drain_seconds for server in servers)
        stop = max(server.grace_seconds + server.exit_margin_seconds for server in servers)
        _start_exit_watchdog(drain + stop + _WATCHDOG_SLACK_SECONDS)
        await asyncio.gather(*(server.drain() for server in servers))
        await asyncio.gather(*(server.stop() for server in servers))
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


def run_server_process(main: Coroutine[Any, Any, None]) -> NoReturn:
    """Runs `main` (servers until a signal, then their shutdown) and ends the process with 0.

    It does not wait for worker threads: after the servers stopped, all they can still be doing
    is work of cancelled calls, which asyncio.run and the interpreter would otherwise wait for
    (retrieval took 34.8 s to exit with an embedding running). An exception in `main` (a port
    already in use) propagates as usual.
    """
    runner = asyncio.Runner()
    try:
        runner.run(main)
    except BaseException:
        runner.close()
        raise
    _exit_now(0)


def _start_exit_watchdog(seconds: float) -> None:
    """Ends the process with 1 if it still runs `seconds` from now, whatever holds it up."""

    def expire() -> None:
        busy = sorted(t.name for t in threading.enumerate() if t is not threading.current_thread())
        log.error("shutdown_overran", seconds=seconds, threads=busy)
        _exit_now(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def _exit_now(code: int) -> NoReturn:
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
