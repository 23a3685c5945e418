"""A new channel reaches a server restarted on an address an older channel saw go down."""

from __future__ import annotations

import asyncio
import socket

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from services.common.clients import make_channel


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _health_server(port: int) -> grpc.aio.Server:
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


async def _check(channel: grpc.aio.Channel) -> None:
    await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)


async def test_a_new_channel_does_not_inherit_the_backoff_of_an_old_one_to_the_same_address():
    port = _free_port()
    target = f"127.0.0.1:{port}"
    first = await _health_server(port)
    async with make_channel(target) as old:
        await _check(old)
        await first.stop(grace=0)
        for _ in range(4):  # each refused reconnection backs the old channel off longer (1 s, 1.6 s, ...)
            with pytest.raises(grpc.aio.AioRpcError):
                await _check(old)
            await asyncio.sleep(1.5)
        restarted = await _health_server(port)
        try:
            async with make_channel(target) as new:
                await _check(new)
        finally:
            await restarted.stop(grace=0)
