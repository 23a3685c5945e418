"""Stopping a check early: once its call's deadline has passed, or once its caller has gone."""

from __future__ import annotations

import pytest

from services.common.errors import DeadlineExceeded
from services.validation.grounding import EMBED_BATCH, ContextChunk, OfflineChecker
from services.validation.grounding_config import GroundingConfig
from services.validation.stopping import CheckAbandoned, StopSignal

# Thirty chunks whose sentences all share words with ANSWER, a direct answer with every word in
# each chunk's last sentence but not in its order: it is compared by embedding with the best
# passages of every chunk, so about a hundred sentences to embed.
CONTEXT = [
    ContextChunk(
        f"h{i}",
        f"The harbour {i} was built of stone. Its keeper {i} lived by the harbour. "
        f"Boats landed herring at harbour {i}.",
    )
    for i in range(30)
]
ANSWER = "Herring landed boats at the harbour."


async def test_a_check_past_its_deadline_raises_deadline_exceeded_before_any_work(checker, counting_model):
    with pytest.raises(DeadlineExceeded):
        await checker.check("", ANSWER, CONTEXT, [], None, stop=StopSignal(seconds_left=0))
    assert counting_model.calls == []


def test_an_abandoned_check_stops_before_the_next_embedding_batch(counting_model):
    stop = StopSignal()

    class AbandonedDuringTheFirstBatch:
        def embed(self, texts):
            stop.abandon()
            return counting_model.embed(texts)

    checker = OfflineChecker(GroundingConfig(), AbandonedDuringTheFirstBatch())
    with pytest.raises(CheckAbandoned):
        checker.check_now("", ANSWER, CONTEXT, [], None, stop)
    assert [len(texts) for texts in counting_model.calls] == [EMBED_BATCH]


async def test_without_a_stop_signal_the_same_check_runs_to_the_end(checker, counting_model):
    result = await checker.check("", ANSWER, CONTEXT, [], None)
    assert result.is_grounded
    assert sum(len(texts) for texts in counting_model.calls) > EMBED_BATCH
