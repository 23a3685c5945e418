"""The coverage report's arithmetic, over turns made here."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from services.agent.coverage import coverage, question_key
from services.agent.sessions import Feedback, Grounding, Rating
from services.agent.sessions.lifecycle import SessionRecord
from tests.unit.agent.session_helpers import FakeClock, make_turn


async def stream(pairs):
    for pair in pairs:
        yield pair


def record(session_id: str, collection: str, clock: FakeClock) -> SessionRecord:
    return SessionRecord(
        session_id=session_id, user_id="u", collection=collection, created_at=clock(), last_active_at=clock()
    )


def test_rewordings_that_differ_in_case_spacing_or_closing_punctuation_are_one_question() -> None:
    assert (
        question_key("What is  a Collection?!")
        == question_key("what is a collection")
        == "what is a collection"
    )
    assert question_key("What is a collection?") != question_key("What is a collection used for?")


async def test_each_judgement_is_counted_and_listed_newest_first_per_collection() -> None:
    clock = FakeClock()
    base = make_turn(0, clock)
    down = Feedback(rating=Rating.DOWN, comment="wrong", submitted_at=clock())
    turns = [
        replace(base, query_id="a", query="Why?", not_covered=True),
        replace(base, query_id="b", query="why", created_at=clock() + timedelta(minutes=1), feedback=down),
        replace(base, query_id="c", grounding=Grounding(status="replaced")),
        replace(
            base,
            query_id="d",
            grounding=Grounding(status="validated", is_grounded=False),
            created_at=clock() + timedelta(minutes=2),
        ),
        replace(base, query_id="e", grounding=Grounding(status="validated", is_grounded=True)),
        replace(base, query_id="f", feedback=replace(down, rating=Rating.UP)),
    ]
    pairs = [(record("s1", "book", clock), t) for t in turns] + [(record("s2", "atlas", clock), base)]
    atlas, book = await coverage(stream(pairs))
    assert (atlas.collection, atlas.questions) == ("atlas", 1)
    assert (
        book.questions,
        book.not_covered,
        book.rated_down,
        book.rated_up,
        book.replaced,
        book.flagged,
    ) == (
        6,
        1,
        1,
        1,
        1,
        1,
    )
    assert [(q.query, q.count) for q in book.most_asked(10)] == [(base.query, 4), ("Why?", 2)]
    assert [r.turn.query_id for r in book.newest(book.replaced_or_flagged, 10)] == ["d", "c"]
    assert [r.turn.query_id for r in book.declined] == ["a"] and [
        r.turn.query_id for r in book.rated_down_answers
    ] == ["b"]
    assert book.declined[0].page_url == ""
    [only_book] = await coverage(stream(pairs), collection="book")
    assert only_book.questions == 6
