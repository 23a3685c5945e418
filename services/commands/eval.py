"""`glossator eval`: quality figures measured through the running services' public RPCs.

- retrieval: SQuAD paragraphs ingested through Ingest, questions asked through Search;
  recall@1/5/10 and MRR@10 per mode.
- grounding: HaluEval (QA or summarization) answers checked through Validate; balanced accuracy,
  precision/recall of "not grounded", p50/p99 validation time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc

from glossator.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    retrieval_pb2,
    retrieval_pb2_grpc,
    validation_pb2,
    validation_pb2_grpc,
)
from services.commands import exit_codes
from services.commands.connect import (
    add_target_option,
    default_target,
    explain_rpc_error,
    service_channel,
    suite_channels,
)
from services.commands.ingest import ingest

EVAL_COLLECTION = "eval-squad"
MODES = {
    "dense": common_pb2.SEARCH_MODE_DENSE,
    "sparse": common_pb2.SEARCH_MODE_SPARSE,
    "hybrid": common_pb2.SEARCH_MODE_HYBRID,
}


def add_parser(commands) -> None:
    parser = commands.add_parser("eval")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")

    retrieval = kinds.add_parser("retrieval", help="recall@k and MRR@10 on SQuAD, per search mode")
    retrieval.add_argument("--squad", type=Path, required=True, help="a SQuAD v1.1 JSON file")
    retrieval.add_argument(
        "--limit", type=int, default=0, help="questions to ask, spread over the file (0: all)"
    )
    retrieval.add_argument("--collection", default=EVAL_COLLECTION, help="collection the paragraphs go into")
    retrieval.add_argument("--concurrency", type=int, default=8)
    retrieval.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    add_target_option(retrieval, "retrieval")
    retrieval.set_defaults(func=lambda args: asyncio.run(_eval_retrieval(args)))

    grounding = kinds.add_parser(
        "grounding", help="balanced accuracy of Validate on HaluEval QA or summarization"
    )
    grounding.add_argument("--halueval", type=Path, required=True, help="qa_data or summarization_data JSONL")
    grounding.add_argument("--limit", type=int, default=0, help="records to check (0: all)")
    grounding.add_argument(
        "--concurrency", type=int, default=1, help="calls in flight (1 gives clean timings)"
    )
    grounding.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    add_target_option(grounding, "validation")
    grounding.set_defaults(func=lambda args: asyncio.run(_eval_grounding(args)))

    answers = kinds.add_parser(
        "answers", help="answer containment and citation accuracy on SQuAD, via AskStream"
    )
    answers.add_argument("--squad", type=Path, required=True, help="a SQuAD v1.1 JSON file")
    answers.add_argument(
        "--limit", type=int, default=0, help="questions to ask, spread over the file (0: all)"
    )
    answers.add_argument("--collection", default=EVAL_COLLECTION, help="collection the paragraphs go into")
    answers.add_argument("--top-k", type=int, default=5, help="chunks the agent retrieves, 1-20")
    answers.add_argument("--concurrency", type=int, default=4)
    answers.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    answers.add_argument(
        "--retrieval",
        default=default_target("retrieval"),
        metavar="HOST:PORT",
        help="retrieval service (ingest)",
    )
    add_target_option(answers, "agent")
    answers.set_defaults(func=lambda args: asyncio.run(_eval_answers(args)))


def spread(items: list, limit: int) -> list:
    """`limit` items evenly spread over the list (all of them when limit is 0 or too large)."""
    if limit <= 0 or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


async def bounded(concurrency: int, jobs) -> list:
    """Runs the coroutines with at most `concurrency` in flight; results in order."""
    gate = asyncio.Semaphore(concurrency)

    async def run(job):
        async with gate:
            return await job

    return await asyncio.gather(*(run(job) for job in jobs))


# --- retrieval -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SquadQuestion:
    question: str
    document_id: str
    answers: tuple[str, ...] = ()


def load_squad(path: Path) -> tuple[list[retrieval_pb2.Document], list[SquadQuestion]]:
    """Every paragraph as its own text document, and every question with its paragraph's id."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    documents, questions = [], []
    for article in data:
        title = article["title"].replace("_", " ")
        for index, paragraph in enumerate(article["paragraphs"]):
            document_id = f"squad/{article['title']}/{index}"
            documents.append(
                retrieval_pb2.Document(
                    document_id=document_id,
                    source_path=f"{document_id}.txt",
                    content=paragraph["context"],
                    format=retrieval_pb2.DOCUMENT_FORMAT_TEXT,
                    title=title,
                )
            )
            questions.extend(
                SquadQuestion(qa["question"], document_id, tuple(a["text"] for a in qa["answers"]))
                for qa in paragraph["qas"]
            )
    return documents, questions


