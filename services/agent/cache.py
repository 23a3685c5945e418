"""Response cache for questions asked outside a session, without selected text or user context.

The key holds what the retrieval service returns for the question (chunk ids and content hashes),
so an answer is never served from the cache once the collection's relevant content has changed:
re-ingesting a book invalidates exactly the answers it affects. Entries also expire after a TTL.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Generic, TypeVar

from glossator.v1 import common_pb2
from services.common.metrics import count_cache_lookup

T = TypeVar("T")


def cache_key(
    collection: str,
    question: str,
    top_k: int,
    min_relevance: float | None,
    model: str,
    retrieved: Sequence[common_pb2.ScoredChunk],
) -> str:
    fingerprint = [
        collection,
        " ".join(question.lower().split()),
        top_k,
        min_relevance,
        model,
        [f"{r.chunk.chunk_id}:{r.chunk.content_hash}" for r in retrieved],
    ]
    return hashlib.sha256(json.dumps(fingerprint).encode()).hexdigest()


class ResponseCache(Generic[T]):
    """A bounded LRU of final answers with a time to live."""

    def __init__(self, ttl_seconds: float, capacity: int = 1024, clock=time.monotonic) -> None:
        self._ttl = ttl_seconds
        self._capacity = capacity
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self._ttl > 0

    def get(self, key: str) -> T | None:
        value = self._lookup(key)
        count_cache_lookup("response", hit=value is not None)
        return value

    def _lookup(self, key: str) -> T | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, value = entry
        if self._clock() - stored_at > self._ttl:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: T) -> None:
        if not self.enabled:
            return
        self._entries[key] = (self._clock(), value)
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)
