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
async def suite_channels(
    targets: dict[str, str], embedded: Path | None
) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    """Channels to the named services: at their targets, or to servers started in-process over
    `embedded` (the agent brings the other two along, since it calls them)."""
    servers: list[GlossatorServer] = []
    if embedded is not None:
        from services.suite import build_service, build_suite, loopback_settings

        settings = loopback_settings(embedded)
        if "agent" in targets:
            servers = await build_suite(settings)
        else:
            servers = [await build_service(name, getattr(settings, name)) for name in targets]
        for server in servers:
            await server.start()
        targets = {s.name: f"127.0.0.1:{s.port}" for s in servers if s.name in targets}
    channels = {name: make_channel(target) for name, target in targets.items()}
    try:
        yield channels
    finally:
        for channel in channels.values():
            await channel.close()
        for server in servers:
            await server.stop(grace=1.0)


@asynccontextmanager
async def service_channel(
    service: str, target: str, embedded: Path | None
) -> AsyncIterator[grpc.aio.Channel]:
    """A channel to one service: at `target`, or to one started in-process over `embedded`."""
    async with suite_channels({service: target}, embedded) as channels:
        yield channels[service]


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