def ranking_figures(ranks: list[int | None]) -> dict[str, float]:
    """recall@1/5/10 and MRR@10 from the 1-based rank of the right document (None: not in top 10)."""
    n = len(ranks) or 1
    figures = {f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5, 10)}
    figures["mrr@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return {key: round(value, 4) for key, value in figures.items()}


async def _documents(documents: list[retrieval_pb2.Document], collection: str) -> AsyncIterator:
    yield retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection=collection))
    for document in documents:
        yield retrieval_pb2.IngestRequest(document=document)


async def ingest_squad(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, documents: list[retrieval_pb2.Document], collection: str
) -> tuple[retrieval_pb2.IngestProgress | None, float]:
    """Ingests the paragraphs (idempotent: a second run skips them all); returns summary and seconds."""
    started = time.perf_counter()
    summary = None
    async for reply in ingest(stub, _documents(documents, collection)):
        summary = reply.summary if reply.HasField("summary") else summary
    return summary, time.perf_counter() - started


async def _eval_retrieval(args: argparse.Namespace) -> int:
    documents, questions = load_squad(args.squad)
    questions = spread(questions, args.limit)
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            summary, ingest_s = await ingest_squad(stub, documents, args.collection)
            results = {}
            for mode, mode_value in MODES.items():

                async def rank(q: SquadQuestion, mode_value=mode_value) -> int | None:
                    reply = await stub.Search(
                        retrieval_pb2.SearchRequest(
                            collection=args.collection,
                            query=q.question[:1000],
                            top_k=10,
                            min_relevance=0.0,
                            mode=mode_value,
                        ),
                        timeout=60,
                    )
                    ids = [r.chunk.document_id for r in reply.results]
                    distinct = list(dict.fromkeys(ids))
                    return distinct.index(q.document_id) + 1 if q.document_id in distinct else None

                results[mode] = ranking_figures(await bounded(args.concurrency, (rank(q) for q in questions)))
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    results["questions"] = len(questions)
    results["paragraphs"] = len(documents)
    results["ingest_seconds"] = round(ingest_s, 1)
    results["chunks_written"] = summary.chunks_written if summary else 0
    if args.json:
        print(json.dumps(results))
        return exit_codes.OK
    print(f"SQuAD: {len(documents)} paragraphs, {len(questions)} questions (ingest {ingest_s:.1f} s)")
    print(f"{'mode':<8} {'recall@1':>9} {'recall@5':>9} {'recall@10':>10} {'MRR@10':>8}")
    for mode in MODES:
        f = results[mode]
        print(
            f"{mode:<8} {f['recall@1']:>9.3f} {f['recall@5']:>9.3f} {f['recall@10']:>10.3f} {f['mrr@10']:>8.3f}"
        )
    return exit_codes.OK


# --- grounding -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroundingCase:
    query: str
    context: str
    answer: str
    grounded: bool


