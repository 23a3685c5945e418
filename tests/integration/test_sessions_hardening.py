"""Sessions hardened, through a real agent server on each session backend: signed page tokens, a
cap on a user's open sessions, store failures that name no host or file, and the check at start
that Redis keeps its data on disk.

Retrieval and validation point at a closed port: a session opens before either is called, and
these tests read no answer (the first streamed event names the new session; then the call is
cancelled).
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import grpc
import pytest
from structlog.testing import capture_logs

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.agent.config import AgentSettings
from services.agent.server import build_server
from services.agent.sessions.redis import DEFAULT_KEY_PREFIX
from services.commands.connect import error_info
from services.common.auth import CLIENT_ADDRESS_HEADER, AuthSettings
from services.common.clients import make_channel
from services.common.errors import Reason
from tests.grpc_helpers import field_violations
from tests.private_redis import private_redis
from tests.unit.agent.session_helpers import require_redis, sync_redis

MAX_OPEN = 3
NOBODY = "127.0.0.1:9"  # retrieval and validation: nothing answers there


@dataclass
class Agent:
    stub: agent_pb2_grpc.AgentServiceStub
    users: list[str] = field(default_factory=list)

    def new_user(self) -> str:
        """A user of this test alone (the Redis database is shared between runs)."""
        self.users.append(f"hardening-{uuid.uuid4().hex[:12]}")
        return self.users[-1]


@asynccontextmanager
async def serving(tmp_path, **overrides) -> AsyncIterator[agent_pb2_grpc.AgentServiceStub]:
    settings = AgentSettings(
        host="127.0.0.1",
        port=0,
        data_dir=tmp_path,
        retrieval_target=NOBODY,
        validation_target=NOBODY,
        **overrides,
    )
    server, port = await build_server(settings)
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            yield agent_pb2_grpc.AgentServiceStub(channel)
    finally:
        await server.stop(grace=0)


def _forget_users(user_ids: list[str]) -> None:
    """Deletes what the agent stored in the shared test Redis for these users."""
    client = sync_redis()
    try:
        for user_id in user_ids:
            user_key = f"{DEFAULT_KEY_PREFIX}user:{user_id}"
            ids = [i.decode() for i in client.zrange(user_key, 0, -1)]
            client.delete(
                user_key,
                f"{DEFAULT_KEY_PREFIX}open-by-quota:user:{user_id}",
                f"{DEFAULT_KEY_PREFIX}stored:user:{user_id}",
            )
            for session_id in ids:
                client.delete(f"{DEFAULT_KEY_PREFIX}session:{session_id}")
                client.zrem(f"{DEFAULT_KEY_PREFIX}open", session_id)
                client.zrem(f"{DEFAULT_KEY_PREFIX}closed", session_id)
    finally:
        client.close()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def agent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """An agent server on the backend under test, at most MAX_OPEN open sessions a user."""
    backend = {"session_backend": request.param}
    if request.param == "redis":
        backend["redis_url"] = require_redis()
    data_dir = tmp_path_factory.mktemp(f"hardening-{request.param}")
    async with serving(data_dir, session_max_open_per_user=MAX_OPEN, **backend) as stub:
        agent = Agent(stub)
        yield agent
    if request.param == "redis":
        _forget_users(agent.users)


async def open_session(stub: agent_pb2_grpc.AgentServiceStub, user_id: str) -> str:
    """Opens a session with a question and returns its id as soon as the stream names it."""
    return (await start_session(stub, user_id)).session_id


async def start_session(
    stub: agent_pb2_grpc.AgentServiceStub, user_id: str, *, metadata=(), **fields
) -> agent_pb2.Started:
    """The Started event of a question (that opens a session unless `fields` name one); the rest
    of the answer is not read."""
    request = agent_pb2.AskRequest(query="What is a collection?", user_id=user_id, **fields)
    call = stub.AskStream(request, metadata=metadata, timeout=30)
    try:
        async for event in call:
            return event.started
    finally:
        call.cancel()
    raise AssertionError("the stream ended before naming its session")


async def test_an_anonymous_session_is_reachable_only_with_its_session_token(agent: Agent) -> None:
    stub = agent.stub
    started = await start_session(stub, "")
    session_id, token = started.session_id, started.session_token
    assert token, "an anonymous session must come with its token"
    other = await start_session(stub, "")
    assert other.session_token and other.session_token != token

    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await stub.GetSession(agent_pb2.GetSessionRequest(session_id=session_id), timeout=10)
    assert missing.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(field_violations(missing.value)) == ["session_token"]
    for wrong in [other.session_token, token[:-1] + ("A" if token[-1] != "A" else "B"), "x" * 300]:
        for call in [
            stub.GetSession(
                agent_pb2.GetSessionRequest(session_id=session_id, session_token=wrong), timeout=10
            ),
            stub.EndSession(
                agent_pb2.EndSessionRequest(session_id=session_id, session_token=wrong), timeout=10
            ),
            stub.Ask(
                agent_pb2.AskRequest(query="And then?", session_id=session_id, session_token=wrong),
                timeout=10,
            ),
        ]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND

    reply = await stub.GetSession(agent_pb2.GetSessionRequest(session_id=session_id, session_token=token))
    assert reply.session.session_id == session_id
    ended = await stub.EndSession(agent_pb2.EndSessionRequest(session_id=session_id, session_token=token))
    assert ended.session.state == agent_pb2.SESSION_STATE_TERMINATED


async def test_anonymous_sessions_are_never_listed_and_owned_ones_get_no_token(agent: Agent) -> None:
    await start_session(agent.stub, "")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await list_sessions(agent.stub, "")
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(field_violations(refused.value)) == ["user_id"]
    owned = await start_session(agent.stub, agent.new_user())
    assert owned.session_id and not owned.session_token


async def list_sessions(stub, user_id: str, page_token: str = "", page_size: int = 0):
    request = agent_pb2.ListSessionsRequest(user_id=user_id, page_size=page_size, page_token=page_token)
    return await stub.ListSessions(request, timeout=10)


def unsigned_token(last_active_us: int, session_id: str) -> str:
    """A token as the first version wrote them: base64url of the JSON position, nothing to check it."""
    return base64.urlsafe_b64encode(json.dumps([last_active_us, session_id]).encode()).decode()


async def test_forged_page_tokens_are_invalid_argument(agent: Agent) -> None:
    alice, bob = agent.new_user(), agent.new_user()
    opened = {await open_session(agent.stub, alice) for _ in range(2)}
    first = await list_sessions(agent.stub, alice, page_size=1)
    token = first.next_page_token
    second = await list_sessions(agent.stub, alice, page_token=token, page_size=1)
    assert {s.session_id for s in [*first.sessions, *second.sessions]} == opened

    some_id = str(uuid.uuid4())
    tampered = token[:-4] + ("A" if token[-4] != "A" else "B") + token[-3:]
    for user_id, forged in [
        (alice, unsigned_token(10**30, some_id)),  # was INTERNAL (OverflowError) on SQLite
        (alice, unsigned_token(-(10**30), some_id)),
        (alice, unsigned_token(1_767_603_600_000_000, some_id)),  # in range, but not signed
        (alice, tampered),
        (alice, "%%%"),
        (bob, token),  # alice's token
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await list_sessions(agent.stub, user_id, page_token=forged)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, forged
        assert list(field_violations(caught.value)) == ["page_token"]


async def test_a_user_at_the_quota_gets_a_new_session_and_the_least_recent_one_ends(agent: Agent) -> None:
    alice, bob = agent.new_user(), agent.new_user()
    opened = [await open_session(agent.stub, alice) for _ in range(MAX_OPEN)]
    newest = await open_session(agent.stub, alice)
    await open_session(agent.stub, bob)  # the quota is per user
    ended = await agent.stub.GetSession(
        agent_pb2.GetSessionRequest(session_id=opened[0], user_id=alice), timeout=10
    )
    assert ended.session.state == agent_pb2.SESSION_STATE_TERMINATED, "the least recent one ended"
    listed = {s.session_id for s in (await list_sessions(agent.stub, alice)).sessions}
    assert listed == {*opened[1:], newest}, "the open ones: the quota is kept"


async def test_redis_failure_names_no_address_and_no_persistence_is_reported(tmp_path) -> None:
    with private_redis("--save", "", "--appendonly", "no") as server, capture_logs() as logs:
        async with serving(tmp_path, session_backend="redis", redis_url=server.url) as stub:
            session_id = await open_session(stub, "alice")
            server.stop()
            get = agent_pb2.GetSessionRequest(session_id=session_id, user_id="alice")
            for call in (
                lambda: list_sessions(stub, "alice"),
                lambda: stub.GetSession(get, timeout=10),
                lambda: open_session(stub, "alice"),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call()
                error = caught.value
                assert (error.code(), error.details()) == (
                    grpc.StatusCode.UNAVAILABLE,
                    "session store unavailable",
                )
                info = error_info(error)
                assert info is not None and info.reason == Reason.DEPENDENCY_UNAVAILABLE
                assert dict(info.metadata) == {"service": "sessions"}
                assert str(server.socket) not in str(error.trailing_metadata())

    # Where the store is, and why it failed, is for the operator's log.
    failures = [e for e in logs if e["event"] == "session_store_unavailable"]
    assert len(failures) >= 3 and all(e["where"] == str(server.socket) for e in failures)
    # And so is, from the start, that this Redis would lose every session on a restart.
    events = [e["event"] for e in logs]
    assert events.count("session_store_not_durable") == 1
    assert events.index("session_store_not_durable") < events.index("server_started")
    warning = logs[events.index("session_store_not_durable")]
    assert warning["log_level"] == "warning" and "appendonly yes" in warning["advice"]


# Anonymous visitors of a docs site: widget-key callers, each known by the client address the
# browser edge names (x-glossator-client-address, set by Envoy from the connection).
WIDGET_KEY = "widget-key-" + uuid.uuid4().hex
SERVICE_TOKEN = "service-token-" + uuid.uuid4().hex
PAGE = "https://docs.example.org"


@pytest.fixture(scope="module", params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def widget_agent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """An agent with widget keys on the backend under test, at most MAX_OPEN open sessions a caller."""
    backend = {"session_backend": request.param}
    if request.param == "redis":
        backend["redis_url"] = require_redis()
    auth = AuthSettings(token=SERVICE_TOKEN, widget_keys={WIDGET_KEY: [PAGE]})
    data_dir = tmp_path_factory.mktemp(f"widget-{request.param}")
    async with serving(data_dir, auth=auth, session_max_open_per_user=MAX_OPEN, **backend) as stub:
        yield stub


def visitor() -> tuple[tuple[str, str], ...]:
    """The metadata of one browser's calls through the edge, from an address of its own (unique
    per run: the test Redis outlives it)."""
    address = f"2001:db8::{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}"
    return (("x-glossator-widget-key", WIDGET_KEY), ("origin", PAGE), (CLIENT_ADDRESS_HEADER, address))


async def test_one_visitors_session_less_questions_never_end_another_visitors_session(widget_agent) -> None:
    """All anonymous sessions counted as one user: one visitor's 110 session-less questions ended
    everyone else's sessions (their next question: FAILED_PRECONDITION "terminated")."""
    alice, mallory = visitor(), visitor()
    kept = await start_session(widget_agent, "", metadata=alice)
    mallorys = [await start_session(widget_agent, "", metadata=mallory) for _ in range(MAX_OPEN + 3)]

    again = await start_session(
        widget_agent, "", metadata=alice, session_id=kept.session_id, session_token=kept.session_token
    )
    assert again.session_id == kept.session_id, "alice's session goes on"
    # Mallory's own quota rolled over: its least recent sessions ended, its newest are open.
    states = []
    for started in mallorys:
        request = agent_pb2.GetSessionRequest(
            session_id=started.session_id, session_token=started.session_token
        )
        states.append((await widget_agent.GetSession(request, metadata=mallory, timeout=10)).session.state)
    assert states[:3] == [agent_pb2.SESSION_STATE_TERMINATED] * 3
    assert agent_pb2.SESSION_STATE_TERMINATED not in states[3:]
