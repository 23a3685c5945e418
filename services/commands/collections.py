"""`glossator collections` and `glossator documents`: what the retrieval service stores, listed
and deleted (ListCollections, DeleteCollection, ListDocuments, DeleteDocuments).

A delete asks first, on the terminal; --yes answers for it (a script, a pipe: without --yes
nothing is deleted).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import grpc

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.ask import message_dict, print_json
from services.commands.connect import add_target_option, explain_rpc_error, service_channel

# Deadline of one listing or delete call (a large collection's delete takes a while on a server).
_CALL_SECONDS = 120.0


def add_parsers(commands) -> None:
    collections = commands.add_parser(
        "collections",
        description="Lists the collections (books) with their document and chunk counts, or deletes "
        "one with everything in it (admin).",
    )
    collections.add_argument("action", nargs="?", choices=("list", "delete"), default="list")
    collections.add_argument("name", nargs="?", default="", help="the collection to delete")
    _options(collections)
    collections.set_defaults(func=lambda args: asyncio.run(_collections(args)))

    documents = commands.add_parser(
        "documents",
        description="Lists the documents of a collection, or deletes some by id with their chunks (admin).",
    )
    documents.add_argument("action", choices=("list", "delete"))
    documents.add_argument("document_ids", nargs="*", metavar="DOCUMENT_ID", help="to delete, as listed")
    documents.add_argument("--collection", default="default", help="the collection (book)")
    _options(documents)
    documents.set_defaults(func=lambda args: asyncio.run(_documents(args)))


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", "-y", action="store_true", help="delete without asking")
    parser.add_argument("--json", action="store_true", help="print JSON with every field")
    add_target_option(parser, "retrieval")


def confirmed(question: str, yes: bool) -> bool:
    """Whether the user agrees: --yes, or "y" on the terminal. With no terminal to ask on and no
    --yes, the answer is no (and the user is told so)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        print(f"error: {question} Not deleted: pass --yes to delete without a terminal", file=sys.stderr)
        return False
    try:
        answer = input(f"{question} This cannot be undone. [y/N] ")
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        answer = ""
    if answer.strip().lower() not in ("y", "yes"):
        print("not deleted", file=sys.stderr)
        return False
    return True


async def _collections(args: argparse.Namespace) -> int:
    if args.action == "delete" and not args.name:
        print("error: `collections delete` needs the name of the collection", file=sys.stderr)
        return exit_codes.USAGE
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            if args.action == "list":
                reply = await stub.ListCollections(
                    retrieval_pb2.ListCollectionsRequest(), timeout=_CALL_SECONDS
                )
                _print_collections(reply, args.json)
                return exit_codes.OK
            stats = await stub.Stats(retrieval_pb2.StatsRequest(collection=args.name), timeout=_CALL_SECONDS)
            question = f"Delete collection {args.name!r} with its {stats.documents} documents and {stats.chunks} chunks?"
            if not confirmed(question, args.yes):
                return exit_codes.USAGE
            deleted = await stub.DeleteCollection(
                retrieval_pb2.DeleteCollectionRequest(collection=args.name), timeout=_CALL_SECONDS
            )
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    if args.json:
        print_json(message_dict(deleted))
    else:
        print(
            f"deleted collection {args.name!r}: {deleted.deleted_documents} documents, "
            f"{deleted.deleted_chunks} chunks"
        )
    return exit_codes.OK


def _print_collections(reply: retrieval_pb2.ListCollectionsResponse, as_json: bool) -> None:
    if as_json:
        print_json(message_dict(reply))
    elif not reply.collections:  # said on stderr: stdout holds only rows
        print("no collections: `glossator ingest PATH --collection NAME` makes one", file=sys.stderr)
    else:
        width = max(10, *(len(c.name) for c in reply.collections))
        print(f"{'COLLECTION':<{width}}  {'DOCUMENTS':>9}  {'CHUNKS':>7}  MODEL")
        for c in reply.collections:
            print(f"{c.name:<{width}}  {c.documents:>9}  {c.chunks:>7}  {c.embedding_model}")


async def _documents(args: argparse.Namespace) -> int:
    if args.action == "delete" and not args.document_ids:
        print("error: `documents delete` needs the ids of the documents", file=sys.stderr)
        return exit_codes.USAGE
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            if args.action == "list":
                _print_documents(await _all_documents(stub, args.collection), args.json)
                return exit_codes.OK
            ids = list(dict.fromkeys(args.document_ids))
            question = f"Delete {len(ids)} document(s) from collection {args.collection!r} with their chunks?"
            if not confirmed(question, args.yes):
                return exit_codes.USAGE
            deleted = await stub.DeleteDocuments(
                retrieval_pb2.DeleteDocumentsRequest(collection=args.collection, document_ids=ids),
                timeout=_CALL_SECONDS,
            )
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    if args.json:
        print_json(message_dict(deleted))
    else:
        print(f"deleted {deleted.deleted_documents} documents, {deleted.deleted_chunks} chunks")
    for missing in deleted.not_found:
        print(f"error: no document {missing!r} in collection {args.collection!r}", file=sys.stderr)
    return exit_codes.NOT_FOUND if deleted.not_found else exit_codes.OK


async def _all_documents(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, collection: str
) -> list[retrieval_pb2.DocumentInfo]:
    documents: list[retrieval_pb2.DocumentInfo] = []
    token = ""
    while True:
        page = await stub.ListDocuments(
            retrieval_pb2.ListDocumentsRequest(collection=collection, page_size=1000, page_token=token),
            timeout=_CALL_SECONDS,
        )
        documents.extend(page.documents)
        token = page.next_page_token
        if not token:
            return documents


def _print_documents(documents: list[retrieval_pb2.DocumentInfo], as_json: bool) -> None:
    if as_json:
        print_json({"documents": [message_dict(d) for d in documents]})
    elif not documents:
        print("no documents", file=sys.stderr)
    else:
        width = max(11, *(len(d.document_id) for d in documents))
        print(f"{'DOCUMENT_ID':<{width}}  {'CHUNKS':>6}  {'INDEXED AT':<20}  SOURCE")
        for d in documents:
            indexed = d.indexed_at.ToDatetime().strftime("%Y-%m-%dT%H:%M:%SZ")
            print(
                f"{d.document_id:<{width}}  {d.chunk_count:>6}  {indexed:<20}  {d.source_url or d.source_path}"
            )