def load_halueval(path: Path, limit: int) -> list[GroundingCase]:
    """Each record gives two cases: the right answer (grounded) and the hallucinated one (not)."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = spread(records, limit)
    cases = []
    for r in records:
        if "knowledge" in r:
            query, context, right, wrong = (
                r["question"],
                r["knowledge"],
                r["right_answer"],
                r["hallucinated_answer"],
            )
        elif "document" in r:
            query, context, right, wrong = "", r["document"], r["right_summary"], r["hallucinated_summary"]
        else:
            raise ValueError(f"{path}: records need knowledge/right_answer or document/right_summary")
        cases += [GroundingCase(query, context, right, True), GroundingCase(query, context, wrong, False)]
    return cases


def grounding_figures(truth: list[bool], verdicts: list[bool], times_ms: list[float]) -> dict[str, float]:
    tp = sum(1 for t, v in zip(truth, verdicts, strict=True) if not t and not v)  # "not grounded" caught
    fn = sum(1 for t, v in zip(truth, verdicts, strict=True) if not t and v)
    fp = sum(1 for t, v in zip(truth, verdicts, strict=True) if t and not v)
    tn = sum(1 for t, v in zip(truth, verdicts, strict=True) if t and v)
    recall = tp / (tp + fn) if tp + fn else 0.0
    specificity = tn / (tn + fp) if tn + fp else 0.0
    ordered = sorted(times_ms)
    return {
        "balanced_accuracy": round((recall + specificity) / 2, 4),
        "precision_not_grounded": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall_not_grounded": round(recall, 4),
        "p50_ms": round(statistics.median(ordered), 2) if ordered else 0.0,
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2) if ordered else 0.0,
        "cases": len(truth),
    }


async def _eval_grounding(args: argparse.Namespace) -> int:
    try:
        cases = load_halueval(args.halueval, args.limit)
    except (OSError, ValueError, KeyError) as error:
        print(f"error: {error}", file=sys.stderr)
        return exit_codes.USAGE
    try:
        async with service_channel("validation", args.target, args.embedded) as channel:
            stub = validation_pb2_grpc.ValidationServiceStub(channel)

            async def check(case: GroundingCase) -> tuple[bool, float]:
                reply = await stub.Validate(
                    validation_pb2.ValidateRequest(
                        query=case.query[:1000],
                        response=case.answer,
                        context=[common_pb2.Chunk(chunk_id="context", text=case.context)],
                    ),
                    timeout=60,
                )
                return reply.is_grounded, reply.validation_ms

            replies = await bounded(args.concurrency, (check(case) for case in cases))
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    figures = grounding_figures([c.grounded for c in cases], [r[0] for r in replies], [r[1] for r in replies])
    if args.json:
        print(json.dumps(figures))
        return exit_codes.OK
    print(f"HaluEval {args.halueval.name}: {figures['cases']} answers")
    for key, value in figures.items():
        if key != "cases":
            print(f"  {key:<24} {value}")
    return exit_codes.OK


# --- answers ---------------------------------------------------------------------------------


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


async def _eval_answers(args: argparse.Namespace) -> int:
    documents, questions = load_squad(args.squad)
    questions = spread(questions, args.limit)
    targets = {"retrieval": args.retrieval, "agent": args.target}
    try:
        async with suite_channels(targets, args.embedded) as channels:
            await ingest_squad(
                retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"]), documents, args.collection
            )
            agent = agent_pb2_grpc.AgentServiceStub(channels["agent"])

            async def ask(q: SquadQuestion) -> tuple[SquadQuestion, agent_pb2.Response, bool]:
                found, response = False, None
                request = agent_pb2.AskRequest(
                    query=q.question[:1000], collection=args.collection, user_id="eval", top_k=args.top_k
                )
                async for event in agent.AskStream(request, timeout=120):
                    kind = event.WhichOneof("event")
                    if kind == "retrieval":
                        found = found or any(
                            c.chunk.document_id == q.document_id for c in event.retrieval.chunks
                        )
                    elif kind == "completed":
                        response = event.completed.response
                return q, response, found

            rows = await bounded(args.concurrency, (ask(q) for q in questions))
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    figures = answer_figures(rows)
    if args.json:
        print(json.dumps(figures))
        return exit_codes.OK
    print(f"SQuAD answers through AskStream: {figures['questions']} questions")
    for key, value in figures.items():
        if key != "questions":
            print(f"  {key:<26} {value}")
    return exit_codes.OK
