"""Shared fixtures: the real suite of three services, in this process, on port 0."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
import structlog

from glossator.v1 import agent_pb2_grpc, retrieval_pb2_grpc, validation_pb2_grpc
from services.agent.config import AgentSettings
from services.common.clients import ChannelSecurity, make_channel
from services.common.server import GlossatorServer
from services.retrieval.config import RetrievalSettings
from services.suite import SuiteSettings, build_suite
from services.validation.config import ValidationSettings

EVAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "eval"


def pytest_configure(config: pytest.Config) -> None:
    """A run started in the background (`make test &`, nohup) inherits SIGINT ignored, and so would
    every CLI a test starts and presses Ctrl-C on: this process takes SIGINT back, and the
    programs it starts see it at its default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@dataclass
class Suite:
    servers: dict[str, GlossatorServer]
    channels: dict[str, grpc.aio.Channel]
    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    validation: validation_pb2_grpc.ValidationServiceStub
    agent: agent_pb2_grpc.AgentServiceStub
    data_dir: Path


def suite_settings(data_dir: Path, *, shared: dict | None = None, **agent_overrides) -> SuiteSettings:
    """Settings of the three services on port 0; `shared` sets fields of all three (auth, tls)."""
    common = {"host": "127.0.0.1", "port": 0, "data_dir": data_dir, "grace_seconds": 2.0, **(shared or {})}
    return SuiteSettings(
        retrieval=RetrievalSettings(**common),
        validation=ValidationSettings(**common),
        agent=AgentSettings(**common, **agent_overrides),
    )


@asynccontextmanager
async def running_suite(
    settings: SuiteSettings, security: ChannelSecurity | None = None
) -> AsyncIterator[Suite]:
    """The three servers started on port 0, with a channel to each; stopped on exit."""
    servers = {server.name: server for server in await build_suite(settings)}
    for server in servers.values():
        await server.start()
    channels = {
        name: make_channel(f"127.0.0.1:{server.port}", security=security) for name, server in servers.items()
    }
    try:
        yield Suite(
            servers=servers,
            channels=channels,
            retrieval=retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"]),
            validation=validation_pb2_grpc.ValidationServiceStub(channels["validation"]),
            agent=agent_pb2_grpc.AgentServiceStub(channels["agent"]),
            data_dir=settings.agent.data_dir,
        )
    finally:
        for channel in channels.values():
            await channel.close()
        for server in servers.values():
            await server.stop(grace=1.0)


@pytest.fixture(autouse=True)
def _logging_config_restored():
    """Client commands run in tests configure this process's logging (WARNING and up); a later
    test that captures a server's info events needs the configuration it started with."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
async def suite(tmp_path_factory: pytest.TempPathFactory):
    async with running_suite(suite_settings(tmp_path_factory.mktemp("suite-data"))) as running:
        yield running


def eval_path(*parts: str) -> Path:
    """A file of ../shared/eval; the test is skipped with a clear reason when it is absent."""
    path = EVAL_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path}")
    return path


@dataclass(frozen=True)
class LlmServer:
    """A real OpenAI-compatible LLM server (../shared/tools/test-llm) the `llm` tests answer with."""

    base_url: str
    model: str


def _served_models(base_url: str) -> list[str] | None:
    try:
        reply = httpx.get(f"{base_url}/models", timeout=5)
        return [entry["id"] for entry in reply.json()["data"]]
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None


@pytest.fixture(scope="session")
def llm_server() -> LlmServer:
    """The LLM server at GLOSSATOR_TEST_LLM_URL (default the test-llm tool's port 8081).

    Without one the `llm` tests skip with the command that starts it; CI sets
    GLOSSATOR_TEST_LLM_REQUIRED=1, so there a missing server fails instead of skipping.
    """
    base_url = os.environ.get("GLOSSATOR_TEST_LLM_URL", "http://127.0.0.1:8081/v1").rstrip("/")
    models = _served_models(base_url)
    if not models:
        message = f"no LLM server at {base_url}; start one with ../shared/tools/test-llm start"
        if os.environ.get("GLOSSATOR_TEST_LLM_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return LlmServer(base_url, models[0])


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `torch` compare our runtime with sentence-transformers on PyTorch, which the
    default install leaves out: they skip without it (`make setup-torch` installs it), unless
    GLOSSATOR_TEST_TORCH_REQUIRED=1 (CI) makes that a failure."""
    if item.get_closest_marker("torch") is None:
        return
    import importlib.util

    if importlib.util.find_spec("sentence_transformers") is None or importlib.util.find_spec("torch") is None:
        message = "PyTorch and sentence-transformers are not installed (make setup-torch)"
        if os.environ.get("GLOSSATOR_TEST_TORCH_REQUIRED") == "1":
            pytest.fail(f"{message}, and GLOSSATOR_TEST_TORCH_REQUIRED=1")
        pytest.skip(message)
