"""Public traffic is bounded: widget keys bound to origins, and questions per minute per session,
through the real suite with auth on and the real Envoy in front of it."""

from __future__ import annotations

import base64
import uuid

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.auth import AuthSettings
from services.common.clients import ChannelSecurity, make_channel
from services.retrieval.ingest import read_folder
from tests.conftest import running_suite, suite_settings
from tests.integration.test_edge import ASK, CONNECT_UNARY, PAGE, ask, edge_settings, running_edge
from tests.integration.test_retrieval import BASE_URL, ROOT

SERVICE_TOKEN = "service-token-" + uuid.uuid4().hex
WIDGET_KEY = "wk-" + uuid.uuid4().hex
OTHER_SITE = "https://other-docs.example.com"  # allowed at the edge, not bound to WIDGET_KEY
PER_SESSION = 2


@pytest.fixture(scope="module")
async def guarded(tmp_path_factory):
    """The suite with the service token and one widget key, the project's docs ingested."""
    auth = AuthSettings(token=SERVICE_TOKEN, widget_keys={WIDGET_KEY: [PAGE]})
    settings = suite_settings(
        tmp_path_factory.mktemp("guarded"),
        shared={"auth": auth},
        questions_per_minute_per_session=PER_SESSION,
    )
    async with running_suite(settings, ChannelSecurity(token=lambda: SERVICE_TOKEN)) as suite:
        options = retrieval_pb2.IngestOptions(base_url=BASE_URL)
        async for _ in ingest(
            suite.retrieval, ingest_requests(options, async_iter(read_folder(ROOT / "docs")))
        ):
            pass
        yield suite


@pytest.fixture(scope="module")
async def page_agent(guarded):
    """The agent as a page's script reaches it: no service token on the channel."""
    async with make_channel(f"127.0.0.1:{guarded.servers['agent'].port}") as channel:
        yield agent_pb2_grpc.AgentServiceStub(channel)


@pytest.fixture(scope="module")
async def edge(guarded, tmp_path_factory):
    settings = edge_settings(guarded, tmp_path_factory.mktemp("edge"))
    settings = settings.model_copy(update={"allowed_origins": [PAGE, OTHER_SITE]})
    async with running_edge(settings) as client:
        yield client


def widget(origin: str = PAGE, key: str = WIDGET_KEY) -> dict[str, str]:
    return CONNECT_UNARY | {"origin": origin, "x-glossator-widget-key": key}


async def test_a_widget_key_from_its_own_site_asks_in_an_anonymous_session(edge):
    reply = await edge.post(ASK, content=ask(), headers=widget())
    assert reply.status_code == 200, reply.text
    response = agent_pb2.AskResponse.FromString(reply.content).response
    assert response.answer and response.session_token  # anonymous: continued with its token


@pytest.mark.parametrize(
    ("headers", "code", "message"),
    [
        (widget(origin=OTHER_SITE), "permission_denied", f"may not be used from origin '{OTHER_SITE}'"),
        (widget(key="wk-" + "0" * 32), "unauthenticated", "the widget key is not valid"),
        (CONNECT_UNARY | {"origin": PAGE}, "unauthenticated", "authentication required"),
    ],
    ids=["key-from-another-site", "wrong-key", "no-key"],
)
async def test_a_widget_key_is_refused_off_its_site_and_a_wrong_or_missing_one_too(
    edge, headers, code, message
):
    reply = await edge.post(ASK, content=ask(), headers=headers)
    error = reply.json()
    assert error["code"] == code and message in error["message"]
    assert reply.headers["access-control-allow-origin"] == headers["origin"]  # the page reads why


async def test_a_widget_key_without_an_origin_is_refused_by_the_agent(page_agent):
    metadata = (("x-glossator-widget-key", WIDGET_KEY),)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await page_agent.Ask(agent_pb2.AskRequest(query="What is a collection?"), metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "without an Origin" in caught.value.details()


async def test_a_session_asking_too_fast_is_told_when_to_try_again(page_agent):
    metadata = (("x-glossator-widget-key", WIDGET_KEY), ("origin", PAGE))
    first = (
        await page_agent.Ask(agent_pb2.AskRequest(query="What is a collection?"), metadata=metadata)
    ).response
    follow_up = agent_pb2.AskRequest(
        query="And what is ingest?", session_id=first.session_id, session_token=first.session_token
    )
    for _ in range(PER_SESSION):
        await page_agent.Ask(follow_up, metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await page_agent.Ask(follow_up, metadata=metadata)
    error = caught.value
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error.details() == "more than 2 questions in one session a minute: try again in 30 s"
    trailers = dict(error.trailing_metadata())
    assert trailers["retry-after"] == "30" and trailers["grpc-retry-pushback-ms"] == "30000"
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    retry = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(retry) and retry.retry_delay.seconds == 30
    # Another session is not held back.
    assert (
        await page_agent.Ask(agent_pb2.AskRequest(query="What is ingest?"), metadata=metadata)
    ).response.answer


async def test_the_session_limit_reaches_the_page_through_the_edge(edge):
    first = agent_pb2.AskResponse.FromString(
        (await edge.post(ASK, content=ask(), headers=widget())).content
    ).response
    follow_up = ask("And what is ingest?", session_id=first.session_id, session_token=first.session_token)
    replies = [await edge.post(ASK, content=follow_up, headers=widget()) for _ in range(PER_SESSION + 1)]
    assert [r.status_code for r in replies] == [200] * PER_SESSION + [429]
    refused = replies[-1]
    error = refused.json()
    assert (error["code"], error["message"]) == (
        "resource_exhausted",
        "more than 2 questions in one session a minute: try again in 30 s",
    )
    # The agent's status is trailers-only: its trailers arrive as headers, which the page may read.
    assert refused.headers["retry-after"] == "30"
    assert "retry-after" in refused.headers["access-control-expose-headers"].split(",")
    retry = error_details_pb2.RetryInfo.FromString(base64.b64decode(error["details"][0]["value"] + "=="))
    assert retry.retry_delay.seconds == 30


async def test_the_coverage_report_is_for_admins_and_not_served_at_the_edge(guarded, page_agent, edge):
    metadata = (("x-glossator-widget-key", WIDGET_KEY), ("origin", PAGE))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await page_agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest(), metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    report = await guarded.agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest())  # the service token
    assert report.collections[0].questions >= 1
    reply = await edge.post(
        "/glossator.v1.AgentService/GetCoverageReport", content=b"", headers=CONNECT_UNARY | {"origin": PAGE}
    )
    assert reply.json()["code"] == "unimplemented"
