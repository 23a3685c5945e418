"""The plaintext health-only port (GLOSSATOR_<SERVICE>_HEALTH_PORT) of a server whose service port
serves TLS: what the kubelet's native gRPC probes dial. It answers grpc.health.v1 in plaintext with
the service port's statuses (NOT_SERVING on SIGTERM too) and nothing else: no service RPC, no
reflection."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2_grpc

from bench.harness import ROOT, free_port, wait_serving
from glossator.v1 import validation_pb2, validation_pb2_grpc
from services.common.auth import AuthSettings
from services.common.clients import ChannelSecurity, make_channel
from services.common.tls import TlsSettings
from services.validation.config import ValidationSettings
from services.validation.server import SERVICE_NAME
from services.validation.server import build_server as build_validation
from tests.credentials import Authority

TOKEN = "health-port-test-token-0123456789"


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict:
    authority = Authority.create(tmp_path_factory.mktemp("pki"), "ca")
    return {"ca": authority, "server": authority.issue("server"), "client": authority.issue("client")}


def _server_tls(pki: dict) -> TlsSettings:
    pair = pki["server"]
    return TlsSettings(
        cert_file=pair.cert_file, key_file=pair.key_file, ca_file=pki["ca"].ca_file, client_auth=True
    )


def _client_security(pki: dict) -> ChannelSecurity:
    pair = pki["client"]
    return ChannelSecurity(
        tls=TlsSettings(cert_file=pair.cert_file, key_file=pair.key_file, ca_file=pki["ca"].ca_file),
        token=lambda: TOKEN,
    )


async def _status(channel: grpc.aio.Channel, service: str = "") -> str:
    """The health status of `service`, or the status code of a failed check."""
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=3
        )
    except grpc.aio.AioRpcError as error:
        return error.code().name
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


async def test_health_port_answers_checks_in_plaintext_and_nothing_else(tmp_path: Path, pki: dict) -> None:
    settings = ValidationSettings(
        host="127.0.0.1",
        port=0,
        health_port=0,
        data_dir=tmp_path,
        tls=_server_tls(pki),
        auth=AuthSettings(token=TOKEN),
    )
    server, port = await build_validation(settings)
    assert server.health_port and server.health_port != port
    await server.start()
    try:
        async with (
            make_channel(f"127.0.0.1:{server.health_port}") as health_port,
            make_channel(f"127.0.0.1:{port}") as plaintext_service_port,
            make_channel(f"127.0.0.1:{port}", security=_client_security(pki)) as service_port,
        ):
            # The kubelet's checks: plaintext, the server ("") and the service by name.
            assert await _status(health_port, "") == "SERVING"
            assert await _status(health_port, SERVICE_NAME) == "SERVING"
            assert await _status(health_port, "glossator.v1.Unknown") == "NOT_FOUND"
            # The service port still needs TLS (and a client certificate).
            assert await _status(plaintext_service_port) == "UNAVAILABLE"
            assert await _status(service_port, SERVICE_NAME) == "SERVING"

            # No service RPC and no reflection on the health port, with or without a token.
            request = validation_pb2.ValidateRequest(query="q", response="r")
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await validation_pb2_grpc.ValidationServiceStub(health_port).Validate(
                    request, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=5
                )
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
            # The call is refused on its headers; a request written as well can race the refusal
            # and fail on the client's side as INTERNAL ("Failed execute_batch"), so none is sent.
            reflect = reflection_pb2_grpc.ServerReflectionStub(health_port).ServerReflectionInfo(timeout=5)
            assert await reflect.code() == grpc.StatusCode.UNIMPLEMENTED
            # The service port serves both, over TLS.
            reply = await validation_pb2_grpc.ValidationServiceStub(service_port).Validate(
                request, timeout=30
            )
            assert reply.validation_ms >= 0

            # Draining (what SIGTERM starts): both ports say NOT_SERVING.
            await server.drain()
            assert await _status(health_port, "") == "NOT_SERVING"
            assert await _status(health_port, SERVICE_NAME) == "NOT_SERVING"
            assert await _status(service_port, SERVICE_NAME) == "NOT_SERVING"
    finally:
        await server.stop(grace=0)
    async with make_channel(f"127.0.0.1:{server.health_port}") as closed:
        assert await _status(closed) == "UNAVAILABLE"  # stopped with the server


async def test_a_tls_server_process_says_not_serving_on_its_health_port_after_sigterm(
    tmp_path: Path, pki: dict
) -> None:
    """`glossator serve validation` with TLS, as components/tls deploys it: the kubelet's view."""
    health_port = free_port()
    server_pair = pki["server"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GLOSSATOR_")} | {
        "GLOSSATOR_VALIDATION_PORT": str(free_port()),
        "GLOSSATOR_VALIDATION_HEALTH_PORT": str(health_port),
        "GLOSSATOR_VALIDATION_DATA_DIR": str(tmp_path),
        "GLOSSATOR_VALIDATION_DRAIN_SECONDS": "3",
        "GLOSSATOR_VALIDATION_GRACE_SECONDS": "1",
        "GLOSSATOR_TLS_CERT_FILE": str(server_pair.cert_file),
        "GLOSSATOR_TLS_KEY_FILE": str(server_pair.key_file),
        "GLOSSATOR_TLS_CA_FILE": str(pki["ca"].ca_file),
        "GLOSSATOR_TLS_CLIENT_AUTH": "true",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "validation"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        target = f"127.0.0.1:{health_port}"
        await wait_serving(target, process, timeout=120)
        async with make_channel(target) as channel:
            assert await _status(channel, SERVICE_NAME) == "SERVING"
            process.send_signal(signal.SIGTERM)
            await asyncio.sleep(1.0)
            assert process.poll() is None  # draining
            assert await _status(channel, SERVICE_NAME) == "NOT_SERVING"
            assert await _status(channel, "") == "NOT_SERVING"
        assert await asyncio.to_thread(process.wait, 30) == 0
    finally:
        if process.poll() is None:
            process.kill()
