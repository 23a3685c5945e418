"""The query micro-batcher on the real local model: lone queries inline, concurrent ones batched."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from services.retrieval.embed import LocalEmbeddingProvider, QueryBatcher


class RecordingProvider:
    """The real local provider, noting each call's texts and the thread it ran on."""

    def __init__(self) -> None:
        self._real = LocalEmbeddingProvider()
        self.name, self.dimensions = self._real.name, self._real.dimensions
        self.calls: list[tuple[str, list[str], str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(("worker", list(texts), threading.current_thread().name))
        return self._real.embed(texts)

    def embed_if_idle(self, texts: list[str]) -> np.ndarray | None:
        vectors = self._real.embed_if_idle(texts)
        if vectors is not None:
            self.calls.append(("inline", list(texts), threading.current_thread().name))
        return vectors


@pytest.fixture(scope="module")
def provider() -> RecordingProvider:
    return RecordingProvider()


@pytest.fixture
async def batcher(provider):
    provider.calls.clear()
    batcher = QueryBatcher(provider, max_batch=4)
    yield batcher
    await batcher.close()


async def test_a_query_alone_is_embedded_on_the_event_loop_thread(batcher, provider):
    vector = await batcher.embed("how do I install the package", alone=True)
    expected = provider._real.embed(["how do I install the package"])[0]
    assert np.allclose(vector, expected, atol=1e-5)
    assert provider.calls == [("inline", ["how do I install the package"], threading.current_thread().name)]
    await batcher.embed("how do I remove the package")  # other searches in flight: a worker runs it
    assert [kind for kind, _, _ in provider.calls] == ["inline", "worker"]


async def test_concurrent_queries_share_batches_and_each_gets_its_own_vector(batcher, provider):
    texts = [f"question number {i} about sessions" for i in range(9)]
    vectors = await asyncio.gather(*(batcher.embed(t, alone=True) for t in texts))
    expected = provider._real.embed(texts)
    assert all(np.allclose(v, e, atol=1e-5) for v, e in zip(vectors, expected, strict=True))
    sizes = [len(batch) for _, batch, _ in provider.calls]
    assert sum(sizes) == 9 and max(sizes) <= 4 and len(sizes) < 9
    assert all(kind == "worker" for kind, batch, _ in provider.calls if len(batch) > 1)


async def test_a_busy_model_sends_even_a_lone_query_to_a_worker_thread(batcher, provider):
    model = provider._real._model
    held = threading.Event()
    release = threading.Event()

    def hold_the_model() -> None:
        with model._lock:  # what an ingest batch or a validation run does
            held.set()
            release.wait(5)

    holder = threading.Thread(target=hold_the_model)
    holder.start()
    held.wait(5)
    pending = asyncio.ensure_future(batcher.embed("what is a collection", alone=True))
    await asyncio.sleep(0.05)
    assert not pending.done()  # the event loop is free while the model is busy
    release.set()
    vector = await pending
    holder.join()
    assert vector.shape == (provider.dimensions,)
    assert [kind for kind, _, _ in provider.calls] == ["worker"]
