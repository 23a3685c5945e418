"""RetrievalService through real servers, on both store backends: ingest, search, documents, errors."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter, to_document
from services.common.clients import make_channel
from services.common.embedding import local_embedding_model
from services.common.text.prose import normalise
from services.retrieval.config import RetrievalSettings
from services.retrieval.ingest import read_folder
from services.retrieval.server import build_server
from tests.grpc_helpers import field_violations

ROOT = Path(__file__).resolve().parents[2]
BASE_URL = "https://glossator.dev/docs/"


@pytest.fixture(scope="module", params=["edge", "qdrant"])
async def retrieval(request, tmp_path_factory):
    """A retrieval server per backend: the embedded engine, or qdrant-client's local mode."""
    data_dir = tmp_path_factory.mktemp(f"retrieval-{request.param}")
    settings = RetrievalSettings(
        port=0, data_dir=data_dir, backend=request.param, qdrant_url=str(data_dir / "local-qdrant")
    )
    server, port = await build_server(settings)
    await server.start()
    async with make_channel(f"127.0.0.1:{port}") as channel:
        yield retrieval_pb2_grpc.RetrievalServiceStub(channel)
    await server.stop(grace=0)


async def ingest(stub, collection: str, documents: list[retrieval_pb2.Document], prune: bool = False):
    options = retrieval_pb2.IngestOptions(collection=collection, base_url=BASE_URL, prune=prune)
    requests = [
        retrieval_pb2.IngestRequest(options=options),
        *[retrieval_pb2.IngestRequest(document=d) for d in documents],
        retrieval_pb2.IngestRequest(end=retrieval_pb2.IngestEnd()),
    ]
    return [reply async for reply in stub.Ingest(async_iter(requests), timeout=120)]


def sample_documents() -> list[retrieval_pb2.Document]:

    return [to_document(item) for item in read_folder(ROOT / "docs")]


def statuses(replies) -> dict[str, int]:
    return {r.document.source_path: r.document.status for r in replies if r.HasField("document")}


async def test_ingest_then_search_returns_cited_chunks_with_metadata(retrieval):
    replies = await ingest(retrieval, "book", sample_documents())
    assert set(statuses(replies).values()) == {retrieval_pb2.DOCUMENT_STATUS_INDEXED}
    summary = replies[-1].summary
    assert summary.documents_indexed == len(sample_documents()) and summary.chunks_written > 5

    reply = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="book", query="How does Glossator check citations?", top_k=3)
    )
    assert 1 <= len(reply.results) <= 3
    top = reply.results[0]
    assert top.rank == 1 and 0.3 <= top.relevance <= 1.0
    chunk = top.chunk
    assert chunk.source_url.startswith(BASE_URL) and "#" in chunk.source_url
    assert chunk.section_path and chunk.section_title == chunk.section_path[-1]
    assert len(chunk.content_hash) == 64 and chunk.token_count > 0 and chunk.total_chunks >= 1
    assert chunk.indexed_at.seconds > 0
    assert "citation" in chunk.text.lower()
    m = reply.metadata
    assert m.top_k == 3 and m.candidates >= len(reply.results) and m.collection == "book"
    assert m.total_ms >= m.search_ms > 0 and m.embedding_ms > 0


WIDGET_DOCUMENTS = [
    retrieval_pb2.Document(
        source_path=f"widgets/{name}.md",
        content=content,
        format=retrieval_pb2.DOCUMENT_FORMAT_MARKDOWN,
    )
    for name, content in {
        "frames": "# Widget frames\n\nWidget frames load fast. Widget frames resize with the page. "
        "Widget frames keep their state. Many widget frames can share one page.\n",
        "tour": "# Tour\n\n## Setting up the site\n\nInstall the package, configure the host page, pick the "
        "colours, set the language and choose a theme for the reader's panel. A **widget frame** is the "
        "sandboxed iframe that holds the chat panel. Then deploy to production, check the logs and "
        "rotate the keys every month.\n",
    }.items()
]


async def test_a_question_asking_what_a_term_is_finds_the_chunk_defining_it_first(retrieval):
    await ingest(retrieval, "widgets", WIDGET_DOCUMENTS)
    reply = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="widgets", query="What is a widget frame?", top_k=2)
    )
    assert [r.chunk.source_path for r in reply.results] == ["widgets/tour.md", "widgets/frames.md"]
    assert [r.rank for r in reply.results] == [1, 2]
    other = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="widgets", query="How do widget frames load?", top_k=2)
    )
    assert other.results[0].chunk.source_path == "widgets/frames.md"


