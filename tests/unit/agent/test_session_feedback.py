"""Feedback stored with its turn, run against every session backend (see conftest.py)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest

from services.agent.sessions import Feedback, Grounding, Rating, SessionConfig, SessionStore, Turn
from services.common.errors import NotFound
from tests.unit.agent.session_helpers import FakeClock, make_turn


def feedback(rating: Rating, clock: FakeClock, comment: str = "") -> Feedback:
    return Feedback(rating=rating, comment=comment, submitted_at=clock())


async def test_a_rating_is_stored_with_its_turn_and_a_second_one_replaces_it(
    store: SessionStore, clock: FakeClock
) -> None:
    session = await store.create("alice", "book")
    for n in range(3):
        await store.append_turn(session.session_id, "alice", make_turn(n, clock))
    down = feedback(Rating.DOWN, clock, "Wrong chapter, and « café » is misspelt")
    rated, previous = await store.rate(session.session_id, "alice", "q1", down)
    assert (rated.session_id, rated.collection, previous) == (session.session_id, "book", None)

    clock.advance(minutes=1)
    up = feedback(Rating.UP, clock)
    _, previous = await store.rate(session.session_id, "alice", "q1", up)
    assert previous == down

    turns = (await store.get(session.session_id, "alice")).turns
    assert [t.feedback for t in turns] == [None, up, None]
    # Rating changes nothing else of the turn, nor the session's activity.
    assert [replace(t, feedback=None) for t in turns] == [make_turn(n, FakeClock()) for n in range(3)]
    assert (await store.get(session.session_id, "alice")).last_active_at == session.last_active_at


async def test_an_ended_session_may_still_be_rated(store: SessionStore, clock: FakeClock) -> None:
    session = await store.create("alice", "book")
    await store.append_turn(session.session_id, "alice", make_turn(0, clock))
    await store.end(session.session_id, "alice")
    await store.rate(session.session_id, "alice", "q0", feedback(Rating.DOWN, clock))
    assert (await store.get(session.session_id, "alice")).turns[0].feedback.rating is Rating.DOWN


async def test_another_users_session_or_an_unknown_query_is_not_found(
    store: SessionStore, clock: FakeClock
) -> None:
    session = await store.create("alice", "book")
    await store.append_turn(session.session_id, "alice", make_turn(0, clock))
    with pytest.raises(NotFound):
        await store.rate(session.session_id, "mallory", "q0", feedback(Rating.DOWN, clock))
    with pytest.raises(NotFound) as unknown:
        await store.rate(session.session_id, "alice", "q9", feedback(Rating.DOWN, clock))
    assert "q9" in unknown.value.message
    with pytest.raises(NotFound):
        await store.rate("00000000-0000-4000-8000-000000000000", "alice", "q0", feedback(Rating.UP, clock))
    assert (await store.get(session.session_id, "alice")).turns[0].feedback is None


async def test_a_turn_dropped_by_the_history_cap_cannot_be_rated(open_store, clock: FakeClock) -> None:
    store = await open_store(SessionConfig(max_turns=2))
    session = await store.create("alice", "book")
    for n in range(3):
        await store.append_turn(session.session_id, "alice", make_turn(n, clock))
    with pytest.raises(NotFound):
        await store.rate(session.session_id, "alice", "q0", feedback(Rating.UP, clock))
    await store.rate(session.session_id, "alice", "q2", feedback(Rating.UP, clock))


async def test_ratings_and_appends_at_once_lose_nothing(store: SessionStore, clock: FakeClock) -> None:
    session = await store.create("alice", "book")
    await store.append_turn(session.session_id, "alice", make_turn(0, clock))
    await asyncio.gather(
        *(store.append_turn(session.session_id, "alice", make_turn(n, clock)) for n in range(1, 6)),
        *(
            store.rate(session.session_id, "alice", "q0", feedback(Rating.DOWN, clock, str(i)))
            for i in range(5)
        ),
    )
    turns = (await store.get(session.session_id, "alice")).turns
    assert sorted(t.query_id for t in turns) == [f"q{n}" for n in range(6)]
    assert turns[0].feedback is not None and turns[0].feedback.comment in {str(i) for i in range(5)}


async def test_validation_summary_and_not_covered_are_kept_and_survive_a_restart(
    open_store, clock: FakeClock
) -> None:
    store = await open_store()
    session = await store.create("alice", "book")
    judged = replace(
        make_turn(0, clock),
        not_covered=True,
        grounding=Grounding(status="replaced", grounding_score=0.25, claims=4, supported_claims=1),
    )
    await store.append_turn(session.session_id, "alice", judged)
    await store.rate(session.session_id, "alice", "q0", feedback(Rating.DOWN, clock, "nothing on this"))
    await store.close()
    [turn] = (await (await open_store()).get(session.session_id, "alice")).turns
    assert turn == replace(judged, feedback=feedback(Rating.DOWN, clock, "nothing on this"))
    assert turn.grounding.replaced and not turn.grounding.flagged


def test_turns_stored_before_judgements_were_kept_read_with_defaults(clock: FakeClock) -> None:
    body = json.loads(make_turn(0, clock).to_json())
    for key in ("not_covered", "grounding", "feedback"):
        del body[key]
    turn = Turn.from_json(json.dumps(body))
    assert (turn.not_covered, turn.grounding, turn.feedback) == (False, Grounding(), None)
    assert turn == make_turn(0, clock)


async def test_turns_since_reads_every_users_kept_turns_in_the_window(
    store: SessionStore, clock: FakeClock
) -> None:
    old = await store.create("alice", "book")
    await store.append_turn(old.session_id, "alice", make_turn(0, clock))
    clock.advance(hours=2)
    since = clock()
    await store.append_turn(old.session_id, "alice", make_turn(1, clock))
    ended = await store.create("bob", "other")
    await store.append_turn(ended.session_id, "bob", make_turn(2, clock))
    await store.end(ended.session_id, "bob")
    anonymous = await store.create("anonymous", "book")
    await store.append_turn(anonymous.session_id, "anonymous", make_turn(3, clock))
    found = [
        (record.user_id, record.collection, turn.query_id) async for record, turn in store.turns_since(since)
    ]
    assert sorted(found) == [("alice", "book", "q1"), ("anonymous", "book", "q3"), ("bob", "other", "q2")]


async def test_turns_since_pages_through_many_sessions(store: SessionStore, clock: FakeClock) -> None:
    since = clock()
    for n in range(120):  # more than a page of sessions
        session = await store.create(f"user-{n % 7}", "book")
        await store.append_turn(session.session_id, f"user-{n % 7}", make_turn(n, clock))
    found = sorted([turn.query_id async for _, turn in store.turns_since(since)], key=lambda q: int(q[1:]))
    assert found == [f"q{n}" for n in range(120)]
