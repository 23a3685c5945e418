"""The local model and the query micro-batcher on it: encode's vectors, concurrent queries batched, one thread."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from services.common.embedding import BATCH_SIZE, local_embedding_model
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
    started, release = threading.Event(), threading.Event()

    def occupy_the_model() -> None:  # what an ingest batch or a validation run does
        started.set()
        release.wait(5)

    busy = model.executor.submit(occupy_the_model)
    started.wait(5)
    pending = asyncio.ensure_future(batcher.embed("what is a collection"))
    await asyncio.sleep(0.05)
    assert not pending.done()  # queued behind the model's work, while the loop runs on
    release.set()
    vector = await pending
    busy.result()
    assert vector.shape == (provider.dimensions,)


def test_every_caller_runs_the_model_on_its_one_thread(monkeypatch):
    """One thread only: GNU OpenMP gives each thread running torch its own team of workers."""
    model = local_embedding_model()
    seen: set[str] = set()
    preprocess = model._model.preprocess

    def recording_preprocess(*args, **kwargs):
        seen.add(threading.current_thread().name)
        return preprocess(*args, **kwargs)

    monkeypatch.setattr(model._model, "preprocess", recording_preprocess)
    threads = [threading.Thread(target=model.embed, args=([f"text {i}"],)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    model.embed(["from the test's own thread"])
    assert len(seen) == 1 and seen.pop().startswith("embedding-model")


def test_vectors_are_those_of_sentence_transformers_encode():
    """The model's own encode is the reference; several batches of mixed lengths, in any order."""
    model = local_embedding_model()
    texts = [f"{'sensor fusion ' * (i % 7)}question {i} about ROS 2 nodes" for i in range(37)] + [""]
    reference = model.executor.submit(
        model._model.encode, texts, batch_size=BATCH_SIZE, normalize_embeddings=True
    ).result()
    vectors = model.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), model.dimensions)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    assert model.embed([]).shape == (0, model.dimensions)
