"""`glossator eval answers --squad`: SQuAD questions asked through AskStream; answer containment and
citations of the question's own paragraph."""

from __future__ import annotations

import argparse
import statistics

import grpc

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2_grpc
from services.commands.connect import explain_rpc_error, suite_channels
from services.commands.eval.shared import bounded, print_figures, spread, usage_error
from services.commands.eval.squad import EVAL_COLLECTION, SquadQuestion, ingest_squad, load_squad
from services.commands.progress import Progress
from services.common.contract_limits import MAX_QUERY_CHARS


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def answer_figures(rows: list[tuple[SquadQuestion, agent_pb2.Response, bool]]) -> dict[str, float]:
    """containment: a gold answer inside the answer; own_paragraph_citations: among answers whose
    retrieval found the question's paragraph, the share citing only that paragraph."""
    contained = [any(_normalise(a) in _normalise(r.answer) for a in q.answers) for q, r, _ in rows]
    retrieved = [(q, r) for q, r, found in rows if found]
    own = [bool(r.sources) and all(s.document_id == q.document_id for s in r.sources) for q, r in retrieved]
    lengths = [len(r.answer) for _, r, _ in rows]
    return {
        "containment": round(sum(contained) / len(rows), 4),
        "own_paragraph_citations": round(sum(own) / len(own), 4) if own else 0.0,
        "paragraph_retrieved": round(len(retrieved) / len(rows), 4),
        "median_answer_chars": statistics.median(lengths),
        "not_covered": round(sum(r.not_covered for _, r, _ in rows) / len(rows), 4),
        "questions": len(rows),
    }


async def eval_squad_answers(args: argparse.Namespace) -> int:
    if args.split is not None or args.rows:
        return usage_error("--split and --rows go with --questions, not --squad")
    documents, questions = load_squad(args.squad)
    questions = spread(questions, args.limit)
    collection = args.collection or EVAL_COLLECTION
    targets = {"retrieval": args.retrieval, "agent": args.target}
    try:
        async with suite_channels(targets, args.embedded) as channels:
            await ingest_squad(
                retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"]), documents, collection
            )
            agent = agent_pb2_grpc.AgentServiceStub(channels["agent"])

            async def ask(q: SquadQuestion) -> tuple[SquadQuestion, agent_pb2.Response, bool]:
                found, response = False, None
                request = agent_pb2.AskRequest(
                    query=q.question[:MAX_QUERY_CHARS],
                    collection=collection,
                    user_id="eval",
                    top_k=args.top_k,
                )
                async for event in agent.AskStream(request, timeout=args.timeout):
                    kind = event.WhichOneof("event")
                    if kind == "retrieval":
                        found = found or any(
                            c.chunk.document_id == q.document_id for c in event.retrieval.chunks
                        )
                    elif kind == "completed":
                        response = event.completed.response
                return q, response, found

            with Progress("asking", len(questions), "questions") as progress:
                rows = await bounded(args.concurrency, (ask(q) for q in questions), progress)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target, timeout=args.timeout)
    figures = answer_figures(rows)
    heading = f"SQuAD answers through AskStream: {figures['questions']} questions"
    return print_figures(figures, heading, "questions", 26, args.json)
