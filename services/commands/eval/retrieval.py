"""`glossator eval retrieval`: recall@1/5/10 and MRR@10 of Search on SQuAD, per search mode."""

from __future__ import annotations

import argparse
import json

import grpc

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import explain_rpc_error, service_channel
from services.commands.eval.shared import bounded, spread
from services.commands.eval.squad import SquadQuestion, ingest_squad, load_squad
from services.commands.progress import Progress
from services.common.contract_limits import MAX_QUERY_CHARS

MODES = {
    "dense": common_pb2.SEARCH_MODE_DENSE,
    "sparse": common_pb2.SEARCH_MODE_SPARSE,
    "hybrid": common_pb2.SEARCH_MODE_HYBRID,
}


def ranking_figures(ranks: list[int | None]) -> dict[str, float]:
    """recall@1/5/10 and MRR@10 from the 1-based rank of the right document (None: not in top 10)."""
    n = len(ranks) or 1
    figures = {f"recall@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in (1, 5, 10)}
    figures["mrr@10"] = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return {key: round(value, 4) for key, value in figures.items()}


async def eval_retrieval(args: argparse.Namespace) -> int:
    documents, questions = load_squad(args.squad)
    questions = spread(questions, args.limit)
    try:
        async with service_channel("retrieval", args.target, args.embedded) as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with Progress("ingesting SQuAD", len(documents), "paragraphs") as progress:
                summary, ingest_s = await ingest_squad(stub, documents, args.collection, progress)
            results = {}
            for mode, mode_value in MODES.items():

                async def rank(q: SquadQuestion, mode_value=mode_value) -> int | None:
                    reply = await stub.Search(
                        retrieval_pb2.SearchRequest(
                            collection=args.collection,
                            query=q.question[:MAX_QUERY_CHARS],
                            top_k=10,
                            min_relevance=0.0,
                            mode=mode_value,
                        ),
                        timeout=60,
                    )
                    ids = [r.chunk.document_id for r in reply.results]
                    distinct = list(dict.fromkeys(ids))
                    return distinct.index(q.document_id) + 1 if q.document_id in distinct else None

                with Progress(f"searching ({mode})", len(questions), "questions") as progress:
                    ranks = await bounded(args.concurrency, (rank(q) for q in questions), progress)
                results[mode] = ranking_figures(ranks)
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
