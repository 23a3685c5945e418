"""`glossator search`: one Search call, printed as a ranked list (or JSON)."""

from __future__ import annotations

import argparse
import asyncio
import json

import grpc
from google.protobuf.json_format import MessageToDict

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import add_target_option, explain_rpc_error, service_channel
from services.common.contract_limits import DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K
from services.retrieval.search import snippet

MODES = {
    "hybrid": common_pb2.SEARCH_MODE_HYBRID,
    "dense": common_pb2.SEARCH_MODE_DENSE,
    "sparse": common_pb2.SEARCH_MODE_SPARSE,
}


def search_filter(text: str) -> tuple[str, str]:
    """A --filter as (key, value): without "=" or a value it would filter nothing, so it is a usage
    error naming it rather than a filter dropped in silence (the service checks the keys)."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (for example section=Installation)")
    return key.strip(), value


def add_parser(commands) -> None:
    parser = commands.add_parser("search")
    parser.add_argument("query")
    parser.add_argument("--collection", default="default")
    parser.add_argument(
        "--top-k", type=int, default=DEFAULT_TOP_K, help=f"{MIN_TOP_K}-{MAX_TOP_K} (default {DEFAULT_TOP_K})"
    )
    parser.add_argument("--min-relevance", type=float, default=None, help="0-1 (default: the service's, 0.3)")
    parser.add_argument("--mode", choices=MODES, default="hybrid")
    parser.add_argument(
        "--filter",
        action="append",
        type=search_filter,
        default=[],
        metavar="KEY=VALUE",
        help="source_url_prefix, source_path_prefix, section or document_id (repeatable)",
    )
    parser.add_argument("--json", action="store_true", help="print the response as JSON")
    add_target_option(parser, "retrieval")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_search(args))


async def _search(args: argparse.Namespace) -> int:
    request = retrieval_pb2.SearchRequest(
        collection=args.collection,
        query=args.query,
        top_k=args.top_k,
        mode=MODES[args.mode],
        filters=dict(args.filter),
    )
    if args.min_relevance is not None:
        request.min_relevance = args.min_relevance
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            reply = await retrieval_pb2_grpc.RetrievalServiceStub(channel).Search(request, timeout=30)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    if args.json:
        # Every field, false and zero ones too: a client reading the JSON finds every key.
        print(json.dumps(MessageToDict(reply, always_print_fields_with_no_presence=True), indent=2))
        return exit_codes.OK
    for result in reply.results:
        chunk = result.chunk
        print(f"{result.rank}. [{result.relevance:.2f}] {' > '.join(chunk.section_path) or chunk.title}")
        print(f"   {chunk.source_url}")
        print(f"   {snippet(chunk.text, [(s.start, s.end, s.similarity) for s in result.sentences])}")
    m = reply.metadata
    print(
        f"-- {len(reply.results)} of {m.candidates} candidates · embedding {m.embedding_ms:.1f} ms · "
        f"search {m.search_ms:.1f} ms · total {m.total_ms:.1f} ms"
    )
    return exit_codes.OK
