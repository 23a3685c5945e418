"""Authentication, roles and TLS through the real suite, with certificates and JWTs made here.

Two suites: one with the shared service token over plaintext loopback (what `glossator up` plus
the CLI run with GLOSSATOR_AUTH_TOKEN set), one with JWT verification against a JWKS file over
mTLS (what a platform team runs behind an identity provider). In the second the agent has no
service token: it searches as its caller, forwarding the caller's JWT to retrieval over mTLS.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from glossator.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
    validation_pb2,
    validation_pb2_grpc,
)
from services.commands import exit_codes
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.auth import AuthSettings
from services.common.clients import ChannelSecurity, make_channel
from services.common.tls import TlsSettings
from services.retrieval.ingest import read_folder
from services.validation.config import ValidationSettings
from services.validation.server import build_server as build_validation
from tests.conftest import running_suite, suite_settings
from tests.credentials import AUDIENCE, ISSUER, Authority, TokenIssuer, forged_token
from tests.integration.test_cli import run_cli

SERVICE_TOKEN = "service-token-" + uuid.uuid4().hex
PAGES = {
    "lidar.md": "# Lidar\n\n## How lidar measures distance\n\nA lidar measures distance by timing laser "
    "pulses that bounce back from surfaces. Robots use lidar to build maps of a room.",
    "imu.md": "# IMU\n\n## What an IMU reports\n\nAn inertial measurement unit reports acceleration and "
    "angular velocity. Robots fuse IMU readings with wheel odometry to estimate their motion.",
}
QUESTION = "How does a lidar measure distance?"


def bearer(token: str, user: str = "") -> tuple[tuple[str, str], ...]:
    metadata = (("authorization", f"Bearer {token}"),)
    return metadata + ((("x-glossator-user", user),) if user else ())


def _docs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PAGES.items():
        (folder / name).write_text(text)
    return folder


async def _ingest(suite, metadata=None) -> retrieval_pb2.IngestSummary:
    options = retrieval_pb2.IngestOptions(base_url="https://robots.example/")
    requests = ingest_requests(options, async_iter(read_folder(suite.data_dir / "pages")))
    summary = None
    async for reply in ingest(suite.retrieval, requests, metadata=metadata, timeout=120):
        summary = reply.summary if reply.HasField("summary") else summary
    return summary


async def _code(call) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


# The shared service token, plaintext loopback.


@pytest.fixture(scope="module")
async def token_suite(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("token-suite")
    _docs(data_dir / "pages")
    settings = suite_settings(data_dir, shared={"auth": AuthSettings(token=SERVICE_TOKEN)})
    security = ChannelSecurity(token=lambda: SERVICE_TOKEN)
    async with running_suite(settings, security) as suite:
        await _ingest(suite)
        yield suite


def _unauthenticated_call(name: str, channel: grpc.aio.Channel):
    """A call of each service that needs no data."""
    if name == "retrieval":
        return retrieval_pb2_grpc.RetrievalServiceStub(channel).Stats(retrieval_pb2.StatsRequest(), timeout=5)
    if name == "validation":
        request = validation_pb2.ValidateRequest(response="Lidar times laser pulses.")
        return validation_pb2_grpc.ValidationServiceStub(channel).Validate(request, timeout=5)
    request = agent_pb2.ListSessionsRequest(user_id="alice")
    return agent_pb2_grpc.AgentServiceStub(channel).ListSessions(request, timeout=5)


async def test_without_a_token_every_service_is_unauthenticated_but_health_answers(token_suite):
    for name, server in token_suite.servers.items():
        async with make_channel(f"127.0.0.1:{server.port}") as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
            assert health.status == health_pb2.HealthCheckResponse.SERVING, name
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _unauthenticated_call(name, channel)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
            assert "authorization: Bearer" in refused.value.details()


async def test_a_missing_or_wrong_token_is_unauthenticated(token_suite):
    search = retrieval_pb2.SearchRequest(query="lidar")
    ask = agent_pb2.AskRequest(query=QUESTION)
    async with make_channel(f"127.0.0.1:{token_suite.servers['retrieval'].port}") as channel:
        plain = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        assert await _code(plain.Search(search, timeout=5)) == grpc.StatusCode.UNAUTHENTICATED
        wrong = bearer(SERVICE_TOKEN + "x")
        assert await _code(plain.Search(search, metadata=wrong, timeout=5)) == grpc.StatusCode.UNAUTHENTICATED
        not_bearer = (("authorization", f"Basic {SERVICE_TOKEN}"),)
        code = await _code(plain.Search(search, metadata=not_bearer, timeout=5))
        assert code == grpc.StatusCode.UNAUTHENTICATED
    async with make_channel(f"127.0.0.1:{token_suite.servers['agent'].port}") as channel:
        agent = agent_pb2_grpc.AgentServiceStub(channel)
        assert await _code(agent.Ask(ask, timeout=30)) == grpc.StatusCode.UNAUTHENTICATED


async def test_the_service_token_ingests_and_the_agent_searches_with_it(token_suite):
    reply = await token_suite.agent.Ask(agent_pb2.AskRequest(query=QUESTION, user_id="alice"), timeout=60)
    assert reply.response.sources, "the agent could not search: it did not pass the service token on"
    assert "lidar" in reply.response.answer.lower()


async def test_the_service_token_acts_for_the_user_its_header_names(token_suite):
    agent = token_suite.agent
    reply = await agent.Ask(
        agent_pb2.AskRequest(query=QUESTION), metadata=bearer(SERVICE_TOKEN, "carol"), timeout=60
    )
    listed = await agent.ListSessions(
        agent_pb2.ListSessionsRequest(), metadata=bearer(SERVICE_TOKEN, "carol")
    )
    assert [s.session_id for s in listed.sessions] == [reply.response.session_id]
    assert listed.sessions[0].user_id == "carol"
    assert not reply.response.session_token, "an owned session needs no session token"
    conflicting = agent.ListSessions(
        agent_pb2.ListSessionsRequest(user_id="dave"), metadata=bearer(SERVICE_TOKEN, "carol")
    )
    assert await _code(conflicting) == grpc.StatusCode.INVALID_ARGUMENT


# JWTs from a JWKS file, over mTLS.


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ours, theirs = Authority.create(folder, "ours"), Authority.create(folder, "theirs")
    return {
        "ca": ours,
        "other_ca": theirs,
        "server": ours.issue("glossator"),
        "client": ours.issue("client"),
        "foreign_client": theirs.issue("client"),
        "issuer": TokenIssuer.create(folder / "jwt"),
        "impostor": TokenIssuer.create(folder / "impostor"),
    }


def _client_tls(ca: Authority, pair=None) -> TlsSettings:
    certificate = {"cert_file": pair.cert_file, "key_file": pair.key_file} if pair else {}
    return TlsSettings(ca_file=ca.ca_file, **certificate)


@pytest.fixture(scope="module")
async def jwt_suite(tmp_path_factory, pki):
    data_dir = tmp_path_factory.mktemp("jwt-suite")
    _docs(data_dir / "pages")
    auth = AuthSettings(jwks_file=pki["issuer"].jwks_file, issuer=ISSUER, audience=AUDIENCE)
    server_pair = pki["server"]
    tls = TlsSettings(
        cert_file=server_pair.cert_file,
        key_file=server_pair.key_file,
        ca_file=pki["ca"].ca_file,
        client_auth=True,
    )
    settings = suite_settings(data_dir, shared={"auth": auth, "tls": tls})
    security = ChannelSecurity(tls=_client_tls(pki["ca"], pki["client"]))
    async with running_suite(settings, security) as suite:
        admin = pki["issuer"].token("ops", ["admin"])
        summary = await _ingest(suite, metadata=bearer(admin))
        assert summary.documents_indexed == len(PAGES)
        yield suite


async def test_a_reader_cannot_ingest_or_delete(jwt_suite, pki):
    reader = bearer(pki["issuer"].token("alice", ["reader"]))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _ingest(jwt_suite, metadata=reader)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "admin" in refused.value.details()
    delete = jwt_suite.retrieval.DeleteDocuments(
        retrieval_pb2.DeleteDocumentsRequest(document_ids=["lidar.md"]), metadata=reader, timeout=10
    )
    assert await _code(delete) == grpc.StatusCode.PERMISSION_DENIED
    drop = jwt_suite.retrieval.DeleteCollection(
        retrieval_pb2.DeleteCollectionRequest(collection="default"), metadata=reader, timeout=10
    )
    assert await _code(drop) == grpc.StatusCode.PERMISSION_DENIED
    stats = await jwt_suite.retrieval.Stats(retrieval_pb2.StatsRequest(), metadata=reader, timeout=10)
    assert stats.documents == len(PAGES), "nothing was deleted"
    listed = await jwt_suite.retrieval.ListCollections(
        retrieval_pb2.ListCollectionsRequest(), metadata=reader, timeout=10
    )
    assert [(c.name, c.documents) for c in listed.collections] == [("default", len(PAGES))]


@pytest.mark.parametrize(
    "make_token, detail",
    [
        (lambda pki: pki["issuer"].token("alice", ["reader"], expires_in=-600), "expired"),
        (lambda pki: pki["impostor"].token("alice", ["admin"]), "not valid"),
        (lambda pki: pki["issuer"].token("alice", ["admin"], iss="https://evil.example"), "not valid"),
        (lambda pki: pki["issuer"].token("alice", ["admin"], aud="someone-else"), "not valid"),
        (lambda pki: "not.a.jwt", "not valid"),
    ],
    ids=["expired", "another-key", "another-issuer", "another-audience", "garbage"],
)
async def test_bad_tokens_are_unauthenticated(jwt_suite, pki, make_token, detail):
    call = jwt_suite.retrieval.Search(
        retrieval_pb2.SearchRequest(query="lidar"), metadata=bearer(make_token(pki)), timeout=10
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert detail in refused.value.details()


@pytest.mark.parametrize(
    "make_token",
    [
        lambda issuer: forged_token({"alg": "ES256", "typ": "JWT"}, issuer.claims("eve", ["admin"])),
        lambda issuer: forged_token({"alg": "RS256", "kid": issuer.ec_kid}, issuer.claims("eve", ["admin"])),
        lambda issuer: forged_token({"alg": "ES256", "kid": issuer.kid}, issuer.claims("eve", ["admin"])),
        lambda issuer: forged_token({"alg": "none"}, issuer.claims("eve", ["admin"])),
        lambda issuer: forged_token({"alg": "HS256", "kid": issuer.kid}, issuer.claims("eve", ["admin"])),
    ],
    ids=["es256-no-kid", "rs256-on-ec-kid", "es256-on-rsa-kid", "alg-none", "hs256-on-rsa-kid"],
)
async def test_a_token_whose_algorithm_is_not_its_keys_is_unauthenticated(jwt_suite, pki, make_token):
    """Every service, not INTERNAL (an ES256 header on an RSA key raised TypeError)."""
    metadata = bearer(make_token(pki["issuer"]))
    search = jwt_suite.retrieval.Search(
        retrieval_pb2.SearchRequest(query="lidar"), metadata=metadata, timeout=10
    )
    assert await _code(search) == grpc.StatusCode.UNAUTHENTICATED
    ask = jwt_suite.agent.Ask(agent_pb2.AskRequest(query=QUESTION), metadata=metadata, timeout=30)
    assert await _code(ask) == grpc.StatusCode.UNAUTHENTICATED


async def test_a_token_signed_by_the_key_sets_ec_key_is_accepted(jwt_suite, pki):
    reader = bearer(pki["issuer"].ec_token("alice", ["reader"]))
    stats = await jwt_suite.retrieval.Stats(retrieval_pb2.StatsRequest(), metadata=reader, timeout=10)
    assert stats.documents == len(PAGES)


async def test_a_token_valid_for_longer_than_the_maximum_lifetime_is_unauthenticated(jwt_suite, pki):
    issuer = pki["issuer"]
    for expires_in in (400 * 86400, 10**30):
        token = issuer.token("alice", ["reader"], expires_in=expires_in)
        call = jwt_suite.retrieval.Search(
            retrieval_pb2.SearchRequest(query="lidar"), metadata=bearer(token), timeout=10
        )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "longer than" in refused.value.details()


async def test_a_token_without_a_known_role_is_permission_denied(jwt_suite, pki):
    nobody = bearer(pki["issuer"].token("mallory", ["superuser"]))
    call = jwt_suite.retrieval.Search(retrieval_pb2.SearchRequest(query="lidar"), metadata=nobody, timeout=10)
    assert await _code(call) == grpc.StatusCode.PERMISSION_DENIED


async def test_a_reader_gets_a_cited_answer_the_agent_searched_for_as_that_reader(jwt_suite, pki):
    alice = bearer(pki["issuer"].token("alice", ["reader"]))
    reply = await jwt_suite.agent.Ask(agent_pb2.AskRequest(query=QUESTION), metadata=alice, timeout=60)
    assert reply.response.sources and reply.response.sources[0].source_url.startswith(
        "https://robots.example/"
    )


async def test_a_reader_reaches_only_their_own_sessions(jwt_suite, pki):
    agent, issuer = jwt_suite.agent, pki["issuer"]
    alice, bob = bearer(issuer.token("alice", ["reader"])), bearer(issuer.token("bob", ["reader"]))
    started = await agent.Ask(agent_pb2.AskRequest(query=QUESTION), metadata=alice, timeout=60)
    session_id = started.response.session_id
    mine = await agent.ListSessions(agent_pb2.ListSessionsRequest(), metadata=alice)
    assert session_id in [s.session_id for s in mine.sessions]
    assert all(s.user_id == "alice" for s in mine.sessions)

    as_bob = agent.GetSession(agent_pb2.GetSessionRequest(session_id=session_id), metadata=bob)
    assert await _code(as_bob) == grpc.StatusCode.NOT_FOUND
    claiming_alice = [
        agent.GetSession(agent_pb2.GetSessionRequest(session_id=session_id, user_id="alice"), metadata=bob),
        agent.ListSessions(agent_pb2.ListSessionsRequest(user_id="alice"), metadata=bob),
        agent.EndSession(agent_pb2.EndSessionRequest(session_id=session_id, user_id="alice"), metadata=bob),
        agent.Ask(agent_pb2.AskRequest(query=QUESTION, session_id=session_id, user_id="alice"), metadata=bob),
    ]
    for call in claiming_alice:
        assert await _code(call) == grpc.StatusCode.PERMISSION_DENIED
    bobs = await agent.ListSessions(agent_pb2.ListSessionsRequest(), metadata=bob)
    assert session_id not in [s.session_id for s in bobs.sessions]

    # An admin (a gateway) acts for alice through the user header.
    gateway = bearer(issuer.token("gateway", ["admin"]), user="alice")
    seen = await agent.GetSession(agent_pb2.GetSessionRequest(session_id=session_id), metadata=gateway)
    assert seen.session.user_id == "alice" and seen.session.turns


async def test_a_plaintext_client_cannot_talk_to_a_tls_server(jwt_suite, pki):
    token = bearer(pki["issuer"].token("alice", ["reader"]))
    async with make_channel(f"127.0.0.1:{jwt_suite.servers['retrieval'].port}") as channel:
        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Search(
            retrieval_pb2.SearchRequest(query="lidar"), metadata=token, timeout=5
        )
        assert await _code(call) == grpc.StatusCode.UNAVAILABLE


@pytest.mark.parametrize(
    "client",
    [
        lambda pki: _client_tls(pki["ca"], pki["foreign_client"]),  # a certificate from another CA
        lambda pki: _client_tls(pki["ca"]),  # no client certificate under mTLS
        lambda pki: _client_tls(pki["other_ca"], pki["client"]),  # does not trust the server's CA
    ],
    ids=["client-cert-from-another-ca", "no-client-cert", "server-cert-not-trusted"],
)
async def test_tls_handshakes_that_must_fail_do(jwt_suite, pki, client):
    token = bearer(pki["issuer"].token("alice", ["reader"]))
    security = ChannelSecurity(tls=client(pki))
    async with make_channel(f"127.0.0.1:{jwt_suite.servers['retrieval'].port}", security=security) as channel:
        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Search(
            retrieval_pb2.SearchRequest(query="lidar"), metadata=token, timeout=5
        )
        assert await _code(call) == grpc.StatusCode.UNAVAILABLE


# The CLI: token and certificates from the environment.


async def test_the_cli_sends_the_service_token_from_the_environment(token_suite, monkeypatch, capsys):
    target = f"127.0.0.1:{token_suite.servers['retrieval'].port}"
    monkeypatch.delenv("GLOSSATOR_AUTH_TOKEN", raising=False)
    assert await run_cli(["search", "lidar", "--retrieval", target]) == exit_codes.DENIED
    assert "set GLOSSATOR_AUTH_TOKEN" in capsys.readouterr().err
    monkeypatch.setenv("GLOSSATOR_AUTH_TOKEN", SERVICE_TOKEN)
    assert await run_cli(["search", "lidar", "--retrieval", target]) == 0
    assert "robots.example/lidar" in capsys.readouterr().out


async def test_the_cli_speaks_mtls_and_a_reader_token_cannot_ingest(jwt_suite, pki, monkeypatch, capsys):
    client = pki["client"]
    monkeypatch.setenv("GLOSSATOR_TLS_CA_FILE", str(pki["ca"].ca_file))
    monkeypatch.setenv("GLOSSATOR_TLS_CERT_FILE", str(client.cert_file))
    monkeypatch.setenv("GLOSSATOR_TLS_KEY_FILE", str(client.key_file))
    monkeypatch.setenv("GLOSSATOR_AUTH_TOKEN", pki["issuer"].token("alice", ["reader"]))
    target = f"127.0.0.1:{jwt_suite.servers['retrieval'].port}"
    assert await run_cli(["search", "lidar", "--retrieval", target]) == 0
    assert "robots.example/lidar" in capsys.readouterr().out
    pages = str(jwt_suite.data_dir / "pages")
    assert await run_cli(["ingest", pages, "--quiet", "--retrieval", target]) == exit_codes.DENIED
    err = capsys.readouterr().err
    assert "PERMISSION_DENIED" not in err and "need an admin token" in err


# The embedded default stays open on loopback, and says so loudly anywhere else.


async def test_binding_a_network_address_with_auth_off_logs_a_warning(tmp_path):
    with capture_logs() as logs:
        server, _ = await build_validation(
            ValidationSettings(host="0.0.0.0", port=0, data_dir=tmp_path, auth=AuthSettings())
        )
    await server.stop(grace=0)
    warnings = [entry for entry in logs if entry["event"] == "auth_off_on_network"]
    assert warnings and warnings[0]["log_level"] == "warning"
    assert "GLOSSATOR_AUTH_TOKEN" in warnings[0]["advice"]


async def test_jwts_without_an_audience_to_check_log_a_warning(tmp_path, pki):
    auth = AuthSettings(jwks_file=pki["issuer"].jwks_file, issuer=ISSUER)
    with capture_logs() as logs:
        server, _ = await build_validation(ValidationSettings(port=0, data_dir=tmp_path, auth=auth))
    await server.stop(grace=0)
    unchecked = [entry for entry in logs if entry["event"] == "jwt_audience_unchecked"]
    assert unchecked and unchecked[0]["log_level"] == "warning"
    assert "GLOSSATOR_AUTH_AUDIENCE" in unchecked[0]["advice"]
    with capture_logs() as logs:
        auth = AuthSettings(jwks_file=pki["issuer"].jwks_file, issuer=ISSUER, audience=AUDIENCE)
        server, _ = await build_validation(ValidationSettings(port=0, data_dir=tmp_path, auth=auth))
    await server.stop(grace=0)
    assert not [entry for entry in logs if entry["event"] == "jwt_audience_unchecked"]


async def test_loopback_with_auth_off_is_quiet(tmp_path):
    with capture_logs() as logs:
        server, _ = await build_validation(
            ValidationSettings(host="127.0.0.1", port=0, data_dir=tmp_path, auth=AuthSettings())
        )
    await server.stop(grace=0)
    assert not [entry for entry in logs if entry["event"] == "auth_off_on_network"]
