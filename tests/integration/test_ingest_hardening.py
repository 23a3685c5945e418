"""Ingest against hostile input, through a real retrieval server: YAML bombs in front matter, long
error texts, and links that are not http(s) (javascript:, file:...) offered as citations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter
from services.common.clients import make_channel
from services.retrieval.config import RetrievalSettings
from services.retrieval.ingest.documents import MAX_ERROR_CHARS
from services.retrieval.server import build_server
from tests.grpc_helpers import field_violations
from tests.unit.retrieval.ingest.helpers import alias_bomb

FAILED = retrieval_pb2.DOCUMENT_STATUS_FAILED
INDEXED = retrieval_pb2.DOCUMENT_STATUS_INDEXED
FINE = retrieval_pb2.Document(
    source_path="lighthouse.md",
    content="# Lighthouses\n\nThe keeper trims the lamp's wick every evening before dusk falls on the bay.",
)
FINE_TOO = retrieval_pb2.Document(
    source_path="harbour.md", content="# Harbours\n\nThe harbour master logs every ship that enters."
)
NOT_LINKS = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "file:///etc/passwd",
    "data:text/html,<script>alert(1)</script>",
    "ftp://example.org/docs/",
    "http:/no-host",
]


@asynccontextmanager
async def serving(settings: RetrievalSettings) -> AsyncIterator[retrieval_pb2_grpc.RetrievalServiceStub]:
    server, port = await build_server(settings)
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            yield retrieval_pb2_grpc.RetrievalServiceStub(channel)
    finally:
        await server.stop(grace=0)


@pytest.fixture(scope="module")
async def retrieval(tmp_path_factory):
    async with serving(
        RetrievalSettings(port=0, data_dir=tmp_path_factory.mktemp("ingest-hardening"))
    ) as stub:
        yield stub


async def ingest(
    stub, collection: str, documents, base_url: str = ""
) -> dict[str, retrieval_pb2.DocumentResult]:
    """The result of each document by source_path (the deadline is far below the 44 s a bomb took)."""
    options = retrieval_pb2.IngestOptions(collection=collection, base_url=base_url)
    requests = [retrieval_pb2.IngestRequest(options=options)]
    requests += [retrieval_pb2.IngestRequest(document=document) for document in documents]
    replies = [reply async for reply in stub.Ingest(async_iter(requests), timeout=20)]
    assert replies[-1].HasField("summary")
    return {r.document.source_path: r.document for r in replies if r.HasField("document")}


async def rejection(stub, *requests: retrieval_pb2.IngestRequest) -> grpc.aio.AioRpcError:
    """The status an Ingest is ended with. The requests are written one by one and the stream left
    open, so that no write races the server's early status (grpc/grpc#36066: the client would then
    report INTERNAL instead)."""
    call = stub.Ingest(timeout=20)
    for request in requests:
        await call.write(request)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call.read()
    return caught.value


async def top_hit(stub, collection: str) -> retrieval_pb2.ScoredChunk:
    reply = await stub.Search(
        retrieval_pb2.SearchRequest(collection=collection, query="Who trims the lamp's wick?"), timeout=10
    )
    return reply.results[0]


async def test_alias_bomb_fails_its_document_at_once_and_search_goes_on(retrieval):
    bomb = retrieval_pb2.Document(source_path="bomb.md", content=alias_bomb())
    results = await ingest(retrieval, "bomb", [bomb, FINE])

    assert results["bomb.md"].status == FAILED
    assert results["bomb.md"].error.startswith("front matter uses YAML aliases")
    assert len(results["bomb.md"].error) <= MAX_ERROR_CHARS
    assert results["lighthouse.md"].status == INDEXED
    assert (await top_hit(retrieval, "bomb")).chunk.source_path == "lighthouse.md"


async def test_errors_are_short_and_never_quote_values(retrieval):
    long_list = "[" + ",".join(['"lol"'] * 5000) + "]"
    documents = [
        retrieval_pb2.Document(
            source_path="list.md", content=f"---\nsidebar_position: {long_list}\n---\n# x\n"
        ),
        retrieval_pb2.Document(
            source_path="tag.md", content=f"---\ntitle: !<tag:{'x' * 5000}> t\n---\n# x\n"
        ),
        retrieval_pb2.Document(source_path="date.md", content="---\ndate: 2024-13-45\n---\n# x\n"),
        retrieval_pb2.Document(source_path="unreadable.md", read_error="cannot read: " + "x" * 5000),
        FINE,
    ]
    results = await ingest(retrieval, "errors", documents)

    assert results["list.md"].error == "front matter 'sidebar_position' must be a number, not list"
    assert results["tag.md"].error.startswith("front matter is broken at line 2: ")
    assert results["date.md"].error.startswith("front matter holds a value YAML cannot build")
    assert results["unreadable.md"].error.startswith("cannot read: xxx")
    for result in (results[path] for path in ("list.md", "tag.md", "date.md", "unreadable.md")):
        assert result.status == FAILED and len(result.error) <= MAX_ERROR_CHARS, result.error[:100]
    assert results["lighthouse.md"].status == INDEXED


@pytest.mark.parametrize("base_url", NOT_LINKS)
async def test_a_base_url_that_is_not_an_http_link_is_invalid_argument(retrieval, base_url):
    options = retrieval_pb2.IngestOptions(collection="links", base_url=base_url)
    error = await rejection(retrieval, retrieval_pb2.IngestRequest(options=options))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.base_url" in field_violations(error)


@pytest.mark.parametrize("source_url", NOT_LINKS)
async def test_a_source_url_that_is_not_an_http_link_is_invalid_argument(retrieval, source_url):
    document = retrieval_pb2.Document(source_path="page.md", source_url=source_url, content=FINE.content)
    error = await rejection(
        retrieval,
        retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection="links")),
        retrieval_pb2.IngestRequest(document=document),
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "source_path page.md" in field_violations(error)["document.source_url"]


@pytest.mark.parametrize(
    ("base_url", "source_url", "cited"),
    [
        ("https://example.org/docs/", "", "https://example.org/docs/lighthouse#lighthouses"),
        ("/docs/", "", "/docs/lighthouse#lighthouses"),
        ("", "http://example.org/keepers", "http://example.org/keepers#lighthouses"),
        ("", "guides/keepers.html", "guides/keepers.html#lighthouses"),
    ],
)
async def test_http_and_relative_links_are_cited(retrieval, base_url, source_url, cited):
    document = retrieval_pb2.Document(
        source_path=FINE.source_path, source_url=source_url, content=FINE.content
    )
    results = await ingest(retrieval, "cited", [document], base_url=base_url)  # each case replaces the last
    assert results["lighthouse.md"].status == INDEXED
    assert (await top_hit(retrieval, "cited")).chunk.source_url == cited


async def test_a_source_path_that_would_make_a_javascript_link_fails_its_document(retrieval):
    """With no base_url or source_url the source path is the link: it must not carry a scheme."""
    document = retrieval_pb2.Document(source_path="javascript:alert(1).md", content=FINE.content)
    results = await ingest(retrieval, "derived", [document, FINE])
    assert results["javascript:alert(1).md"].status == FAILED
    assert "URL must be an http(s) URL or a relative URL, not a javascript: URL" in (
        results["javascript:alert(1).md"].error
    )
    assert results["lighthouse.md"].status == INDEXED


@pytest.mark.parametrize(
    ("content", "format"),
    [
        ("", retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED),
        ("  \n\n ", retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED),
        ("---\ntitle: Only front matter\n---\n", retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED),
        ("<!-- a comment -->", retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED),
        ("<html><body></body></html>", retrieval_pb2.DOCUMENT_FORMAT_HTML),
    ],
)
async def test_a_document_with_no_text_fails_and_keeps_what_was_indexed(retrieval, content, format):
    """Once an INTERNAL that ended the whole stream (the indexer zipped chunks with no vectors)."""
    await ingest(retrieval, "emptied", [FINE])
    emptied = retrieval_pb2.Document(source_path=FINE.source_path, content=content, format=format)
    results = await ingest(retrieval, "emptied", [emptied, FINE_TOO])
    assert results[FINE.source_path].status == FAILED
    assert results[FINE.source_path].error.startswith("has no text to index")
    assert results[FINE_TOO.source_path].status in (INDEXED, retrieval_pb2.DOCUMENT_STATUS_UNCHANGED)
    found = await retrieval.Search(
        retrieval_pb2.SearchRequest(query="Who trims the lamp's wick?", collection="emptied"), timeout=20
    )
    assert found.results[0].chunk.source_path == FINE.source_path  # the page's chunks are kept


async def test_the_front_matter_limit_is_a_setting(tmp_path):
    settings = RetrievalSettings(port=0, data_dir=tmp_path, max_front_matter_bytes=1024)
    page = retrieval_pb2.Document(
        source_path="long.md", content="---\ndescription: " + "x" * 2000 + "\n---\n# Long\n"
    )
    async with serving(settings) as stub:
        results = await ingest(stub, "limits", [page, FINE])
    assert results["long.md"].error == "front matter is 2,014 bytes, over the limit of 1,024 bytes"
    assert results["lighthouse.md"].status == INDEXED
