"""Ingestion pipeline: parse, chunk, skip what is unchanged, embed, store, record.

Per document the write order is chunks, then stale-chunk deletion, then the document record,
so a run killed anywhere is redone cleanly by the next one (see store.base.VectorStore).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from services.common.errors import Aborted
from services.common.metrics import count_ingested, observe_stage
from services.retrieval.embed import EmbeddingProvider
from services.retrieval.ingest import (
    RULES_VERSION,
    ChunkDraft,
    DocumentError,
    SourceDocument,
    SourceError,
    chunk_document,
    derive_document_id,
    parse_document,
)
from services.retrieval.sentences import normalise, prose_sentences
from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import Chunk, ChunkPoint, DocumentRecord, SentenceVectors, VectorStore
from services.retrieval.store.indexing import passage_text


@dataclass(frozen=True)
class ChunkingConfig:
    max_tokens: int
    overlap_tokens: int
    min_tokens: int
    max_document_bytes: int
    max_front_matter_bytes: int


@dataclass(frozen=True)
class DocumentOutcome:
    document_id: str
    source_path: str
    status: str  # indexed | unchanged | failed | deleted
    chunks: int = 0
    error: str = ""


@dataclass
class IngestTotals:
    documents_done: int = 0
    documents_indexed: int = 0
    documents_unchanged: int = 0
    documents_failed: int = 0
    documents_deleted: int = 0
    chunks_written: int = 0
    chunks_deleted: int = 0
    started: float = field(default_factory=time.perf_counter)

    @property
    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    @property
    def chunks_per_second(self) -> float:
        seconds = self.elapsed_ms / 1000
        return self.chunks_written / seconds if seconds > 0 else 0.0

    def count(self, outcome: DocumentOutcome, chunks_written: int, chunks_deleted: int) -> None:
        self.documents_done += outcome.status != "deleted"
        self.documents_indexed += outcome.status == "indexed"
        self.documents_unchanged += outcome.status == "unchanged"
        self.documents_failed += outcome.status == "failed"
        self.documents_deleted += outcome.status == "deleted"
        self.chunks_written += chunks_written
        self.chunks_deleted += chunks_deleted


class Indexer:
    """Writes documents into collections; one run per collection at a time.

    With `embed_sentences`, every prose sentence of a chunk is embedded too (in the same model
    call as the chunks), so that Search can score sentences without running the model.
    """

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        count_tokens,
        chunking: ChunkingConfig,
        embed_sentences: bool = True,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._count_tokens = count_tokens
        self._chunking = chunking
        self._embed_sentences = embed_sentences
        self._sparse = SparseEncoder()
        self._locks: dict[str, asyncio.Lock] = {}

    async def ingest(
        self,
        collection: str,
        items: AsyncIterator[SourceDocument | SourceError],
        *,
        base_url: str = "",
        prune: bool = False,
        lock_wait_seconds: float | None = None,
    ) -> AsyncIterator[tuple[DocumentOutcome | None, IngestTotals]]:
        """Yields (outcome, running totals) per document, then (None, final totals).

        One ingest per collection at a time: another one waits `lock_wait_seconds` (None: as long as
        it takes) and is then ABORTED, rather than queueing for as long as a slow client holds it.
        """
        lock = self._locks.setdefault(collection, asyncio.Lock())
        try:
            await asyncio.wait_for(lock.acquire(), lock_wait_seconds)
        except TimeoutError:
            raise Aborted(
                f"another ingest is running into collection {collection!r}; retry when it has finished"
            ) from None
        try:
            await asyncio.to_thread(
                self._store.ensure_collection, collection, self._embedder.dimensions, self._embedder.name
            )
            totals = IngestTotals()
            seen: set[str] = set()
            try:
                async for item in items:
                    outcome, written, deleted = await self._one(collection, item, base_url)
                    seen.add(outcome.document_id)
                    _count(collection, totals, outcome, written, deleted)
                    yield outcome, totals
                if prune:
                    async for outcome, deleted in self._prune(collection, seen):
                        _count(collection, totals, outcome, 0, deleted)
                        yield outcome, totals
            finally:
                await asyncio.to_thread(self._store.optimize, collection)
            yield None, totals
        finally:
            lock.release()

    async def _one(
        self, collection: str, item: SourceDocument | SourceError, base_url: str
    ) -> tuple[DocumentOutcome, int, int]:
        if isinstance(item, SourceError):
            return DocumentOutcome(item.document_id, item.source_path, "failed", error=item.message), 0, 0
        try:
            document_id = item.document_id or derive_document_id(item.source_path)
        except DocumentError as error:
            return DocumentOutcome("", item.source_path, "failed", error=str(error)), 0, 0
        fingerprint = self._fingerprint(item, base_url)
        record = await asyncio.to_thread(self._store.document_record, collection, document_id)
        if record is not None and record.content_hash == fingerprint:
            return DocumentOutcome(document_id, item.source_path, "unchanged", record.chunk_count), 0, 0
        try:
            drafts, parsed_title, url = await asyncio.to_thread(self._chunk, item, base_url)
        except DocumentError as error:
            return DocumentOutcome(document_id, item.source_path, "failed", error=str(error)), 0, 0
        points = await asyncio.to_thread(self._points, drafts)
        await asyncio.to_thread(self._store.upsert_chunks, collection, points)
        deleted = await asyncio.to_thread(
            self._store.delete_chunks_except, collection, document_id, [d.chunk_id for d in drafts]
        )
        await asyncio.to_thread(
            self._store.put_document_record,
            collection,
            DocumentRecord(
                document_id=document_id,
                source_path=item.source_path,
                source_url=url,
                title=parsed_title,
                content_hash=fingerprint,
                chunk_ids=tuple(d.chunk_id for d in drafts),
                indexed_at=datetime.now(UTC),
            ),
        )
        return DocumentOutcome(document_id, item.source_path, "indexed", len(drafts)), len(drafts), deleted

    def _fingerprint(self, item: SourceDocument, base_url: str) -> str:
        """Everything that decides a document's chunks: unchanged fingerprint, nothing to redo."""
        c = self._chunking
        key = [
            item.content,
            item.source_path,
            item.source_url,
            item.format,
            item.title,
            list(item.category_labels),
            base_url,
            [RULES_VERSION, c.max_tokens, c.overlap_tokens, c.min_tokens],
            self._embedder.name,
            self._embed_sentences,
        ]
        return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()

    def _chunk(self, item: SourceDocument, base_url: str) -> tuple[list[ChunkDraft], str, str]:
        c = self._chunking
        with observe_stage("chunking"):
            parsed = parse_document(
                item,
                base_url,
                max_bytes=c.max_document_bytes,
                max_front_matter_bytes=c.max_front_matter_bytes,
            )
            drafts = chunk_document(
                parsed,
                self._count_tokens,
                max_tokens=c.max_tokens,
                overlap_tokens=c.overlap_tokens,
                min_tokens=c.min_tokens,
            )
        return drafts, parsed.title, parsed.url

    def _points(self, drafts: list[ChunkDraft]) -> list[ChunkPoint]:
        passages = [passage_text(d.title, d.section_path, d.text) for d in drafts]
        spans = [prose_sentences(d.text) if self._embed_sentences else [] for d in drafts]
        sentences = [normalise(d.text[a:b]) for d, found in zip(drafts, spans, strict=True) for a, b in found]
        # Two calls, not one: a batch mixing a 200-token passage with 20-token sentences pads every
        # sentence to the passage's length (the mixed call took 2.5x as long on agentfactory).
        with observe_stage("embedding"):
            dense = self._embedder.embed(passages)
            sentence_rows = self._embedder.embed(sentences)
        now = datetime.now(UTC)
        points, first_row = [], 0
        for draft, vector, passage, found in zip(drafts, dense, passages, spans, strict=True):
            rows = sentence_rows[first_row : first_row + len(found)]
            first_row += len(found)
            points.append(
                ChunkPoint(
                    chunk=_stored(draft, now),
                    dense=vector,
                    sparse=self._sparse.encode_document(passage),
                    sentences=SentenceVectors(tuple(found), rows) if found else None,
                )
            )
        return points

    async def _prune(self, collection: str, seen: set[str]) -> AsyncIterator[tuple[DocumentOutcome, int]]:
        """Deletes the documents of the collection that this run did not send."""
        gone: list[DocumentRecord] = []
        token = ""
        while True:
            page = await asyncio.to_thread(self._store.list_documents, collection, 500, token)
            gone.extend(r for r in page.documents if r.document_id not in seen)
            token = page.next_page_token
            if not token:
                break
        for record in gone:
            result = await asyncio.to_thread(self._store.delete_documents, collection, [record.document_id])
            yield DocumentOutcome(record.document_id, record.source_path, "deleted"), result.deleted_chunks


def _count(
    collection: str, totals: IngestTotals, outcome: DocumentOutcome, written: int, deleted: int
) -> None:
    """Into the run's totals (its client's progress) and the process's metrics (its operators')."""
    totals.count(outcome, written, deleted)
    count_ingested(collection, outcome.status, written, deleted)


def _stored(draft: ChunkDraft, indexed_at: datetime) -> Chunk:
    """The store's Chunk is the draft (every glossator.v1.Chunk field) plus when it was written."""
    return Chunk(**{f.name: getattr(draft, f.name) for f in fields(draft)}, indexed_at=indexed_at)
