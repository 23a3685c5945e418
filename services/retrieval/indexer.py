"""Ingestion pipeline: parse, chunk, skip what is unchanged, embed, store, record.

Per document the write order is chunks, then stale-chunk deletion, then the document record,
so a run killed anywhere is redone cleanly by the next one (see store.base.VectorStore).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

import numpy as np
import structlog

from services.common.errors import Aborted
from services.common.metrics import count_embedded, count_ingested, observe_stage
from services.common.text.prose import normalise, prose_sentences
from services.retrieval.disk_space import DiskReserve
from services.retrieval.embed import EmbeddingProvider
from services.retrieval.ingest import (
    RULES_VERSION,
    ChunkDraft,
    DocumentError,
    SourceDocument,
    SourceError,
    check_stored_size,
    chunk_document,
    derive_document_id,
    parse_document,
)
from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import (
    Chunk,
    ChunkPoint,
    DocumentRecord,
    SentenceVectors,
    SparseVector,
    VectorStore,
)
from services.retrieval.store.indexing import passage_text

log = structlog.get_logger(__name__)

# Documents parsed and chunked ahead of the model, and the texts embedded together at most (the
# passages and sentences of several documents: about five pages of a book).
PARSE_AHEAD = 16
GROUP_TEXTS = 512
NO_TEXT = "has no text to index: it is empty, or holds only front matter, markup or comments"


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

    With `embed_sentences`, every prose sentence of a chunk is embedded too, so that Search can
    score sentences without running the model.
    """

    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        count_tokens,
        chunking: ChunkingConfig,
        embed_sentences: bool = True,
        disk: DiskReserve | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._count_tokens = count_tokens
        self._chunking = chunking
        self._embed_sentences = embed_sentences
        self._disk = disk
        self._sparse = SparseEncoder()
        self._locks: dict[str, asyncio.Lock] = {}

    async def ingest(
        self,
        collection: str,
        items: AsyncIterator[SourceDocument | SourceError],
        *,
        base_url: str = "",
        prune: Callable[[], bool] | None = None,
        lock_wait_seconds: float | None = None,
    ) -> AsyncIterator[tuple[DocumentOutcome | None, IngestTotals]]:
        """Yields (outcome, running totals) per document, then (None, final totals).

        `prune` is asked once the last item is in: True deletes the documents of the collection
        this run did not send (only a complete run may say so).

        One ingest per collection at a time: another one waits `lock_wait_seconds` (None: as long as
        it takes) and is then ABORTED, rather than queueing for as long as a slow client holds it.
        A new collection is created with its first document to write: a run where every document
        failed (or none came) leaves no empty collection behind.
        """
        async with self.exclusive(collection, lock_wait_seconds):
            target = _Target(
                collection, exists=collection in await asyncio.to_thread(self._store.list_collections)
            )
            if target.exists:  # refused now if another model built it, before any work
                await asyncio.to_thread(self._ensure, collection)
            totals = IngestTotals()
            seen: set[str] = set()
            try:
                async for outcome, written, deleted in self._pipeline(target, items, base_url):
                    seen.add(outcome.document_id)
                    _count(collection, totals, outcome, written, deleted)
                    yield outcome, totals
                if prune is not None and prune() and target.exists:
                    async for outcome, deleted in self._prune(collection, seen):
                        _count(collection, totals, outcome, 0, deleted)
                        yield outcome, totals
            finally:
                if target.exists:
                    await asyncio.to_thread(self._store.optimize, collection)
            yield None, totals

    @contextlib.asynccontextmanager
    async def exclusive(self, collection: str, lock_wait_seconds: float | None = None) -> AsyncIterator[None]:
        """Holds the collection against every other ingest (or delete) of it in this process,
        waiting `lock_wait_seconds` at most (None: as long as it takes), then Aborted."""
        lock = self._locks.setdefault(collection, asyncio.Lock())
        try:
            await asyncio.wait_for(lock.acquire(), lock_wait_seconds)
        except TimeoutError:
            raise Aborted(
                f"another ingest is running into collection {collection!r}; retry when it has finished"
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _ensure(self, collection: str) -> None:
        self._store.ensure_collection(collection, self._embedder.dimensions, self._embedder.name)

    async def _pipeline(
        self, target: _Target, items: AsyncIterator[SourceDocument | SourceError], base_url: str
    ) -> AsyncIterator[tuple[DocumentOutcome, int, int]]:
        """(outcome, chunks written, chunks deleted) per document, in the order the items came.

        Three stages overlap, joined by short queues: documents are parsed and chunked ahead of the
        model; the model embeds the texts of several documents at once (sorted by length, each
        distinct sentence once); the store writes one group while the model embeds the next.
        """
        collection = target.collection
        parsed: asyncio.Queue[_Prepared | None] = asyncio.Queue(PARSE_AHEAD)
        embedded: asyncio.Queue[list[_Prepared] | None] = asyncio.Queue(1)

        async def parse() -> None:
            async for item in items:
                await parsed.put(await self._prepare(target, item, base_url))
            await parsed.put(None)

        async def embed() -> None:
            while (group := await _next_group(parsed)) is not None:
                await self._embed_group(collection, group)
                await embedded.put(group)
                if group[-1] is None:
                    break
            await embedded.put(None)

        stages = [asyncio.ensure_future(parse()), asyncio.ensure_future(embed())]
        try:
            while (group := await _first_of(embedded, stages)) is not None:
                for prepared in group:
                    if prepared is not None:
                        yield await self._write(target, prepared)
            await asyncio.gather(*stages)  # raises what a stage raised
        finally:
            for stage in stages:
                stage.cancel()
            await asyncio.gather(*stages, return_exceptions=True)

    async def _prepare(self, target: _Target, item: SourceDocument | SourceError, base_url: str) -> _Prepared:
        """The document parsed and chunked, or its outcome when there is nothing to embed."""
        if isinstance(item, SourceError):
            return _Prepared(
                DocumentOutcome(item.document_id, item.source_path, "failed", error=item.message)
            )
        try:
            document_id = item.document_id or derive_document_id(item.source_path)
        except DocumentError as error:
            return _Prepared(DocumentOutcome("", item.source_path, "failed", error=str(error)))
        fingerprint = self._fingerprint(item, base_url)
        record = (
            await asyncio.to_thread(self._store.document_record, target.collection, document_id)
            if target.exists
            else None  # a collection yet to be created holds no record
        )
        if record is not None and record.content_hash == fingerprint:
            return _Prepared(DocumentOutcome(document_id, item.source_path, "unchanged", record.chunk_count))
        try:
            return await asyncio.to_thread(self._chunk, item, document_id, fingerprint, base_url)
        except DocumentError as error:
            return _Prepared(DocumentOutcome(document_id, item.source_path, "failed", error=str(error)))
        except Exception as error:  # a parser bug a hostile page finds fails that page, not the run
            log.exception("document_not_parsed", document_id=document_id)
            message = f"could not be parsed ({type(error).__name__}); the service log has the details"
            return _Prepared(DocumentOutcome(document_id, item.source_path, "failed", error=message))

    def _chunk(self, item: SourceDocument, document_id: str, fingerprint: str, base_url: str) -> _Prepared:
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
            if not drafts:  # failed, not indexed with no chunks: an empty upload must not erase a page
                raise DocumentError(NO_TEXT)
            check_stored_size(item.content, drafts)
            passages = [passage_text(d.title, d.section_path, d.text) for d in drafts]
            spans = [prose_sentences(d.text) if self._embed_sentences else [] for d in drafts]
        record = DocumentRecord(
            document_id=document_id,
            source_path=item.source_path,
            source_url=parsed.url,
            title=parsed.title,
            content_hash=fingerprint,
            chunk_ids=tuple(d.chunk_id for d in drafts),
            indexed_at=datetime.now(UTC),
        )
        return _Prepared(
            DocumentOutcome(document_id, item.source_path, "indexed", len(drafts)),
            record,
            drafts,
            passages,
            spans,
            [self._sparse.encode_document(passage) for passage in passages],
        )

    async def _embed_group(self, collection: str, group: list[_Prepared | None]) -> None:
        """Embeds the passages, then the distinct sentences, of every document of the group.

        Two calls, not one: a batch mixing a 200-token passage with 20-token sentences pads every
        sentence to the passage's length (the mixed call took 2.5x as long on agentfactory).
        """
        documents = [p for p in group if p is not None and p.drafts]
        passages = [text for p in documents for text in p.passages]
        sentences = [
            normalise(d.text[a:b])
            for p in documents
            for d, found in zip(p.drafts, p.spans, strict=True)
            for a, b in found
        ]
        distinct = list(dict.fromkeys(sentences))
        with observe_stage("embedding"):
            passage_rows = await self._embedder.embed_async(passages) if passages else None
            distinct_rows = await self._embedder.embed_async(distinct) if distinct else None
        count_embedded(collection, len(passages), len(distinct))
        row_of = {sentence: row for row, sentence in enumerate(distinct)}
        sentence_rows = distinct_rows[[row_of[s] for s in sentences]] if sentences else None
        first_passage = first_sentence = 0
        for prepared in documents:
            count = len(prepared.drafts)
            prepared.dense = passage_rows[first_passage : first_passage + count]
            first_passage += count
            sentence_count = sum(len(found) for found in prepared.spans)
            if sentence_count:
                prepared.sentence_rows = sentence_rows[first_sentence : first_sentence + sentence_count]
            first_sentence += sentence_count

    async def _write(self, target: _Target, prepared: _Prepared) -> tuple[DocumentOutcome, int, int]:
        """Chunks, then stale chunks deleted, then the record: a run killed between the steps is
        redone cleanly by the next one (the record is what marks the document done)."""
        if prepared.record is None:
            return prepared.outcome, 0, 0
        collection = target.collection
        if not target.exists:
            await asyncio.to_thread(self._ensure, collection)
            target.exists = True
        points = prepared.points()
        if self._disk is not None:
            await asyncio.to_thread(self._disk.check, _write_bytes(points))
        await asyncio.to_thread(self._store.upsert_chunks, collection, points)
        deleted = await asyncio.to_thread(
            self._store.delete_chunks_except,
            collection,
            prepared.record.document_id,
            prepared.record.chunk_ids,
        )
        await asyncio.to_thread(self._store.put_document_record, collection, prepared.record)
        return prepared.outcome, len(points), deleted

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


@dataclass
class _Target:
    """The collection a run writes into, and whether it exists yet (it is created on first write)."""

    collection: str
    exists: bool


@dataclass
class _Prepared:
    """One document on its way through the pipeline: its outcome, and when it is to be written,
    its record, chunks, passage texts, sentence spans and sparse vectors, then its dense vectors."""

    outcome: DocumentOutcome
    record: DocumentRecord | None = None
    drafts: list[ChunkDraft] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    spans: list[list[tuple[int, int]]] = field(default_factory=list)
    sparse: list[SparseVector] = field(default_factory=list)
    dense: np.ndarray | None = None
    sentence_rows: np.ndarray | None = None

    def points(self) -> list[ChunkPoint]:
        indexed_at = self.record.indexed_at
        points, first_row = [], 0
        for draft, vector, sparse, found in zip(
            self.drafts, self.dense, self.sparse, self.spans, strict=True
        ):
            sentences = None
            if found:
                sentences = SentenceVectors(
                    tuple(found), self.sentence_rows[first_row : first_row + len(found)]
                )
                first_row += len(found)
            points.append(
                ChunkPoint(chunk=_stored(draft, indexed_at), dense=vector, sparse=sparse, sentences=sentences)
            )
        return points


async def _next_group(parsed: asyncio.Queue) -> list[_Prepared | None] | None:
    """The next documents to embed together: the first one parsed (waiting for it), then those
    already parsed, up to GROUP_TEXTS texts. None (end of input) closes the last group."""
    first = await parsed.get()
    if first is None:
        return None
    group, texts = [first], _texts(first)
    while texts < GROUP_TEXTS and not parsed.empty():
        prepared = parsed.get_nowait()
        group.append(prepared)
        if prepared is None:
            break
        texts += _texts(prepared)
    return group


def _texts(prepared: _Prepared) -> int:
    return len(prepared.passages) + sum(len(found) for found in prepared.spans)


async def _first_of(queue: asyncio.Queue, stages: list[asyncio.Future]):
    """The queue's next item, or the exception of a stage that failed while we waited."""
    getter = asyncio.ensure_future(queue.get())
    try:
        while True:
            for stage in stages:
                if stage.done():
                    stage.result()  # raises what the stage raised
            running = [stage for stage in stages if not stage.done()]
            done, _ = await asyncio.wait([getter, *running], return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                return getter.result()
    finally:
        getter.cancel()


def _count(
    collection: str, totals: IngestTotals, outcome: DocumentOutcome, written: int, deleted: int
) -> None:
    """Into the run's totals (its client's progress) and the process's metrics (its operators')."""
    totals.count(outcome, written, deleted)
    count_ingested(collection, outcome.status, written, deleted)


def _write_bytes(points: list[ChunkPoint]) -> int:
    """A generous guess of the disk a document's points take: the write-ahead log and then a
    segment each hold the vectors and the payload (about three copies of the text)."""
    one_copy = sum(
        point.dense.nbytes
        + (point.sentences.vectors.nbytes if point.sentences is not None else 0)
        + 3 * len(point.chunk.text.encode("utf-8", "surrogatepass"))
        + 4096
        for point in points
    )
    return 2 * one_copy


def _stored(draft: ChunkDraft, indexed_at: datetime) -> Chunk:
    """The store's Chunk is the draft (every glossator.v1.Chunk field) plus when it was written."""
    return Chunk(**{f.name: getattr(draft, f.name) for f in fields(draft)}, indexed_at=indexed_at)
