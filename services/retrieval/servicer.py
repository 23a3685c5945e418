"""RetrievalService: protobuf <-> domain translation around the indexer, searcher and store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.common.contract_limits import MAX_TOP_K, MIN_TOP_K
from services.common.errors import FieldViolation, InvalidArgument, NotFound, ResourceExhausted, Violations
from services.common.limits import ConcurrencyLimit
from services.common.wire import collection_name, timestamp
from services.retrieval.config import RetrievalSettings
from services.retrieval.disk_space import NEW_COLLECTION_BYTES, DiskReserve
from services.retrieval.indexer import DocumentOutcome, Indexer, IngestTotals
from services.retrieval.ingest import SourceDocument, SourceError, clip_error, link_problem
from services.retrieval.ingest_limits import paced
from services.retrieval.search import Searcher, SearchQuery
from services.retrieval.store import (
    CollectionInfo,
    DocumentRecord,
    SearchFilters,
    SearchHit,
    SearchMode,
    VectorStore,
)

FILTER_KEYS = ("source_url_prefix", "source_path_prefix", "section", "document_id")
_MODES = {
    common_pb2.SEARCH_MODE_UNSPECIFIED: SearchMode.HYBRID,
    common_pb2.SEARCH_MODE_DENSE: SearchMode.DENSE,
    common_pb2.SEARCH_MODE_SPARSE: SearchMode.SPARSE,
    common_pb2.SEARCH_MODE_HYBRID: SearchMode.HYBRID,
}
_MODE_PROTOS = {mode: value for value, mode in _MODES.items() if value != common_pb2.SEARCH_MODE_UNSPECIFIED}
_FORMATS = {
    retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED: "",
    retrieval_pb2.DOCUMENT_FORMAT_MARKDOWN: "markdown",
    retrieval_pb2.DOCUMENT_FORMAT_MDX: "mdx",
    retrieval_pb2.DOCUMENT_FORMAT_HTML: "html",
    retrieval_pb2.DOCUMENT_FORMAT_TEXT: "text",
}
_STATUSES = {
    "indexed": retrieval_pb2.DOCUMENT_STATUS_INDEXED,
    "unchanged": retrieval_pb2.DOCUMENT_STATUS_UNCHANGED,
    "failed": retrieval_pb2.DOCUMENT_STATUS_FAILED,
    "deleted": retrieval_pb2.DOCUMENT_STATUS_DELETED,
}


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServiceServicer):
    def __init__(
        self,
        store: VectorStore,
        indexer: Indexer,
        searcher: Searcher,
        settings: RetrievalSettings,
        disk: DiskReserve | None = None,
    ) -> None:
        self._store = store
        self._disk = disk
        self._indexer = indexer
        self._searcher = searcher
        self._settings = settings
        self._ingest_slots = ConcurrencyLimit(settings.max_concurrent_ingests, "ingest streams")

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.SearchResponse:
        query = self._search_query(request)
        outcome = await self._searcher.search(query)
        return retrieval_pb2.SearchResponse(
            results=[_scored_chunk(hit, rank) for rank, hit in enumerate(outcome.hits, start=1)],
            metadata=common_pb2.SearchMetadata(
                candidates=outcome.candidates,
                top_k=query.top_k,
                mode=_MODE_PROTOS[query.mode],
                embedding_ms=outcome.embedding_ms,
                search_ms=outcome.search_ms,
                total_ms=outcome.total_ms,
                embedding_cached=outcome.embedding_cached,
                collection=query.collection,
            ),
        )

    def _search_query(self, request: retrieval_pb2.SearchRequest) -> SearchQuery:
        s = self._settings
        v = Violations()
        collection = collection_name(request.collection, v)
        text = v.text("query", request.query, max_chars=s.max_query_chars)
        top_k = request.top_k or s.default_top_k
        v.in_range("top_k", top_k, MIN_TOP_K, MAX_TOP_K)
        min_relevance = (
            request.min_relevance if request.HasField("min_relevance") else s.default_min_relevance
        )
        v.in_range("min_relevance", min_relevance, 0.0, 1.0)
        v.check(request.mode in _MODES, "mode", f"unknown search mode {request.mode}")
        for key in request.filters:
            v.check(
                key in FILTER_KEYS, f"filters[{key}]", f"unknown filter; allowed: {', '.join(FILTER_KEYS)}"
            )
        v.raise_if_any()
        filters = request.filters
        document_ids = tuple(i.strip() for i in filters.get("document_id", "").split(",") if i.strip())
        return SearchQuery(
            collection=collection,
            text=text,
            top_k=top_k,
            min_relevance=min_relevance,
            mode=_MODES[request.mode],
            filters=SearchFilters(
                source_url_prefix=filters.get("source_url_prefix", ""),
                source_path_prefix=filters.get("source_path_prefix", ""),
                section=filters.get("section", "").strip(),
                document_ids=document_ids,
            ),
        )

    async def Ingest(
        self, request_iterator: AsyncIterator[retrieval_pb2.IngestRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[retrieval_pb2.IngestResponse]:
        """A few streams at once, each cut off when its client stalls (see ingest_limits)."""
        s = self._settings
        with self._ingest_slots.slot():
            async for reply in self._ingest(
                paced(request_iterator, s.ingest_idle_seconds, s.ingest_max_seconds)
            ):
                yield reply

    async def _ingest(
        self, requests: AsyncIterator[retrieval_pb2.IngestRequest]
    ) -> AsyncIterator[retrieval_pb2.IngestResponse]:
        first = await anext(requests, None)
        if first is None:
            return
        options = first.options if first.HasField("options") else retrieval_pb2.IngestOptions()
        v = Violations()
        collection = collection_name(options.collection, v)
        _check_link(v, "options.base_url", options.base_url)
        v.raise_if_any()
        await asyncio.to_thread(self._check_room_for, collection)
        stream = _IngestStream([] if first.HasField("options") else [first], requests)
        try:
            async for outcome, totals in self._indexer.ingest(
                collection,
                stream.documents(),
                base_url=options.base_url,
                prune=(lambda: stream.complete) if options.prune else None,
                lock_wait_seconds=self._settings.ingest_lock_wait_seconds,
            ):
                if outcome is None:
                    yield retrieval_pb2.IngestResponse(progress=_progress(totals), summary=_progress(totals))
                else:
                    yield retrieval_pb2.IngestResponse(
                        progress=_progress(totals), document=_document_result(outcome)
                    )
        finally:  # documents written before a failure or a cut-off stay: the collection changed
            self._searcher.forget(collection)
        if options.prune and not stream.complete:
            raise InvalidArgument(
                [FieldViolation("end", "prune needs the stream to end with `end`: nothing was pruned")],
                "options.prune deletes only after a complete run, whose last message is `end`; "
                "the documents this stream sent are indexed, and nothing was deleted",
            )

    def _check_room_for(self, collection: str) -> None:
        """A new collection only while the server holds fewer than max_collections (concurrent
        ingests into new names may pass together: at most max_concurrent_ingests over), and disk
        for what this ingest writes first: a new collection's files, or nothing yet (each
        document's write is checked before it is made)."""
        existing = self._store.list_collections()
        if self._disk is not None:
            self._disk.check(NEW_COLLECTION_BYTES if collection not in existing else 0)
        limit = self._settings.max_collections
        if collection not in existing and len(existing) >= limit:
            raise ResourceExhausted(
                f"this server holds its maximum of {limit} collections; ingest into an existing one "
                "(or raise GLOSSATOR_RETRIEVAL_MAX_COLLECTIONS)"
            )

    async def ListDocuments(
        self, request: retrieval_pb2.ListDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListDocumentsResponse:
        v = Violations()
        collection = collection_name(request.collection, v)
        page_size = request.page_size or 100
        v.in_range("page_size", page_size, 1, 1000)
        v.raise_if_any()
        page = await asyncio.to_thread(self._store.list_documents, collection, page_size, request.page_token)
        return retrieval_pb2.ListDocumentsResponse(
            documents=[_document_info(record) for record in page.documents],
            next_page_token=page.next_page_token,
            total_size=page.total_size,
        )

    async def DeleteDocuments(
        self, request: retrieval_pb2.DeleteDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.DeleteDocumentsResponse:
        v = Violations()
        collection = collection_name(request.collection, v)
        ids = [i for i in request.document_ids if i.strip()]
        v.check(bool(ids), "document_ids", "at least one document id is required")
        v.check(len(ids) <= 1000, "document_ids", "at most 1000 ids per call")
        v.raise_if_any()
        await asyncio.to_thread(self._store.collection_info, collection)  # NotFound for unknown collections
        result = await asyncio.to_thread(self._store.delete_documents, collection, ids)
        return retrieval_pb2.DeleteDocumentsResponse(
            deleted_documents=len(result.deleted_documents),
            deleted_chunks=result.deleted_chunks,
            not_found=result.not_found,
        )

    async def Stats(
        self, request: retrieval_pb2.StatsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.StatsResponse:
        v = Violations()
        collection = collection_name(request.collection, v)
        v.raise_if_any()
        info = await asyncio.to_thread(self._store.collection_info, collection)
        collections = await asyncio.to_thread(self._store.list_collections)
        return retrieval_pb2.StatsResponse(
            collection=info.name,
            documents=info.documents,
            chunks=info.chunks,
            embedding_model=info.embedding_model,
            embedding_dimensions=info.dense_dimensions,
            backend=self._store.backend,
            collections=collections,
        )

    async def ListCollections(
        self, request: retrieval_pb2.ListCollectionsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListCollectionsResponse:
        collections = []
        for name in await asyncio.to_thread(self._store.list_collections):
            try:
                info = await asyncio.to_thread(self._store.collection_info, name)
            except NotFound:  # deleted since it was listed
                continue
            collections.append(_collection_info(info))
        return retrieval_pb2.ListCollectionsResponse(collections=collections, backend=self._store.backend)

    async def DeleteCollection(
        self, request: retrieval_pb2.DeleteCollectionRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.DeleteCollectionResponse:
        """Waits for an ingest into the collection to end (as another ingest would), then deletes."""
        v = Violations()
        v.check(bool(request.collection.strip()), "collection", "is required: the collection to delete")
        collection = collection_name(request.collection, v)
        v.raise_if_any()
        async with self._indexer.exclusive(collection, self._settings.ingest_lock_wait_seconds):
            try:
                held = await asyncio.to_thread(self._store.delete_collection, collection)
            finally:
                self._searcher.forget(collection)
        return retrieval_pb2.DeleteCollectionResponse(
            deleted_documents=held.documents, deleted_chunks=held.chunks
        )


class _IngestStream:
    """The documents of one Ingest stream, and whether the run was complete: a stream is complete
    only when it ends with `end`, since a stream its client cancelled or lost may look half-closed
    to the server before the cancellation arrives, and prune must never take it for the source."""

    def __init__(
        self, pending: list[retrieval_pb2.IngestRequest], requests: AsyncIterator[retrieval_pb2.IngestRequest]
    ):
        self._pending = pending
        self._requests = requests
        self.complete = False

    async def documents(self) -> AsyncIterator[SourceDocument | SourceError]:
        async for request in self._all_requests():
            match request.WhichOneof("item"):
                case "end":  # what follows is not read: the run is over
                    self.complete = True
                    return
                case "document":
                    yield _source_document(request.document)
                case _:
                    raise InvalidArgument(
                        [],
                        "options may only be sent as the first message of an Ingest stream, "
                        "then documents, and `end` last",
                    )

    async def _all_requests(self) -> AsyncIterator[retrieval_pb2.IngestRequest]:
        for request in self._pending:
            yield request
        async for request in self._requests:
            yield request


def _source_document(document: retrieval_pb2.Document) -> SourceDocument | SourceError:
    """A malformed document becomes a SourceError: reported for itself, the run goes on.

    A source_url that cannot be a link is a bad request field: INVALID_ARGUMENT."""
    path = document.source_path.strip()
    v = Violations()
    _check_link(v, "document.source_url", document.source_url, f" (the document at source_path {path})")
    v.raise_if_any()
    if not path:
        return SourceError(source_path="(no source_path)", message="source_path is required")
    if document.read_error:
        return SourceError(source_path=path, message=document.read_error)
    if document.format not in _FORMATS:
        return SourceError(source_path=path, message=f"unknown document format {document.format}")
    return SourceDocument(
        document_id=document.document_id.strip(),
        source_path=path,
        source_url=document.source_url.strip(),
        content=document.content,
        format=_FORMATS[document.format],
        category_labels=tuple(document.category_labels),
        title=document.title.strip(),
    )


def _check_link(violations: Violations, field_name: str, url: str, which: str = "") -> None:
    """Citations link to this URL: only http(s) and relative URLs are accepted (see link_problem)."""
    if problem := link_problem(url):
        violations.add(field_name, clip_error(problem + which))


def _scored_chunk(hit: SearchHit, rank: int) -> common_pb2.ScoredChunk:
    chunk = hit.chunk
    return common_pb2.ScoredChunk(
        chunk=common_pb2.Chunk(
            chunk_id=chunk.chunk_id,
            document_id=chunk.document_id,
            source_url=chunk.source_url,
            source_path=chunk.source_path,
            title=chunk.title,
            section_path=list(chunk.section_path),
            section_title=chunk.section_title,
            anchor=chunk.anchor,
            chunk_index=chunk.chunk_index,
            total_chunks=chunk.total_chunks,
            text=chunk.text,
            content_hash=chunk.content_hash,
            token_count=chunk.token_count,
            indexed_at=timestamp(chunk.indexed_at),
        ),
        rank=rank,
        relevance=hit.relevance,
        dense_score=hit.dense_score,
        sparse_score=hit.sparse_score,
        sentences=[
            common_pb2.SentenceScore(start=s.start, end=s.end, similarity=s.similarity) for s in hit.sentences
        ],
    )


def _progress(totals: IngestTotals) -> retrieval_pb2.IngestProgress:
    return retrieval_pb2.IngestProgress(
        documents_done=totals.documents_done,
        documents_indexed=totals.documents_indexed,
        documents_unchanged=totals.documents_unchanged,
        documents_failed=totals.documents_failed,
        documents_deleted=totals.documents_deleted,
        chunks_written=totals.chunks_written,
        chunks_deleted=totals.chunks_deleted,
        elapsed_ms=totals.elapsed_ms,
        chunks_per_second=totals.chunks_per_second,
    )


def _document_result(outcome: DocumentOutcome) -> retrieval_pb2.DocumentResult:
    return retrieval_pb2.DocumentResult(
        document_id=outcome.document_id,
        source_path=outcome.source_path,
        status=_STATUSES[outcome.status],
        chunks=outcome.chunks,
        error=clip_error(outcome.error),
    )


def _collection_info(info: CollectionInfo) -> retrieval_pb2.CollectionInfo:
    return retrieval_pb2.CollectionInfo(
        name=info.name,
        documents=info.documents,
        chunks=info.chunks,
        embedding_model=info.embedding_model,
        embedding_dimensions=info.dense_dimensions,
    )


def _document_info(record: DocumentRecord) -> retrieval_pb2.DocumentInfo:
    return retrieval_pb2.DocumentInfo(
        document_id=record.document_id,
        source_path=record.source_path,
        source_url=record.source_url,
        title=record.title,
        chunk_count=record.chunk_count,
        content_hash=record.content_hash,
        indexed_at=timestamp(record.indexed_at),
    )