async def test_of_the_chunks_defining_a_term_the_one_introducing_it_comes_first(retrieval):
    """A term is defined where its document introduces it, not under a later heading in passing."""
    documents = [
        retrieval_pb2.Document(
            source_path=f"helm/{name}.md", content=content, format=retrieval_pb2.DOCUMENT_FORMAT_MARKDOWN
        )
        for name, content in {
            "install": "# Helm setup\n\n## Installing Helm\n\nHelm is a CLI tool you install on your machine. "
            "Install Helm with its script, then run helm version to check Helm.\n",
            "intro": "# Charts\n\nHelm is the package manager for Kubernetes. A chart bundles manifests.\n",
        }.items()
    ]
    await ingest(retrieval, "helm", documents)
    reply = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="helm", query="What is Helm?", top_k=2)
    )
    assert [r.chunk.source_path for r in reply.results] == ["helm/intro.md", "helm/install.md"]


async def test_search_scores_each_found_chunks_sentences_against_the_query(retrieval):
    """Sentences embedded at ingest come back with their offsets and their cosine with the query."""
    await ingest(retrieval, "book", sample_documents())
    question = "How does Glossator check citations?"
    reply = await retrieval.Search(retrieval_pb2.SearchRequest(collection="book", query=question, top_k=3))
    embed = local_embedding_model().embed
    for result in reply.results:
        text = result.chunk.text
        assert result.sentences, "every sample chunk has prose"
        assert all(0 <= s.start < s.end <= len(text) for s in result.sentences)
        assert [s.start for s in result.sentences] == sorted(s.start for s in result.sentences)
        assert "```" not in "".join(text[s.start : s.end] for s in result.sentences)
        sentences = [normalise(text[s.start : s.end]) for s in result.sentences]
        vectors = embed([question, *sentences])
        expected = vectors[1:] @ vectors[0]
        got = [s.similarity for s in result.sentences]
        assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 0.01
    sparse = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="book", query=question, mode=common_pb2.SEARCH_MODE_SPARSE)
    )
    assert sparse.results and not any(r.sentences for r in sparse.results)


async def test_every_mode_and_filters(retrieval):
    await ingest(retrieval, "book", sample_documents())
    for mode in (common_pb2.SEARCH_MODE_DENSE, common_pb2.SEARCH_MODE_SPARSE, common_pb2.SEARCH_MODE_HYBRID):
        reply = await retrieval.Search(
            retrieval_pb2.SearchRequest(collection="book", query="chunk ids are deterministic", mode=mode)
        )
        assert reply.results and reply.metadata.mode == mode
        assert "ingestion" in reply.results[0].chunk.source_url
    filtered = await retrieval.Search(
        retrieval_pb2.SearchRequest(
            collection="book", query="search", filters={"source_path_prefix": "reference/"}, min_relevance=0
        )
    )
    assert filtered.results
    assert all(r.chunk.source_path.startswith("reference/") for r in filtered.results)
    by_section = await retrieval.Search(
        retrieval_pb2.SearchRequest(
            collection="book", query="parameters", filters={"section": "search"}, min_relevance=0
        )
    )
    assert by_section.results and all("Search" in r.chunk.section_path for r in by_section.results)


async def test_repeated_query_uses_the_embedding_cache(retrieval):
    await ingest(retrieval, "book", sample_documents())
    request = retrieval_pb2.SearchRequest(collection="book", query="what does the validation service do")
    first = await retrieval.Search(request)
    second = await retrieval.Search(request)
    assert second.metadata.embedding_cached and second.metadata.embedding_ms == 0
    assert [r.chunk.chunk_id for r in first.results] == [r.chunk.chunk_id for r in second.results]


async def test_reingest_skips_unchanged_replaces_changed_and_prunes_removed(retrieval):
    documents = sample_documents()
    await ingest(retrieval, "cycle", documents)
    again = await ingest(retrieval, "cycle", documents)
    assert set(statuses(again).values()) == {retrieval_pb2.DOCUMENT_STATUS_UNCHANGED}
    assert again[-1].summary.chunks_written == 0

    changed = [d for d in documents]
    changed[0] = retrieval_pb2.Document(
        source_path=documents[0].source_path, content="# Changed\n\nA single new paragraph about zebras."
    )
    kept = changed[:-1]  # the last document is gone from the source
    replies = await ingest(retrieval, "cycle", kept, prune=True)
    result = statuses(replies)
    assert result[documents[0].source_path] == retrieval_pb2.DOCUMENT_STATUS_INDEXED
    assert result[documents[-1].source_path] == retrieval_pb2.DOCUMENT_STATUS_DELETED
    assert replies[-1].summary.chunks_deleted > 0

    listed = await retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection="cycle"))
    assert {d.source_path for d in listed.documents} == {d.source_path for d in kept}
    zebra = await retrieval.Search(
        retrieval_pb2.SearchRequest(collection="cycle", query="zebras", min_relevance=0)
    )
    old_chunks = [r for r in zebra.results if r.chunk.document_id == documents[0].source_path]
    assert old_chunks and all("zebras" in r.chunk.text for r in old_chunks)  # no stale chunk left


