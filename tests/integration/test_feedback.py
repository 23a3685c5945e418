"""SubmitFeedback through the real suite: a reader rates an answer, and the rating is kept with its turn."""

from __future__ import annotations

import uuid

import grpc
import pytest
from prometheus_client import REGISTRY

from glossator.v1 import agent_pb2
from tests.grpc_helpers import field_violations

QUESTION = "What is a collection?"


def ratings_counted(rating: str, replaced: str) -> float:
    value = REGISTRY.get_sample_value(
        "glossator_feedback_total", {"collection": "default", "rating": rating, "replaced": replaced}
    )
    return value or 0.0


async def _answer(book, **fields) -> agent_pb2.Response:
    return (await book.agent.Ask(agent_pb2.AskRequest(query=QUESTION, **fields), timeout=60)).response


async def test_an_anonymous_reader_rates_an_answer_and_a_second_rating_replaces_the_first(book):
    answer = await _answer(book)
    assert answer.session_token  # anonymous: the token is the proof of access
    down_before, up_replacing_before = ratings_counted("down", "false"), ratings_counted("up", "true")
    ref = {
        "session_id": answer.session_id,
        "query_id": answer.query_id,
        "session_token": answer.session_token,
    }

    first = await book.agent.SubmitFeedback(
        agent_pb2.SubmitFeedbackRequest(
            **ref, rating=agent_pb2.RATING_DOWN, comment="  Misses the API part. "
        )
    )
    assert (first.session_id, first.query_id, first.replaced) == (answer.session_id, answer.query_id, False)
    assert (first.feedback.rating, first.feedback.comment) == (agent_pb2.RATING_DOWN, "Misses the API part.")
    second = await book.agent.SubmitFeedback(
        agent_pb2.SubmitFeedbackRequest(**ref, rating=agent_pb2.RATING_UP)
    )
    assert second.replaced and second.feedback.comment == ""

    session = (
        await book.agent.GetSession(
            agent_pb2.GetSessionRequest(session_id=answer.session_id, session_token=answer.session_token)
        )
    ).session
    [turn] = session.turns
    assert turn.query_id == answer.query_id
    assert (turn.feedback.rating, turn.feedback.comment) == (agent_pb2.RATING_UP, "")
    assert turn.feedback.submitted_at.ToDatetime() >= first.feedback.submitted_at.ToDatetime()
    # The turn also keeps how validation judged the answer.
    assert turn.grounding == answer.grounding and turn.not_covered == answer.not_covered
    assert ratings_counted("down", "false") == down_before + 1
    assert ratings_counted("up", "true") == up_replacing_before + 1


async def test_only_the_sessions_owner_may_rate_and_only_its_own_answers(book):
    owned = await _answer(book, user_id="carol")
    anonymous = await _answer(book)
    up = agent_pb2.RATING_UP
    cases = {
        "another user": dict(session_id=owned.session_id, query_id=owned.query_id, user_id="mallory"),
        "anonymous caller of an owned session": dict(
            session_id=owned.session_id, query_id=owned.query_id, session_token=anonymous.session_token
        ),
        "a query of another session": dict(
            session_id=owned.session_id, query_id=anonymous.query_id, user_id="carol"
        ),
        "an unknown session": dict(session_id=str(uuid.uuid4()), query_id=owned.query_id, user_id="carol"),
        "a wrong session token": dict(
            session_id=anonymous.session_id, query_id=anonymous.query_id, session_token=owned.session_id
        ),
    }
    for name, fields in cases.items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await book.agent.SubmitFeedback(agent_pb2.SubmitFeedbackRequest(**fields, rating=up))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND, name

    session = await book.agent.GetSession(
        agent_pb2.GetSessionRequest(session_id=owned.session_id, user_id="carol")
    )
    assert not session.session.turns[0].HasField("feedback")


@pytest.mark.parametrize(
    ("fields", "bad"),
    [
        ({"rating": agent_pb2.RATING_UP, "query_id": "q"}, {"session_id", "query_id"}),
        (
            {"session_id": "nope", "query_id": str(uuid.uuid4()), "rating": agent_pb2.RATING_UP},
            {"session_id"},
        ),
        ({"session_id": str(uuid.uuid4()), "rating": agent_pb2.RATING_DOWN}, {"query_id"}),
        ({"session_id": str(uuid.uuid4()), "query_id": str(uuid.uuid4())}, {"rating"}),
        ({"session_id": str(uuid.uuid4()), "query_id": str(uuid.uuid4()), "rating": 7}, {"rating"}),
        (
            {
                "session_id": str(uuid.uuid4()),
                "query_id": str(uuid.uuid4()),
                "rating": 1,
                "comment": "x" * 1001,
            },
            {"comment"},
        ),
    ],
    ids=["no-session", "session-not-uuid", "no-query", "no-rating", "unknown-rating", "long-comment"],
)
async def test_bad_feedback_is_invalid_argument_naming_each_field(book, fields, bad):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await book.agent.SubmitFeedback(agent_pb2.SubmitFeedbackRequest(**fields, user_id="carol"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(field_violations(caught.value)) == bad


async def test_an_anonymous_session_needs_its_token(book):
    answer = await _answer(book)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await book.agent.SubmitFeedback(
            agent_pb2.SubmitFeedbackRequest(
                session_id=answer.session_id, query_id=answer.query_id, rating=agent_pb2.RATING_UP
            )
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert set(field_violations(caught.value)) == {"session_token"}
