"""GetCoverageReport and `glossator report` through a suite of their own: what readers asked, what
the book declined, what they rated down."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from glossator.v1 import agent_pb2, retrieval_pb2
from services.commands import exit_codes
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.wire import timestamp
from services.retrieval.ingest import read_folder
from tests.conftest import running_suite, suite_settings
from tests.grpc_helpers import field_violations
from tests.integration.test_cli import run_cli
from tests.integration.test_retrieval import BASE_URL, ROOT

OFF_TOPIC = "Who won the football world cup in 1998?"


@pytest.fixture(scope="module")
async def asked(tmp_path_factory):
    """A suite whose readers asked a few questions, one of them three ways, one off the book, and
    rated one answer down; yields (suite, the responses)."""
    async with running_suite(suite_settings(tmp_path_factory.mktemp("coverage"))) as suite:
        options = retrieval_pb2.IngestOptions(base_url=BASE_URL)
        async for _ in ingest(
            suite.retrieval, ingest_requests(options, async_iter(read_folder(ROOT / "docs")))
        ):
            pass
        responses = []
        for query in ("What is a collection?", "what is a  collection", "What is a collection", OFF_TOPIC):
            reply = await suite.agent.Ask(
                agent_pb2.AskRequest(
                    query=query, user_id="reader", user_context={"page_url": f"{BASE_URL}intro"}
                ),
                timeout=60,
            )
            responses.append(reply.response)
        first = responses[0]
        await suite.agent.SubmitFeedback(
            agent_pb2.SubmitFeedbackRequest(
                session_id=first.session_id,
                query_id=first.query_id,
                user_id="reader",
                rating=agent_pb2.RATING_DOWN,
                comment="it does not say how to make one",
            )
        )
        yield suite, responses


async def test_the_report_counts_questions_groups_rewordings_and_lists_declined_and_rated_down(asked):
    suite, responses = asked
    assert responses[-1].not_covered  # the book has nothing on football
    reply = await suite.agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest())
    [book] = reply.collections
    assert (book.collection, book.questions, book.not_covered, book.rated_down) == ("default", 4, 1, 1)
    assert [(q.query, q.count) for q in book.most_asked] == [("What is a collection?", 3), (OFF_TOPIC, 1)]
    [declined] = book.declined
    assert (declined.query, declined.query_id, declined.page_url) == (
        OFF_TOPIC,
        responses[-1].query_id,
        f"{BASE_URL}intro",
    )
    [rated] = book.rated_down_answers
    assert (rated.query_id, rated.feedback.comment) == (
        responses[0].query_id,
        "it does not say how to make one",
    )
    assert rated.answer == responses[0].answer and rated.grounding == responses[0].grounding
    assert book.replaced == sum(r.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED for r in responses)
    assert reply.generated_at.ToDatetime(UTC) - reply.since.ToDatetime(UTC) == timedelta(days=7)


async def test_the_window_and_the_collection_narrow_the_report(asked):
    suite, _ = asked
    later = await suite.agent.GetCoverageReport(
        agent_pb2.GetCoverageReportRequest(since=timestamp(datetime.now(UTC)))
    )
    assert list(later.collections) == []
    other = await suite.agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest(collection="other-book"))
    assert list(other.collections) == []
    one = await suite.agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest(limit=1))
    assert len(one.collections[0].most_asked) == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"since": timestamp(datetime.now(UTC) + timedelta(days=1))}, "since"),
        ({"limit": 101}, "limit"),
        ({"collection": "../etc"}, "collection"),
    ],
)
async def test_a_bad_report_request_is_invalid_argument(asked, fields, field):
    suite, _ = asked
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await suite.agent.GetCoverageReport(agent_pb2.GetCoverageReportRequest(**fields))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in field_violations(caught.value)


async def test_glossator_report_prints_a_table_and_json(asked, capsys):
    suite, responses = asked
    target = f"127.0.0.1:{suite.servers['agent'].port}"
    assert await run_cli(["report", "--agent", target, "--since", "1h"]) == exit_codes.OK
    table = capsys.readouterr().out
    assert "== default: 4 questions · 1 not covered · 1 rated down" in table
    assert "     3  What is a collection?" in table
    assert "comment: it does not say how to make one" in table and OFF_TOPIC in table
    assert await run_cli(["report", "--agent", target, "--json"]) == exit_codes.OK
    report = json.loads(capsys.readouterr().out)
    assert report["collections"][0]["declined"][0]["queryId"] == responses[-1].query_id
    with pytest.raises(SystemExit) as exit_info:
        await run_cli(["report", "--agent", target, "--since", "yesterday"])
    assert exit_info.value.code == exit_codes.USAGE
    assert "'yesterday' is neither 30m / 12h / 7d / 2w nor an ISO date" in capsys.readouterr().err
