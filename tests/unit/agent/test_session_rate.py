"""Questions per minute per session, run against every session backend (see conftest.py); with
Redis every replica spends from the same bucket."""

from __future__ import annotations

import pytest

from services.agent.sessions import SessionConfig
from services.common.errors import ResourceExhausted
from tests.unit.agent.session_helpers import FakeClock


async def test_a_session_gets_a_minutes_worth_then_one_question_per_interval(
    open_store, clock: FakeClock
) -> None:
    store = await open_store(SessionConfig(questions_per_minute=3))
    for _ in range(3):
        await store.take_question("s1")
    with pytest.raises(ResourceExhausted) as refused:
        await store.take_question("s1")
    assert (refused.value.message, refused.value.retry_after_seconds) == (
        "more than 3 questions in one session a minute: try again in 20 s",
        20,
    )
    await store.take_question("s2")  # another session has its own
    clock.advance(seconds=15)
    with pytest.raises(ResourceExhausted) as refused:
        await store.take_question("s1")
    assert refused.value.retry_after_seconds == 5
    clock.advance(seconds=5)
    await store.take_question("s1")


async def test_no_limit_when_not_configured(store) -> None:
    for _ in range(200):
        await store.take_question("s1")


@pytest.mark.redis
async def test_replicas_sharing_redis_share_each_sessions_budget(redis_prefix, clock: FakeClock) -> None:
    from services.agent.sessions import RedisSessionStore
    from tests.unit.agent.session_helpers import REDIS_URL

    config = SessionConfig(questions_per_minute=2)
    first, second = [
        await RedisSessionStore.open(REDIS_URL, config, key_prefix=redis_prefix, clock=clock) for _ in "ab"
    ]
    try:
        await first.take_question("s1")
        await second.take_question("s1")
        with pytest.raises(ResourceExhausted):
            await first.take_question("s1")
        with pytest.raises(ResourceExhausted):
            await second.take_question("s1")
    finally:
        await first.close()
        await second.close()
