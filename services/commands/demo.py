"""`glossator demo`: the main job on the embedded default, in one command.

Starts the three services in this process (Qdrant embedded, data under .glossator/demo), ingests
the project's own docs/, asks a question and streams the cited, validated answer.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import grpc

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.ask import stream_answer
from services.commands.connect import explain_rpc_error, suite_channels
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.retrieval.ingest import read_folder

DOCS = Path(__file__).resolve().parents[2] / "docs"
QUESTION = "How does Glossator check that an answer is grounded?"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "demo", help="start the embedded suite, ingest docs/, ask, stream the answer"
    )
    parser.add_argument("question", nargs="?", default=QUESTION)
    parser.add_argument(
        "--docs", type=Path, default=DOCS, help="folder to ingest (default: the project's docs/)"
    )
    parser.add_argument("--data-dir", type=Path, default=Path(".glossator/demo"))
    parser.set_defaults(func=lambda args: asyncio.run(_demo(args)))


async def _demo(args: argparse.Namespace) -> int:
    print("starting the embedded suite (Qdrant in-process, all-MiniLM-L6-v2 on the CPU)...", file=sys.stderr)
    try:
        async with suite_channels({"retrieval": "", "agent": ""}, args.data_dir) as channels:
            retrieval = retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"])
            options = retrieval_pb2.IngestOptions(base_url="https://glossator.dev/docs/")
            summary = None
            async for reply in ingest(
                retrieval, ingest_requests(options, async_iter(read_folder(args.docs)))
            ):
                summary = reply.summary if reply.HasField("summary") else summary
            print(
                f"ingested {args.docs}: {summary.documents_indexed} indexed, {summary.documents_unchanged} "
                f"unchanged, {summary.chunks_written} chunks written",
                file=sys.stderr,
            )
            agent = agent_pb2_grpc.AgentServiceStub(channels["agent"])
            print(f"\n> {args.question}\n")
            await stream_answer(agent, agent_pb2.AskRequest(query=args.question, user_id="demo"))
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, f"the embedded suite (data under {args.data_dir})")
    return exit_codes.OK
