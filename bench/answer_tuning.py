"""Tunes the offline answerer on real Search results: SQuAD questions through the retrieval service.

    .venv/bin/python -m bench.answer_tuning [--limit 2000] [--held-out] [--set rank=0.05 --set budget_chars=500 ...]

Ingests the SQuAD dev split into an embedded retrieval service (kept under --data-dir, so later
runs skip the ingest), asks Search each question once as the agent's retrieval_tool does (top_k 5,
sentence scores included), then ranks sentences in-process with the default Weights and with each
--set variant. For each it prints containment (a gold answer inside the answer), the median answer
length, and the share of answers citing only the question's own paragraph when it was retrieved.
The answers are the ones AskStream would give: `glossator eval answers` over the same questions
prints the same figures, in minutes rather than seconds per variant.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path

from bench.harness import EVAL_DIR, ROOT, start_services
from glossator.v1 import agent_pb2, common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.agent.extractive import Weights, choose_sentences, compose_answer, not_covered
from services.agent.passages import Passage
from services.commands.eval.shared import spread
from services.commands.eval.squad import EVAL_COLLECTION, SquadQuestion, ingest_squad, load_squad
from services.commands.eval.squad_answers import answer_figures
from services.common.clients import make_channel
from services.common.embedding import EmbeddingCache, local_embedding_model

TOP_K = 5


@dataclasses.dataclass(frozen=True)
class Retrieved:
    question: SquadQuestion
    results: list[common_pb2.ScoredChunk]


async def retrieve(squad: Path, limit: int, data_dir: Path, held_out: bool = False) -> list[Retrieved]:
    """held_out: the questions *not* among the `limit` spread (the ones the weights were tuned on)."""
    documents, questions = load_squad(squad)
    tuned = spread(questions, limit)
    if held_out:
        tuned_ids = {id(q) for q in tuned}
        questions = [q for q in questions if id(q) not in tuned_ids]
    else:
        questions = tuned
    service = await start_services(data_dir, ["retrieval"])
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            await ingest_squad(stub, documents, EVAL_COLLECTION)
            retrieved = []
            for question in questions:
                request = retrieval_pb2.SearchRequest(
                    collection=EVAL_COLLECTION, query=question.question, top_k=TOP_K
                )
                reply = await stub.Search(request, timeout=30)
                retrieved.append(Retrieved(question, list(reply.results)))
            return retrieved
    finally:
        service.stop()


def figures(retrieved: list[Retrieved], weights: Weights, embed) -> dict[str, float]:
    """The answers AskStream would give, scored by `glossator eval answers`' own function."""
    rows = []
    for item in retrieved:
        passages = [Passage.of(n, r) for n, r in enumerate(item.results, start=1)]
        picks = choose_sentences(item.question.question, passages, embed, weights)
        response = agent_pb2.Response(
            answer=compose_answer(picks) if picks else not_covered(passages),
            sources=[
                agent_pb2.Source(document_id=item.results[p.number - 1].chunk.document_id) for p in picks
            ],
            not_covered=not picks,
        )
        found = any(r.chunk.document_id == item.question.document_id for r in item.results)
        rows.append((item.question, response, found))
    return answer_figures(rows)


def variant(base: Weights, settings: list[str]) -> Weights:
    changes = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        current = getattr(base, name)  # AttributeError names a wrong field
        changes[name] = type(current)(float(value)) if isinstance(current, float) else int(value)
    return dataclasses.replace(base, **changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=EVAL_DIR / "squad" / "dev-v1.1.dev-split.json")
    parser.add_argument("--limit", type=int, default=2000, help="questions, spread over the file (0: all)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "eval")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE[,FIELD=VALUE]",
        help="a Weights variant to compare (repeatable)",
    )
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="ask the questions outside the --limit spread instead (the weights were tuned on the spread)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    retrieved = asyncio.run(retrieve(args.squad, args.limit, args.data_dir, args.held_out))
    embed = EmbeddingCache(local_embedding_model().embed)
    base = Weights()
    results = {"default": figures(retrieved, base, embed)}
    for setting in args.set:
        results[setting] = figures(retrieved, variant(base, setting.split(",")), embed)
    if args.json:
        print(json.dumps(results))
        return
    print(f"{len(retrieved)} SQuAD questions, top {TOP_K} chunks from Search")
    for label, f in results.items():
        print(
            f"  {label:<40} containment {f['containment']:.4f}  median {f['median_answer_chars']} chars  "
            f"own-paragraph citations {f['own_paragraph_citations']:.3f}"
        )


if __name__ == "__main__":
    main()
