"""Shared fixtures: the real suite of three services, in this process, on port 0."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from glossator.v1 import agent_pb2_grpc, retrieval_pb2_grpc, validation_pb2_grpc
from services.agent.config import AgentSettings
from services.common.clients import make_channel
from services.common.server import GlossatorServer
from services.retrieval.config import RetrievalSettings
from services.suite import SuiteSettings, build_suite
from services.validation.config import ValidationSettings

EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"


@dataclass
class Suite:
    servers: dict[str, GlossatorServer]
    channels: dict[str, grpc.aio.Channel]
    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    validation: validation_pb2_grpc.ValidationServiceStub
    agent: agent_pb2_grpc.AgentServiceStub
    data_dir: Path


def suite_settings(data_dir: Path) -> SuiteSettings:
    common = {"host": "127.0.0.1", "port": 0, "data_dir": data_dir, "grace_seconds": 2.0}
    return SuiteSettings(
        retrieval=RetrievalSettings(**common),
        validation=ValidationSettings(**common),
        agent=AgentSettings(**common),
    )


@pytest.fixture(scope="session")
async def suite(tmp_path_factory: pytest.TempPathFactory):
    data_dir = tmp_path_factory.mktemp("suite-data")
    servers = {server.name: server for server in await build_suite(suite_settings(data_dir))}
    for server in servers.values():
        await server.start()
    channels = {name: make_channel(f"127.0.0.1:{server.port}") for name, server in servers.items()}
    yield Suite(
        servers=servers,
        channels=channels,
        retrieval=retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"]),
        validation=validation_pb2_grpc.ValidationServiceStub(channels["validation"]),
        agent=agent_pb2_grpc.AgentServiceStub(channels["agent"]),
        data_dir=data_dir,
    )
    for channel in channels.values():
        await channel.close()
    for server in servers.values():
        await server.stop(grace=1.0)


def eval_path(*parts: str) -> Path:
    """A file of ../shared/eval; the test is skipped with a clear reason when it is absent."""
    path = EVAL_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path}")
    return path
