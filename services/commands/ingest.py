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

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import add_target_option, explain_rpc_error, service_channel
from services.commands.progress import Progress
from services.retrieval.ingest import (
    SitemapError,
    SiteUnreachable,
    SourceDocument,
    SourceError,
    crawl_sitemap,
    read_folder,
)
from services.retrieval.ingest.sources import (
    SOURCE_EXTENSIONS,
    count_pages,
    is_page,
    other_extensions,
    read_file,
)

T = TypeVar("T")

_READ = ", ".join(sorted(SOURCE_EXTENSIONS))

# No progress this long after the stream started: the server may be waiting for another ingest
# into the collection (one at a time), which it does silently, or still on a long first document
# (it sends nothing on taking the collection, so the two look alike from here).
_QUIET_SECONDS = 2.0

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
        description="Streams documents to the retrieval service. Unchanged documents are skipped; "
        "changed ones replace their old chunks; --prune deletes documents gone from the source.",
    )
    parser.add_argument(
        "source",
        help=f"a folder, one file, or the URL of a sitemap.xml (http:// or https://); files read: {_READ}",
    )
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
    """Ctrl-C ends the run with a line, not a traceback: what was stored stays, and a run again
    skips it (the service marks a document done only once it is completely written)."""
    try:
        return asyncio.run(_ingest(args))
    except KeyboardInterrupt:
        print("\ninterrupted; run again to resume (documents already stored are skipped)", file=sys.stderr)
        return exit_codes.INTERRUPTED


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
    """The options, every item as a document, then `end`: the source was read to its end (a source
    that fails raises before it, so that its run never prunes)."""
    yield retrieval_pb2.IngestRequest(options=options)
    async for item in items:
        yield retrieval_pb2.IngestRequest(document=to_document(item))
    yield retrieval_pb2.IngestRequest(end=retrieval_pb2.IngestEnd())


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


async def ingest_folder(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    folder: Path,
    options: retrieval_pb2.IngestOptions,
    **call_options: Any,
) -> retrieval_pb2.IngestProgress | None:
    """Ingests every page of `folder` with `options`; returns the summary (None: the stream ended
    without one)."""
    summary = None
    requests = ingest_requests(options, async_iter(read_folder(folder)))
    async for reply in ingest(stub, requests, **call_options):
        if reply.HasField("summary"):
            summary = reply.summary
    return summary


async def _write_all(call: grpc.aio.StreamStreamCall, requests: AsyncIterator[Any]) -> None:
    """Writes the requests and half-closes; a failing source cancels the call rather than stall
    it (its requests never reach `end`, so the server never takes its run for complete)."""
    try:
        async for request in requests:
            await call.write(request)
        await call.done_writing()
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        # The call ended (a refusal after the headers, e.g. FAILED_PRECONDITION for vectors of
        # another model, while a write was on its way): the reader sees why.
        return
    except BaseException:
        call.cancel()
        raise


async def async_iter(items: Iterable[T]) -> AsyncIterator[T]:
    """A plain iterable as the async stream a gRPC streaming call takes."""
    for item in items:
        yield item


