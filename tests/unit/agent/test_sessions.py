"""The session store contract, run against every backend (see conftest.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from datetime import UTC, timedelta
from itertools import chain

import pytest

from services.agent.sessions import (
    Feedback,
    Rating,
    Session,
    SessionConfig,
    SessionState,
    SessionStore,
    SweepResult,
    Turn,
)
from services.agent.sessions.lifecycle import quota_key
from services.common.errors import FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from tests.unit.agent.session_helpers import FakeClock, make_turn


async def all_pages(store: SessionStore, user_id: str, page_size: int, **options) -> list[list[str]]:
    pages, token = [], ""
    while True:
        sessions, token = await store.list(user_id, page_size, token, **options)
        pages.append([s.session_id for s in sessions])
        if not token:
            return pages


async def test_create_then_get_returns_every_turn_field(store: SessionStore, clock: FakeClock) -> None:
    created = await store.create("alice", "book")
    assert uuid.UUID(created.session_id).version == 4
    assert (created.user_id, created.collection, created.state, created.turn_count) == (
        "alice",
        "book",
        SessionState.CREATED,
        0,
    )
    assert created.created_at == created.last_active_at == clock.now
    assert created.created_at.tzinfo is UTC

    turn = make_turn(1, clock)
    clock.advance(seconds=3)
    appended = await store.append_turn(created.session_id, "alice", turn)
    assert appended.state is SessionState.ACTIVE
    assert appended.last_active_at == clock.now

    got = await store.get(created.session_id, "alice")
    assert got.turns == [turn]
    assert (got.turn_count, got.created_at, got.last_active_at) == (1, created.created_at, clock.now)
    assert (await store.get(created.session_id, "alice", with_turns=False)).turns == []


async def test_another_users_session_is_not_found_exactly_like_a_missing_one(store: SessionStore) -> None:
    mine = await store.create("alice", "book")
    theirs = await store.create("bob", "book")
    missing = str(uuid.uuid4())

    with pytest.raises(NotFound) as foreign:
        await store.get(mine.session_id, "bob")
    with pytest.raises(NotFound) as absent:
        await store.get(missing, "bob")
    assert foreign.value.message.replace(mine.session_id, "ID") == absent.value.message.replace(missing, "ID")

    turn = make_turn(1, FakeClock())
    for attempt in (
        store.append_turn(mine.session_id, "bob", turn),
        store.end(mine.session_id, "bob"),
        store.history(mine.session_id, "bob"),
    ):
        with pytest.raises(NotFound):
            await attempt
    untouched = await store.get(mine.session_id, "alice")
    assert (untouched.state, untouched.turn_count) == (SessionState.CREATED, 0)

    assert [s.session_id for s in (await store.list("bob", include_ended=True))[0]] == [theirs.session_id]
    assert [s.session_id for s in (await store.list("alice", include_ended=True))[0]] == [mine.session_id]
    assert await store.list("carol") == ([], "")


async def test_state_follows_idle_time(store: SessionStore, clock: FakeClock) -> None:
    session_id = (await store.create("alice", "book")).session_id

    async def state() -> SessionState:
        return (await store.get(session_id, "alice", with_turns=False)).state

    clock.advance(minutes=31)
    assert await state() is SessionState.CREATED  # no turn yet: stays CREATED until it expires
    await store.append_turn(session_id, "alice", make_turn(1, clock))
    assert await state() is SessionState.ACTIVE
    clock.advance(minutes=30)
    assert await state() is SessionState.ACTIVE
    clock.advance(seconds=1)
    assert await state() is SessionState.INACTIVE
    listed, _ = await store.list("alice")
    assert [s.state for s in listed] == [SessionState.INACTIVE]

    reactivated = await store.append_turn(session_id, "alice", make_turn(2, clock))
    assert reactivated.state is SessionState.ACTIVE

    clock.advance(hours=24, seconds=1)
    assert await state() is SessionState.EXPIRED
    with pytest.raises(FailedPrecondition, match="expired"):
        await store.append_turn(session_id, "alice", make_turn(3, clock))
    assert [t.query_id for t in await store.history(session_id, "alice")] == ["q1", "q2"]
    assert await store.list("alice") == ([], "")
    listed, _ = await store.list("alice", include_ended=True)
    assert [(s.session_id, s.state) for s in listed] == [(session_id, SessionState.EXPIRED)]


async def test_a_session_without_turns_expires(store: SessionStore, clock: FakeClock) -> None:
    session_id = (await store.create("alice", "book")).session_id
    clock.advance(hours=24, seconds=1)
    assert (await store.get(session_id, "alice")).state is SessionState.EXPIRED
    with pytest.raises(FailedPrecondition):
        await store.append_turn(session_id, "alice", make_turn(1, clock))


async def test_idle_times_come_from_the_config(open_store, clock: FakeClock) -> None:
    store = await open_store(
        SessionConfig(inactive_after=timedelta(minutes=1), expire_after=timedelta(hours=1))
    )
    session_id = (await store.create("alice", "book")).session_id
    await store.append_turn(session_id, "alice", make_turn(1, clock))
    clock.advance(minutes=2)
    assert (await store.get(session_id, "alice")).state is SessionState.INACTIVE
    clock.advance(hours=1)
    assert (await store.get(session_id, "alice")).state is SessionState.EXPIRED


async def test_end_terminates_and_leaves_the_session_read_only(store: SessionStore, clock: FakeClock) -> None:
    session_id = (await store.create("alice", "book")).session_id
    await store.append_turn(session_id, "alice", make_turn(1, clock))
    clock.advance(minutes=5)

    ended = await store.end(session_id, "alice")
    assert ended.state is SessionState.TERMINATED
    clock.advance(minutes=5)
    assert await store.end(session_id, "alice") == ended  # idempotent
    with pytest.raises(FailedPrecondition, match="terminated"):
        await store.append_turn(session_id, "alice", make_turn(2, clock))
    got = await store.get(session_id, "alice")
    assert (got.state, [t.query_id for t in got.turns]) == (SessionState.TERMINATED, ["q1"])

    expired_id = (await store.create("alice", "book")).session_id
    clock.advance(hours=25)
    assert (await store.end(expired_id, "alice")).state is SessionState.TERMINATED


async def test_history_keeps_the_newest_max_turns_with_their_tool_calls(open_store, clock: FakeClock) -> None:
    store = await open_store(SessionConfig(max_turns=3))
    session_id = (await store.create("alice", "book")).session_id
    turns = [make_turn(n, clock) for n in range(1, 6)]
    for turn in turns:
        await store.append_turn(session_id, "alice", turn)

    got = await store.get(session_id, "alice")
    assert got.turn_count == 5
    assert got.turns == turns[2:]
    assert got.turns[-1].tool_calls[0].name == "retrieval_tool"
    assert await store.history(session_id, "alice") == turns[2:]
    assert await store.history(session_id, "alice", limit=2) == turns[3:]
    assert await store.history(session_id, "alice", limit=10) == turns[2:]
    assert await store.history(session_id, "alice", limit=0) == []
    with pytest.raises(InvalidArgument):
        await store.history(session_id, "alice", limit=-1)


async def test_list_pages_most_recently_active_first(store: SessionStore, clock: FakeClock) -> None:
    ids = []
    for _ in range(5):
        ids.append((await store.create("alice", "book")).session_id)
        clock.advance(minutes=1)
    await store.append_turn(ids[0], "alice", make_turn(1, clock))  # the oldest becomes the newest
    await store.create("bob", "book")

    assert await all_pages(store, "alice", 2) == [[ids[0], ids[4]], [ids[3], ids[2]], [ids[1]]]
    sessions, token = await store.list("alice")
    assert (len(sessions), token, sessions[0].turns) == (5, "", [])

    await store.end(ids[3], "alice")
    assert await all_pages(store, "alice", 2) == [[ids[0], ids[4]], [ids[2], ids[1]]]
    assert ids[3] in chain.from_iterable(await all_pages(store, "alice", 2, include_ended=True))


async def test_list_pages_through_sessions_active_at_the_same_instant(store: SessionStore) -> None:
    ids = [(await store.create("alice", "book")).session_id for _ in range(7)]
    pages = await all_pages(store, "alice", 3)
    assert [len(page) for page in pages] == [3, 3, 1]
    assert list(chain.from_iterable(pages)) == sorted(ids, reverse=True)


def unsigned_token(*position: object) -> str:
    """A token as the first version wrote them: base64url of the JSON position, nothing to check it."""
    return base64.urlsafe_b64encode(json.dumps(list(position)).encode()).decode()


def flipped(token: str, at: int) -> str:
    """The token with one base64url character changed."""
    return token[:at] + ("A" if token[at] != "A" else "B") + token[at + 1 :]


async def test_list_rejects_bad_paging(store: SessionStore) -> None:
    with pytest.raises(InvalidArgument) as error:
        await store.list("alice", page_size=101)
    assert [v.field for v in error.value.violations] == ["page_size"]
    for _ in range(2):
        await store.create("alice", "book")
    _, token = await store.list("alice", page_size=1)
    session_id = str(uuid.uuid4())
    forged = (
        "not a token",
        "WzEsMiwzXQ==",
        "bnVsbA==",
        unsigned_token(10**30, session_id),  # was an OverflowError in SQLite: INTERNAL
        unsigned_token(-1, session_id),
        unsigned_token(1_700_000_000_000_000, session_id),  # in range, but not signed
        flipped(token, 3),  # in the signature
        flipped(token, len(token) - 5),  # in the position
        token + "A",
        token + "=",
        "A" * 10_000,
    )
    for bad in forged:
        with pytest.raises(InvalidArgument) as error:
            await store.list("alice", page_token=bad)
        assert [v.field for v in error.value.violations] == ["page_token"], bad
    with pytest.raises(InvalidArgument) as error:
        await store.list("bob", page_token=token)  # alice's token, not good for bob's listing
    assert [v.field for v in error.value.violations] == ["page_token"]


async def test_page_tokens_stay_good_after_a_restart(open_store) -> None:
    first = await open_store()
    ids = sorted([(await first.create("alice", "book")).session_id for _ in range(3)], reverse=True)
    page, token = await first.list("alice", page_size=2)
    await first.close()

    second = await open_store()  # another replica, or the same one restarted
    rest, end = await second.list("alice", page_size=2, page_token=token)
    assert ([s.session_id for s in page + rest], end) == (ids, "")


async def open_ids(store: SessionStore, user_id: str) -> set[str]:
    return {s.session_id for s in (await store.list(user_id, page_size=100))[0] if not s.state.ended}


async def test_a_user_keeps_so_many_sessions_open_and_a_new_one_ends_the_least_recent(
    open_store, clock: FakeClock
) -> None:
    store = await open_store(SessionConfig(max_open_per_user=3))
    opened = []
    for _ in range(3):
        opened.append((await store.create("alice", "book")).session_id)
        clock.advance(seconds=1)
    await store.append_turn(opened[0], "alice", make_turn(1, clock))  # now the most recent
    fourth = (await store.create("alice", "book")).session_id
    assert await open_ids(store, "alice") == {opened[0], opened[2], fourth}
    assert (await store.get(opened[1], "alice")).state.ended, "ended, and still readable"
    await store.create("bob", "book")  # a quota per user
    assert len(await open_ids(store, "alice")) == 3

    clock.advance(hours=24, seconds=1)  # all expired, unswept: they count no more
    await store.create("alice", "book")
    assert len(await open_ids(store, "alice")) == 1


async def test_concurrent_creations_do_not_overshoot_the_quota(open_store) -> None:
    store = await open_store(SessionConfig(max_open_per_user=3))
    results = await asyncio.gather(
        *(store.create("alice", "book") for _ in range(12)), return_exceptions=True
    )
    assert all(isinstance(r, Session | ResourceExhausted) for r in results)
    # Racing starts may each end a session for room another one takes: fewer, never more.
    assert 0 < len(await open_ids(store, "alice")) <= 3


async def test_questions_starting_sessions_together_at_a_full_quota_all_get_one(open_store) -> None:
    store = await open_store(SessionConfig(max_open_per_user=100))
    for _ in range(100):
        await store.create("alice", "book")
    results = await asyncio.gather(*(store.create("alice", "book") for _ in range(8)), return_exceptions=True)
    assert all(isinstance(r, Session) for r in results), results
    assert len(await open_ids(store, "alice")) <= 100


async def test_sweep_expires_idle_sessions_and_purges_them_after_retention(
    store: SessionStore, clock: FakeClock
) -> None:
    answered = (await store.create("alice", "book")).session_id
    await store.append_turn(answered, "alice", make_turn(1, clock))
    unanswered = (await store.create("alice", "book")).session_id
    clock.advance(hours=23)
    recent = (await store.create("alice", "book")).session_id
    await store.append_turn(recent, "alice", make_turn(2, clock))
    clock.advance(hours=1, seconds=1)

    assert await store.sweep() == SweepResult(expired=2, purged=0)
    assert await store.sweep() == SweepResult(expired=0, purged=0)  # already stored as EXPIRED
    states = {sid: (await store.get(sid, "alice")).state for sid in (answered, unanswered, recent)}
    assert states == {
        answered: SessionState.EXPIRED,
        unanswered: SessionState.EXPIRED,
        recent: SessionState.INACTIVE,
    }
    assert [t.query_id for t in await store.history(answered, "alice")] == ["q1"]  # nothing deleted yet
    await store.end(recent, "alice")

    # Expired sessions are purged `retention` after they expired, terminated ones after they ended.
    clock.advance(days=30)
    assert await store.sweep() == SweepResult(expired=0, purged=2)
    for sid in (answered, unanswered):
        with pytest.raises(NotFound):
            await store.get(sid, "alice")
    assert [s.session_id for s in (await store.list("alice", include_ended=True))[0]] == [recent]
    clock.advance(seconds=1)
    assert await store.sweep() == SweepResult(expired=0, purged=1)
    assert await store.list("alice", include_ended=True) == ([], "")


async def test_finished_turns_survive_a_restart(open_store, clock: FakeClock) -> None:
    first = await open_store()
    session_id = (await first.create("alice", "book")).session_id
    turns = [make_turn(n, clock) for n in range(1, 4)]
    for turn in turns:
        await first.append_turn(session_id, "alice", turn)
    await first.close()

    second = await open_store()
    got = await second.get(session_id, "alice")
    assert (got.turns, got.turn_count, got.state) == (turns, 3, SessionState.ACTIVE)
    assert [s.session_id for s in (await second.list("alice"))[0]] == [session_id]


async def test_concurrent_appends_to_one_session_lose_no_turn(store: SessionStore, clock: FakeClock) -> None:
    session_id = (await store.create("alice", "book")).session_id
    turns = [make_turn(n, clock) for n in range(20)]
    await asyncio.gather(*(store.append_turn(session_id, "alice", turn) for turn in turns))
    got = await store.get(session_id, "alice")
    assert got.turn_count == 20
    assert sorted(t.query_id for t in got.turns) == sorted(t.query_id for t in turns)


async def test_a_failed_append_leaves_no_half_turn(store: SessionStore, clock: FakeClock) -> None:
    session_id = (await store.create("alice", "book")).session_id
    await store.append_turn(session_id, "alice", make_turn(1, clock))
    before = await store.get(session_id, "alice")
    clock.advance(minutes=1)
    unserialisable = Turn(
        query_id="q2", query="?", answer="!", created_at=clock(), user_context={"x": object()}
    )
    with pytest.raises(TypeError):
        await store.append_turn(session_id, "alice", unserialisable)
    assert await store.get(session_id, "alice") == before


def stored_size(*turns: Turn) -> int:
    return sum(len(turn.to_json().encode()) for turn in turns)


async def test_each_quota_key_keeps_at_most_its_bytes_and_only_it_is_refused(
    open_store, clock: FakeClock
) -> None:
    turns = [make_turn(n, clock) for n in range(1, 6)]
    store = await open_store(SessionConfig(max_turns=2, max_stored_bytes_per_user=stored_size(*turns[:4])))
    first = (await store.create("alice", "book")).session_id
    for turn in turns[:3]:
        await store.append_turn(first, "alice", turn)
    # Turns past the history cap no longer count: the two kept ones do.
    assert await store._stored_bytes("user:alice") == stored_size(*turns[1:3])
    rated = await store.rate(
        first, "alice", "q3", Feedback(rating=Rating.DOWN, comment="é" * 50, submitted_at=clock())
    )
    assert rated[1] is None
    kept = (await store.get(first, "alice")).turns
    assert await store._stored_bytes("user:alice") == stored_size(*kept)

    second = (await store.create("alice", "book")).session_id
    await store.append_turn(second, "alice", turns[3])
    await store.append_turn(second, "alice", turns[4])  # the one that reaches the quota is kept
    with pytest.raises(ResourceExhausted) as full:
        await store.append_turn(second, "alice", make_turn(6, clock))
    assert full.value.reason == "SESSION_STORAGE_FULL" and not full.value.retryable
    assert "quota" in full.value.message
    with pytest.raises(ResourceExhausted):
        await store.create("alice", "book")
    assert (await store.get(second, "alice")).turn_count == 2, "nothing of the refused turn stored"

    # Nobody else is refused: another user, and anonymous callers each by their own key.
    bob = (await store.create("bob", "book")).session_id
    await store.append_turn(bob, "bob", make_turn(7, clock))
    for caller in ("address:192.0.2.1", "address:192.0.2.2"):
        anonymous = await store.create("anonymous", "book", quota_key("anonymous", caller))
        await store.append_turn(anonymous.session_id, "anonymous", make_turn(8, clock))
        assert await store._stored_bytes(quota_key("anonymous", caller)) == stored_size(make_turn(8, clock))

    # Room comes back when ended sessions pass retention.
    await store.end(first, "alice")
    await store.end(second, "alice")
    clock.advance(days=31)
    await store.sweep()
    await store.check_room("user:alice")
    assert await store._stored_bytes("user:alice") == 0


async def test_anonymous_callers_roll_over_only_their_own_sessions(open_store, clock: FakeClock) -> None:
    store = await open_store(SessionConfig(max_open_per_user=2))
    alice_key, mallory_key = (
        quota_key("anonymous", "address:192.0.2.1"),
        quota_key("anonymous", "address:192.0.2.66"),
    )
    alices = (await store.create("anonymous", "book", alice_key)).session_id
    mallorys = []
    for _ in range(5):
        clock.advance(seconds=1)
        mallorys.append((await store.create("anonymous", "book", mallory_key)).session_id)
    assert not (await store.get(alices, "anonymous")).state.ended
    states = [(await store.get(session_id, "anonymous")).state.ended for session_id in mallorys]
    assert states == [True, True, True, False, False]


async def test_a_session_ended_but_still_listed_open_never_locks_its_caller_out(
    open_store, clock: FakeClock
) -> None:
    """An index entry that outlived its session's ending (written by an earlier version, or left
    by a record Redis forgot) counted against the caller's open sessions for good: every new
    session was refused RESOURCE_EXHAUSTED until the index expired a day later."""
    store = await open_store(SessionConfig(max_open_per_user=1))
    key = quota_key("anonymous", "address:192.0.2.7")
    stale = (await store.create("anonymous", "book", key)).session_id
    await store._update(stale, lambda record: store.lifecycle.after_end(record, clock()))
    if hasattr(store, "_open_by_quota_key"):  # Redis keeps the index apart: put the stale entry back
        await store._redis.zadd(store._open_by_quota_key(key), {stale: 10**18})
    clock.advance(seconds=1)
    fresh = await store.create("anonymous", "book", key)
    assert not (await store.get(fresh.session_id, "anonymous")).state.ended
