"""How CLI commands reach the services: a running suite by address, or one started in-process."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc

from services.common.clients import make_channel
from services.common.server import GlossatorServer

DEFAULT_TARGETS = {
    "agent": "127.0.0.1:50051",
    "retrieval": "127.0.0.1:50052",
    "validation": "127.0.0.1:50053",
}


def default_target(service: str) -> str:
    return os.environ.get(f"GLOSSATOR_{service.upper()}_TARGET", DEFAULT_TARGETS[service])


def add_target_option(parser, service: str) -> None:
    parser.add_argument(
        f"--{service}",
        dest="target",
        default=default_target(service),
        metavar="HOST:PORT",
        help=f"address of the {service} service (default {default_target(service)}, "
        f"env GLOSSATOR_{service.upper()}_TARGET)",
    )
    parser.add_argument(
        "--embedded",
        metavar="DATA_DIR",
        type=Path,
        help="start the suite in this process with its data under DATA_DIR instead of connecting",
    )


@asynccontextmanager
async def service_channel(
    service: str, target: str, embedded: Path | None
) -> AsyncIterator[grpc.aio.Channel]:
    """A channel to the service: at `target`, or to a suite started in-process over `embedded`."""
    servers: list[GlossatorServer] = []
    if embedded is not None:
        from services.suite import build_service, build_suite, loopback_settings

        settings = loopback_settings(embedded)
        if service == "agent":  # the agent needs the other two
            servers = await build_suite(settings)
        else:
            servers = [await build_service(service, getattr(settings, service))]
        for server in servers:
            await server.start()
        target = f"127.0.0.1:{next(s.port for s in servers if s.name == service)}"
    channel = make_channel(target)
    try:
        yield channel
    finally:
        await channel.close()
        for server in servers:
            await server.stop(grace=1.0)


def explain_rpc_error(error: grpc.aio.AioRpcError, target: str) -> int:
    """Prints a readable message for a failed call and returns the exit code."""
    if error.code() == grpc.StatusCode.UNAVAILABLE:
        print(
            f"error: cannot reach {target} ({error.details()}). Start the suite with `glossator up`, "
            "or pass --embedded DATA_DIR.",
            file=sys.stderr,
        )
    else:
        print(f"error: {error.code().name}: {error.details()}", file=sys.stderr)
    return 2