async def test_a_pruning_stream_that_ends_without_end_prunes_nothing(retrieval):
    """A half-close is not proof of a complete run (a cancelled stream can look half-closed to the
    server before the cancellation arrives): only `end` lets prune delete."""
    documents = sample_documents()
    await ingest(retrieval, "no-end", documents)
    options = retrieval_pb2.IngestOptions(collection="no-end", base_url=BASE_URL, prune=True)
    requests = [
        retrieval_pb2.IngestRequest(options=options),
        retrieval_pb2.IngestRequest(document=documents[0]),
    ]
    call = retrieval.Ingest(async_iter(requests), timeout=120)
    replies = []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for reply in call:
            replies.append(reply)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "end" in field_violations(caught.value)
    assert replies[-1].summary.documents_done == 1 and replies[-1].summary.documents_deleted == 0
    listed = await retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection="no-end"))
    assert listed.total_size == len(documents)


async def test_what_follows_end_is_not_read(retrieval):
    """`end` closes the run: a document sent after it is not indexed (nor pruned against)."""
    first, second = sample_documents()[:2]
    options = retrieval_pb2.IngestOptions(collection="after-end", base_url=BASE_URL)
    requests = [
        retrieval_pb2.IngestRequest(options=options),
        retrieval_pb2.IngestRequest(document=first),
        retrieval_pb2.IngestRequest(end=retrieval_pb2.IngestEnd()),
        retrieval_pb2.IngestRequest(document=second),
    ]
    replies = [reply async for reply in retrieval.Ingest(async_iter(requests), timeout=120)]
    assert set(statuses(replies)) == {first.source_path}
    listed = await retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection="after-end"))
    assert [d.source_path for d in listed.documents] == [first.source_path]


async def test_an_interrupted_ingest_run_again_ends_in_the_same_state(retrieval):
    documents = sample_documents()
    options = retrieval_pb2.IngestOptions(collection="interrupted", base_url=BASE_URL)

    async def half_then_stop():
        yield retrieval_pb2.IngestRequest(options=options)
        for document in documents[:2]:
            yield retrieval_pb2.IngestRequest(document=document)

    call = retrieval.Ingest(half_then_stop())
    async for reply in call:
        if reply.HasField("document"):
            call.cancel()  # the client dies after the first document
            break
    await ingest(retrieval, "interrupted", documents)
    await ingest(retrieval, "reference", documents)
    interrupted = await retrieval.Stats(retrieval_pb2.StatsRequest(collection="interrupted"))
    reference = await retrieval.Stats(retrieval_pb2.StatsRequest(collection="reference"))
    assert (interrupted.documents, interrupted.chunks) == (reference.documents, reference.chunks)


async def test_bad_documents_are_reported_and_do_not_stop_the_run(retrieval):
    documents = [
        retrieval_pb2.Document(source_path="binary.md", content="\x00\x01\x02 not text \x00" * 50),
        retrieval_pb2.Document(source_path="broken.md", content="---\ntitle: [unclosed\n---\n# Body\n\ntext"),
        retrieval_pb2.Document(
            source_path="huge.md", content="# Huge\n\n" + "word " * (6 * 1024 * 1024 // 5)
        ),
        retrieval_pb2.Document(source_path="", content="# No path"),
        retrieval_pb2.Document(source_path="unreadable.md", read_error="not UTF-8"),
        retrieval_pb2.Document(source_path="fine.md", content="# Fine\n\nThis document is perfectly fine."),
    ]
    replies = await ingest(retrieval, "bad", documents)
    results = [r.document for r in replies if r.HasField("document")]
    assert [r.status for r in results] == [retrieval_pb2.DOCUMENT_STATUS_FAILED] * 5 + [
        retrieval_pb2.DOCUMENT_STATUS_INDEXED
    ]
    errors = " | ".join(r.error for r in results[:5])
    for expected in ("binary", "front matter", "over the limit", "source_path", "not UTF-8"):
        assert expected in errors, f"{expected!r} not in {errors!r}"


@pytest.mark.parametrize(
    ("request_fields", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 1001}, "query"),
        ({"query": "ok", "top_k": 21}, "top_k"),
        ({"query": "ok", "top_k": -1}, "top_k"),
        ({"query": "ok", "min_relevance": 1.5}, "min_relevance"),
        ({"query": "ok", "filters": {"colour": "red"}}, "filters[colour]"),
        ({"query": "ok", "collection": "no/slashes"}, "collection"),
        ({"query": "ok", "mode": 42}, "mode"),
    ],
)
async def test_bad_search_input_is_invalid_argument_with_the_field(retrieval, request_fields, field):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.Search(retrieval_pb2.SearchRequest(**request_fields))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in field_violations(caught.value)