def _is_site(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _items(args: argparse.Namespace) -> AsyncIterator[SourceDocument | SourceError]:
    if _is_site(args.source):
        return crawl_sitemap(args.source, concurrency=args.concurrency)
    path = Path(args.source)
    return async_iter(read_folder(path) if path.is_dir() else [read_file(path)])


def _source_problem(source: str, prune: bool) -> tuple[str, int] | None:
    """Why a local source cannot be ingested (and the exit code), before anything is sent."""
    path = Path(source)
    if path.is_file():
        if not is_page(path.name):
            return f"{source} is not a file glossator reads: it reads {_READ}", exit_codes.USAGE
        if prune:
            return (
                f"--prune with one file would delete every other document of the collection: "
                f"prune with the folder that holds {path.name} instead",
                exit_codes.USAGE,
            )
        return None
    if not path.is_dir():
        return f"{source} is not a folder, a file or a sitemap URL (http:// or https://)", exit_codes.USAGE
    if count_pages(path):
        return None
    others = other_extensions(path)
    found = ", ".join(f"{count} {extension}" for extension, count in others.items()) or "no files"
    return f"no pages in {source}: glossator reads {_READ} files (found {found})", exit_codes.NOT_FOUND


async def _ingest(args: argparse.Namespace) -> int:
    console = Console(stderr=True, soft_wrap=True)  # long paths and advice: wrapped by the terminal
    if not _is_site(args.source) and (problem := _source_problem(args.source, args.prune)):
        message, code = problem
        console.print(f"[red]error:[/] {message}", highlight=False)
        return code
    options = retrieval_pb2.IngestOptions(
        collection=args.collection, base_url=args.base_url, prune=args.prune
    )
    failures: list[retrieval_pb2.DocumentResult] = []
    summary = None
    # A folder's page count comes from its listing, so the progress has a total and a percentage.
    total = None if _is_site(args.source) else (count_pages(args.source) if Path(args.source).is_dir() else 1)
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            waiting = asyncio.get_running_loop().call_later(
                _QUIET_SECONDS,
                console.print,
                f"no progress after {_QUIET_SECONDS:g} s: waiting for another ingest into collection "
                f"{args.collection!r} to finish, or for a long first document...",
            )
            with Progress("ingesting", total, "documents", quiet=args.quiet, console=console) as progress:
                try:
                    async for reply in ingest(stub, ingest_requests(options, _items(args))):
                        waiting.cancel()
                        p = reply.progress
                        progress.update(
                            p.documents_done,
                            f"{p.chunks_written} chunks ({p.chunks_per_second:.0f}/s) · "
                            f"{p.documents_unchanged} skipped · {p.documents_failed} failed",
                        )
                        if (
                            reply.HasField("document")
                            and reply.document.status == retrieval_pb2.DOCUMENT_STATUS_FAILED
                        ):
                            failures.append(reply.document)
                        if reply.HasField("summary"):
                            summary = reply.summary
                finally:
                    waiting.cancel()
    except SiteUnreachable as error:  # may pass: a scheduler's retry is worth it (exit 3)
        console.print(f"[red]error:[/] {error}", highlight=False)
        return exit_codes.UNREACHABLE
    except SitemapError as error:
        console.print(f"[red]error:[/] {error}", highlight=False)
        return exit_codes.NOT_FOUND
    except grpc.aio.AioRpcError as error:
        code = explain_rpc_error(error, args.target)
        if error.code() == grpc.StatusCode.ABORTED:
            console.print(
                f"  Another ingest into collection {args.collection!r} is still running, and ingests "
                "into one collection run one at a time: the server waited for it (up to "
                "GLOSSATOR_RETRIEVAL_INGEST_LOCK_WAIT_SECONDS), then gave up. Run this ingest again "
                "once the other one has finished.",
                markup=False,
            )
        return code
    for failure in failures:
        console.print(f"[yellow]failed[/] {failure.source_path}: {failure.error}")
    if summary is None:
        console.print("[red]error:[/] the ingest stream ended without a summary")
        return exit_codes.RPC_FAILED
    print(
        f"{summary.documents_done} documents: {summary.documents_indexed} indexed, "
        f"{summary.documents_unchanged} unchanged, {summary.documents_failed} failed, "
        f"{summary.documents_deleted} deleted; {summary.chunks_written} chunks written "
        f"({summary.chunks_per_second:.0f}/s), {summary.chunks_deleted} deleted, "
        f"in {summary.elapsed_ms / 1000:.1f} s",
        file=sys.stdout,
    )
    if summary.documents_failed:
        return exit_codes.DOCUMENTS_FAILED
    if not summary.documents_done:  # a sitemap that lists no page (a folder without one never gets here)
        console.print(f"[red]error:[/] no pages in {args.source}", highlight=False)
        return exit_codes.NOT_FOUND
    return exit_codes.OK
