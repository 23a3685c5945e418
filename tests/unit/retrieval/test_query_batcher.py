"""The query micro-batcher on the local model: concurrent queries batched, the event loop left free."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from services.common.embedding import local_embedding_model
from services.retrieval.embed import LocalEmbeddingProvider, QueryBatcher


class RecordingProvider(LocalEmbeddingProvider):
    """The real local provider, noting the texts of each call that reaches the model."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    async def embed_async(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return await super().embed_async(texts)


@pytest.fixture(scope="module")
def provider() -> RecordingProvider:
    return RecordingProvider()


@pytest.fixture
async def batcher(provider):
    provider.calls.clear()
    batcher = QueryBatcher(provider, max_batch=4)
    yield batcher
    await batcher.close()


async def test_a_lone_query_is_embedded_at_once_and_alone(batcher, provider):
    vector = await batcher.embed("how do I install the package")
    expected = provider.embed(["how do I install the package"])[0]
    assert np.allclose(vector, expected, atol=1e-5)
    assert provider.calls == [["how do I install the package"]]


async def test_concurrent_queries_share_batches_and_each_gets_its_own_vector(batcher, provider):
    texts = [f"question number {i} about sessions" for i in range(9)]
    vectors = await asyncio.gather(*(batcher.embed(t) for t in texts))
    expected = provider.embed(texts)
    assert all(np.allclose(v, e, atol=1e-5) for v, e in zip(vectors, expected, strict=True))
    sizes = [len(batch) for batch in provider.calls]
    assert sum(sizes) == 9 and max(sizes) <= 4 and len(sizes) < 9


async def test_the_event_loop_is_free_while_the_model_is_busy(batcher, provider):
    model = local_embedding_model()
    started, release = threading.Barrier(model.workers + 1), threading.Event()

    def occupy_a_model_thread() -> None:  # what an ingest batch or a validation run does
        started.wait(5)
        release.wait(5)

    busy = [model.executor.submit(occupy_a_model_thread) for _ in range(model.workers)]
    started.wait(5)
    pending = asyncio.ensure_future(batcher.embed("what is a collection"))
    await asyncio.sleep(0.05)
    assert not pending.done()  # queued behind the model's work, while the loop runs on
    release.set()
    vector = await pending
    for job in busy:
        job.result()
    assert vector.shape == (provider.dimensions,)
