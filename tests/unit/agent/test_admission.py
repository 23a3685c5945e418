"""Admission: answers run a few at a time, and a request that cannot finish in time is refused."""

from __future__ import annotations

import asyncio
import time

import pytest

from services.agent.admission import Admission
from services.common.errors import ResourceExhausted


async def hold(admission: Admission, deadline: float, release: asyncio.Event) -> None:
    async with admission.slot(deadline):
        await release.wait()


async def test_answers_beyond_the_limit_wait_their_turn():
    admission = Admission(limit=1)
    release = asyncio.Event()
    first = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.05)
    assert not second.done(), "the second waits while the first runs"
    release.set()
    await asyncio.gather(first, second)
    assert admission.expected_seconds > 0


async def test_a_request_whose_deadline_passes_while_waiting_is_refused_before_it():
    admission = Admission(limit=1)
    release = asyncio.Event()
    first = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(ResourceExhausted, match="retry later"):
        await hold(admission, time.monotonic() + 0.5, release)
    waited = time.monotonic() - started
    assert waited < 0.5, "refused before the deadline, so that the client hears why"
    release.set()
    await first


async def test_a_request_that_cannot_fit_behind_the_running_answers_is_refused_at_once():
    admission = Admission(limit=1)
    release = asyncio.Event()
    measured = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.3)
    release.set()
    await measured  # answers take about 0.3 s now
    release.clear()
    running = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(ResourceExhausted):
        await hold(admission, time.monotonic() + 0.55, release)  # 0.3 s wait + 0.3 s answer > 0.55 s
    assert time.monotonic() - started < 0.05
    release.set()
    await running


async def test_answers_cut_short_do_not_feed_the_estimate():
    admission = Admission(limit=1)
    release = asyncio.Event()
    cut = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.2)
    cut.cancel()  # the client left, or flow control stopped it
    with pytest.raises(asyncio.CancelledError):
        await cut
    with pytest.raises(RuntimeError):
        async with admission.slot(time.monotonic() + 10):
            raise RuntimeError("the answer failed")
    assert admission.expected_seconds == 0.0


async def test_the_estimate_forgets_old_answers(monkeypatch):
    admission = Admission(limit=1)
    release = asyncio.Event()
    answer = asyncio.create_task(hold(admission, time.monotonic() + 10, release))
    await asyncio.sleep(0.1)
    release.set()
    await answer
    assert admission.expected_seconds >= 0.1
    monkeypatch.setattr("services.agent.admission._MAX_AGE_SECONDS", 0.0)
    assert admission.expected_seconds == 0.0, "an idle agent's estimate decays"
