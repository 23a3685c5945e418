"""Scale-out on this machine, as Kubernetes runs it: every replica its own `glossator serve`
process on loopback, sessions in a real Redis (a private, durable one), the agents reaching the
retrieval replicas through one round_robin channel (`ipv4:` with both addresses, as `dns:///` a
headless Service resolves to every pod).

Each retrieval replica has its own embedded store with the same book ingested: replicas share a
Qdrant server in a cluster, which cannot run here; what is proven is the spreading of calls.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench.harness import free_port, wait_serving
from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.clients import make_channel
from services.common.server import PortUnavailable, create_server
from services.common.settings import ServiceSettings
from services.retrieval.ingest import read_folder
from tests.private_redis import private_redis

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.redis
STARTUP_SECONDS = 180


@dataclass
class Replica:
    name: str
    port: int
    process: subprocess.Popen
    log: Path
    metrics_port: int | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


def _spawn(name: str, service: str, data_dir: Path, env: dict[str, str], metrics: bool = False) -> Replica:
    port = free_port()
    prefix = f"GLOSSATOR_{service.upper()}_"
    env = dict(os.environ, **env, **{prefix + "PORT": str(port), prefix + "DATA_DIR": str(data_dir)})
    metrics_port = free_port() if metrics else None
    if metrics_port:
        env[prefix + "METRICS_PORT"] = str(metrics_port)
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "serve", service],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
    return Replica(name, port, process, log, metrics_port)


async def _health_until_serving(replica: Replica) -> list[str]:
    """The distinct health statuses seen, in order, until SERVING (what a readiness probe sees)."""
    try:
        return await wait_serving(replica.target, replica.process, STARTUP_SECONDS, period=0.1)
    except (RuntimeError, TimeoutError) as error:
        raise AssertionError(f"{replica.name}: {error}: {replica.log.read_text()[-2000:]}") from error


@contextmanager
def _stopped_at_exit(replicas: list[Replica]) -> Iterator[None]:
    try:
        yield
    finally:
        for replica in replicas:
            if replica.process.poll() is None:
                replica.process.kill()
            replica.process.wait(timeout=30)


def _calls_served(replica: Replica) -> dict[str, float]:
    """RetrievalService calls the replica answered, by method, from its Prometheus endpoint."""
    text = httpx.get(f"http://127.0.0.1:{replica.metrics_port}/metrics", timeout=5).text
    pattern = r"glossator_rpc_requests_total\{([^}]*)\} ([0-9.e+]+)"
    served: dict[str, float] = {}
    for labels, value in re.findall(pattern, text):
        method = re.search(r'method="([^"]+)"', labels).group(1)
        if 'service="glossator.v1.RetrievalService"' in labels and method != "Ingest":
            served[method] = served.get(method, 0) + float(value)
    return served


async def _ingest_book(replica: Replica) -> None:
    options = retrieval_pb2.IngestOptions(base_url="https://glossator.dev/docs/")
    async with make_channel(replica.target) as channel:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        requests = ingest_requests(options, async_iter(read_folder(ROOT / "docs")))
        async for _ in ingest(stub, requests, timeout=300):
            pass


async def test_a_conversation_spread_over_replicas_keeps_its_history_and_survives_a_kill(tmp_path):
    with private_redis("--appendonly", "yes", "--appendfsync", "always") as redis:
        replicas: list[Replica] = []
        with _stopped_at_exit(replicas):
            replicas.append(validation := _spawn("validation", "validation", tmp_path / "validation", {}))
            retrievals = [
                _spawn(f"retrieval-{i}", "retrieval", tmp_path / f"retrieval-{i}", {}, metrics=True)
                for i in (1, 2)
            ]
            replicas += retrievals
            statuses = await _health_until_serving(validation)
            # Readiness tells the truth: SERVING only once the checker has warmed up (on onnxruntime
            # that takes well under the 0.1 s between polls, so NOT_SERVING is seldom seen).
            assert statuses[-1] == "SERVING" and set(statuses[:-1]) <= {"no answer", "NOT_SERVING"}, statuses
            for retrieval in retrievals:
                await _health_until_serving(retrieval)
                await _ingest_book(retrieval)
            agent_env = {
                "GLOSSATOR_AGENT_SESSION_BACKEND": "redis",
                "GLOSSATOR_AGENT_REDIS_URL": redis.url,
                "GLOSSATOR_AGENT_RETRIEVAL_TARGET": "ipv4:" + ",".join(r.target for r in retrievals),
                "GLOSSATOR_AGENT_VALIDATION_TARGET": validation.target,
                "GLOSSATOR_AGENT_RESPONSE_CACHE_TTL_SECONDS": "0",
            }
            agents = [_spawn(f"agent-{i}", "agent", tmp_path / f"agent-{i}", agent_env) for i in (1, 2)]
            replicas += agents
            for agent in agents:
                await _health_until_serving(agent)

            questions = [
                "How does Glossator check that an answer is grounded?",
                "How are documents split into chunks?",
                "What does the search return?",
                "Which search modes are there?",
            ]
            channels = [make_channel(agent.target) for agent in agents]
            try:
                stubs = [agent_pb2_grpc.AgentServiceStub(channel) for channel in channels]
                session_id = ""
                acknowledged: list[str] = []
                for turn, question in enumerate(questions):
                    stub = stubs[turn % 2]  # each turn on the other replica
                    request = agent_pb2.AskRequest(query=question, session_id=session_id, user_id="reader-1")
                    reply = await stub.Ask(request, timeout=120)
                    session_id = reply.response.session_id
                    acknowledged.append(reply.response.query_id)
                    assert reply.response.sources, f"turn {turn} found nothing"
                session = (
                    await stubs[0].GetSession(
                        agent_pb2.GetSessionRequest(session_id=session_id, user_id="reader-1"), timeout=10
                    )
                ).session
                assert [t.query_id for t in session.turns] == acknowledged

                # The agents' calls (not the ingests made above) land on both replicas. round_robin
                # starts each channel at a random replica and picks among those connected, so four
                # searches (two per agent) all reach one replica now and then: a few more questions
                # without a session show the spread, and only a replica never called fails.
                spread = [_calls_served(retrieval) for retrieval in retrievals]
                for extra in range(12):
                    if all(sum(calls.values()) >= 1 for calls in spread):
                        break
                    request = agent_pb2.AskRequest(
                        query=questions[extra % len(questions)], user_id="reader-2"
                    )
                    await stubs[extra % 2].Ask(request, timeout=120)
                    spread = [_calls_served(retrieval) for retrieval in retrievals]
                assert all(sum(calls.values()) >= 1 for calls in spread), f"calls per replica: {spread}"
                assert sum(calls.get("Search", 0) for calls in spread) >= len(questions)

                # A replica killed (-9) in the middle of the conversation: the other one has every
                # acknowledged turn and goes on with it.
                agents[0].process.send_signal(signal.SIGKILL)
                agents[0].process.wait(timeout=30)
                reply = await stubs[1].Ask(
                    agent_pb2.AskRequest(
                        query="And what happens to an answer that is not grounded?",
                        session_id=session_id,
                        user_id="reader-1",
                    ),
                    timeout=120,
                )
                acknowledged.append(reply.response.query_id)
                session = (
                    await stubs[1].GetSession(
                        agent_pb2.GetSessionRequest(session_id=session_id, user_id="reader-1"), timeout=10
                    )
                ).session
                assert [t.query_id for t in session.turns] == acknowledged
            finally:
                for channel in channels:
                    await channel.close()


async def test_serving_on_a_port_in_use_fails_with_a_clear_message(tmp_path):
    """gRPC shares ports by default on Linux (SO_REUSEPORT): a second server took half the calls."""
    holder = create_server("validation", ServiceSettings(host="127.0.0.1", port=0), lambda server: [])
    await holder.start()
    try:
        env = dict(
            os.environ,
            GLOSSATOR_VALIDATION_PORT=str(holder.port),
            GLOSSATOR_VALIDATION_DATA_DIR=str(tmp_path),
        )
        second = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "services.cli", "serve", "validation"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        await holder.stop(grace=0)
    assert second.returncode == 2, second.stderr[-2000:]
    assert second.stderr.splitlines()[-1].startswith(
        f"error: cannot listen on 127.0.0.1:{holder.port} for the validation service"
    )
    assert "Traceback" not in second.stderr
    assert "add_port" not in second.stderr  # gRPC C core's own error line comes before ours no more


async def test_an_address_not_of_this_machine_is_refused_before_grpc_logs_its_error(capfd):
    """192.0.2.1 (TEST-NET-1) is no address of this machine: binding it fails with no packet sent."""
    with pytest.raises(PortUnavailable, match=r"cannot listen on 192\.0\.2\.1:50999 for the validation"):
        create_server("validation", ServiceSettings(host="192.0.2.1", port=50999), lambda server: [])
    assert "add_port" not in capfd.readouterr().err