async def test_unknown_collection_is_not_found(retrieval):
    for call in (
        retrieval.Search(retrieval_pb2.SearchRequest(collection="nobook", query="anything")),
        retrieval.Stats(retrieval_pb2.StatsRequest(collection="nobook")),
        retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection="nobook")),
        retrieval.DeleteDocuments(
            retrieval_pb2.DeleteDocumentsRequest(collection="nobook", document_ids=["a"])
        ),
        retrieval.DeleteCollection(retrieval_pb2.DeleteCollectionRequest(collection="nobook")),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_collections_are_listed_with_their_counts_and_deleted_whole(retrieval):
    documents = sample_documents()
    replies = await ingest(retrieval, "doomed", documents)
    chunks = replies[-1].summary.chunks_written
    listed = {
        c.name: c
        for c in (await retrieval.ListCollections(retrieval_pb2.ListCollectionsRequest())).collections
    }
    doomed = listed["doomed"]
    assert (doomed.documents, doomed.chunks) == (len(documents), chunks)
    assert doomed.embedding_model == local_embedding_model().name and doomed.embedding_dimensions == 384
    assert list(listed) == sorted(listed)

    deleted = await retrieval.DeleteCollection(retrieval_pb2.DeleteCollectionRequest(collection="doomed"))
    assert (deleted.deleted_documents, deleted.deleted_chunks) == (len(documents), chunks)
    reply = await retrieval.ListCollections(retrieval_pb2.ListCollectionsRequest())
    assert "doomed" not in [c.name for c in reply.collections] and reply.backend in ("edge", "qdrant")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.Search(retrieval_pb2.SearchRequest(collection="doomed", query="citations"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:  # no default collection is deleted by omission
        await retrieval.DeleteCollection(retrieval_pb2.DeleteCollectionRequest())
    assert "collection" in field_violations(caught.value)
    # Ingested again, it comes back whole.
    again = await ingest(retrieval, "doomed", documents)
    assert again[-1].summary.documents_indexed == len(documents)


async def test_an_ingest_that_indexes_nothing_creates_no_collection(retrieval):
    broken = retrieval_pb2.Document(source_path="gone.md", read_error="cannot read the file")
    for name, documents in [("nothing-sent", []), ("all-failed", [broken])]:
        replies = await ingest(retrieval, name, documents)
        assert replies[-1].summary.documents_indexed == 0
        names = [
            c.name
            for c in (await retrieval.ListCollections(retrieval_pb2.ListCollectionsRequest())).collections
        ]
        assert name not in names
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await retrieval.Stats(retrieval_pb2.StatsRequest(collection=name))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_list_documents_pages_and_delete_documents(retrieval):
    documents = sample_documents()
    await ingest(retrieval, "paged", documents)
    seen, token = [], ""
    while True:
        page = await retrieval.ListDocuments(
            retrieval_pb2.ListDocumentsRequest(collection="paged", page_size=2, page_token=token)
        )
        assert len(page.documents) <= 2 and page.total_size == len(documents)
        seen += [d.source_path for d in page.documents]
        token = page.next_page_token
        if not token:
            break
    assert seen == sorted(d.source_path for d in documents)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.ListDocuments(retrieval_pb2.ListDocumentsRequest(collection="paged", page_size=5000))
    assert "page_size" in field_violations(caught.value)

    deleted = await retrieval.DeleteDocuments(
        retrieval_pb2.DeleteDocumentsRequest(collection="paged", document_ids=["intro.md", "missing.md"])
    )
    assert (
        deleted.deleted_documents == 1
        and deleted.deleted_chunks > 0
        and list(deleted.not_found) == ["missing.md"]
    )
    stats = await retrieval.Stats(retrieval_pb2.StatsRequest(collection="paged"))
    assert stats.documents == len(documents) - 1
    assert stats.embedding_model == local_embedding_model().name and stats.embedding_dimensions == 384
    assert "paged" in stats.collections
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.DeleteDocuments(retrieval_pb2.DeleteDocumentsRequest(collection="paged"))
    assert "document_ids" in field_violations(caught.value)


async def test_a_qdrant_server_that_is_down_is_unavailable_with_a_clear_message(tmp_path):
    settings = RetrievalSettings(port=0, data_dir=tmp_path, backend="qdrant", qdrant_url="http://127.0.0.1:9")
    server, port = await build_server(settings)
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Search(retrieval_pb2.SearchRequest(query="anything"), timeout=30)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "127.0.0.1:9" in caught.value.details()
    finally:
        await server.stop(grace=0)
