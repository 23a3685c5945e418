"""`glossator ingest`: stream a folder or a site to the retrieval service, with a progress bar."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any, TypeVar

import grpc
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.connect import add_target_option, explain_rpc_error, service_channel
from services.retrieval.ingest import SourceDocument, SourceError, crawl_sitemap, read_folder

T = TypeVar("T")

_FORMATS = {
    "markdown": retrieval_pb2.DOCUMENT_FORMAT_MARKDOWN,
    "mdx": retrieval_pb2.DOCUMENT_FORMAT_MDX,
    "html": retrieval_pb2.DOCUMENT_FORMAT_HTML,
    "text": retrieval_pb2.DOCUMENT_FORMAT_TEXT,
    "": retrieval_pb2.DOCUMENT_FORMAT_UNSPECIFIED,
}


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "ingest",
        help="ingest a folder of Markdown/MDX/HTML/text files or a site's sitemap.xml",
        description="Streams documents to the retrieval service. Unchanged documents are skipped; "
        "changed ones replace their old chunks; --prune deletes documents gone from the source.",
    )
    parser.add_argument("source", help="a folder, or the URL of a sitemap.xml (http:// or https://)")
    parser.add_argument("--collection", default="default", help="collection (book) to write into")
    parser.add_argument(
        "--base-url", default="", help="public URL of the folder's root, e.g. https://x.dev/docs/"
    )
    parser.add_argument("--prune", action="store_true", help="delete documents no longer in the source")
    parser.add_argument("--concurrency", type=int, default=4, help="pages fetched at once from a site")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    add_target_option(parser, "retrieval")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_ingest(args))


def to_document(item: SourceDocument | SourceError) -> retrieval_pb2.Document:
    if isinstance(item, SourceError):
        return retrieval_pb2.Document(source_path=item.source_path, read_error=item.message)
    return retrieval_pb2.Document(
        document_id=item.document_id,
        source_path=item.source_path,
        source_url=item.source_url,
        content=item.content,
        format=_FORMATS[item.format],
        category_labels=item.category_labels,
        title=item.title,
    )


async def ingest_requests(
    options: retrieval_pb2.IngestOptions, items: AsyncIterator[SourceDocument | SourceError]
) -> AsyncIterator[retrieval_pb2.IngestRequest]:
    yield retrieval_pb2.IngestRequest(options=options)
    async for item in items:
        yield retrieval_pb2.IngestRequest(document=to_document(item))


async def ingest(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    requests: AsyncIterator[retrieval_pb2.IngestRequest],
    **call_options: Any,
) -> AsyncIterator[retrieval_pb2.IngestResponse]:
    """The replies of an Ingest of `requests`, written only once the server accepted the stream.

    A server refuses an Ingest (no token, a reader's token, too many ingests) before reading it;
    a write racing that refusal would turn its status into INTERNAL on the client side
    (grpc/grpc#36066). Waiting for the headers the server sends on accepting avoids the race.
    """
    call = stub.Ingest(**call_options)
    await call.initial_metadata()
    if call.done():
        await call.read()  # raises the refusal's status
    writer = asyncio.create_task(_write_all(call, requests))
    try:
        async for reply in call:
            yield reply
    except (asyncio.CancelledError, grpc.aio.AioRpcError):
        if writer.done() and not writer.cancelled() and writer.exception() is not None:
            raise writer.exception() from None  # the source failed: that is the news, not CANCELLED
        raise
    finally:
        writer.cancel()
    await writer


async def _write_all(call: grpc.aio.StreamStreamCall, requests: AsyncIterator[Any]) -> None:
    """Writes the requests and half-closes; a failing source cancels the call rather than stall it."""
    try:
        async for request in requests:
            await call.write(request)
        await call.done_writing()
    except grpc.aio.AioRpcError:
        return  # the call ended: the reader sees why
    except BaseException:
        call.cancel()
        raise


async def async_iter(items: Iterable[T]) -> AsyncIterator[T]:
    """A plain iterable as the async stream a gRPC streaming call takes."""
    for item in items:
        yield item


def _items(args: argparse.Namespace) -> AsyncIterator[SourceDocument | SourceError]:
    if args.source.startswith(("http://", "https://")):
        return crawl_sitemap(args.source, concurrency=args.concurrency)
    return async_iter(read_folder(Path(args.source)))


async def _ingest(args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    if not args.source.startswith(("http://", "https://")) and not Path(args.source).is_dir():
        console.print(f"[red]error:[/] {args.source} is not a folder or a sitemap URL")
        return 2
    options = retrieval_pb2.IngestOptions(
        collection=args.collection, base_url=args.base_url, prune=args.prune
    )
    failures: list[retrieval_pb2.DocumentResult] = []
    summary = None
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn(
            "{task.fields[docs]} documents · {task.fields[chunks]} chunks · "
            "{task.fields[rate]:.0f} chunks/s · {task.fields[skipped]} skipped · {task.fields[failed]} failed"
        ),
        TimeElapsedColumn(),
        console=console,
        disable=args.quiet,
        transient=False,
    )
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with progress:
                task = progress.add_task(
                    "ingesting", total=None, docs=0, chunks=0, rate=0.0, skipped=0, failed=0
                )
                async for reply in ingest(stub, ingest_requests(options, _items(args))):
                    p = reply.progress
                    progress.update(
                        task,
                        docs=p.documents_done,
                        chunks=p.chunks_written,
                        rate=p.chunks_per_second,
                        skipped=p.documents_unchanged,
                        failed=p.documents_failed,
                    )
                    if (
                        reply.HasField("document")
                        and reply.document.status == retrieval_pb2.DOCUMENT_STATUS_FAILED
                    ):
                        failures.append(reply.document)
                    if reply.HasField("summary"):
                        summary = reply.summary
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    for failure in failures:
        console.print(f"[yellow]failed[/] {failure.source_path}: {failure.error}")
    if summary is None:
        console.print("[red]error:[/] the ingest stream ended without a summary")
        return 2
    print(
        f"{summary.documents_done} documents: {summary.documents_indexed} indexed, "
        f"{summary.documents_unchanged} unchanged, {summary.documents_failed} failed, "
        f"{summary.documents_deleted} deleted; {summary.chunks_written} chunks written "
        f"({summary.chunks_per_second:.0f}/s), {summary.chunks_deleted} deleted, "
        f"in {summary.elapsed_ms / 1000:.1f} s",
        file=sys.stdout,
    )
    return 1 if summary.documents_failed else 0
