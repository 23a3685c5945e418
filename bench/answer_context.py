"""Does the LLM see the answer? What the answer turn shows the model, read against `expect`.

    .venv/bin/python -m bench.answer_context [--questions bench/questions/agentfactory.yaml]
        [--split tune|report|all] [--budget 3000] [--top-k 5] [--data-dir DIR] [--rows]

Ingests the question file's book into an embedded retrieval service (kept under --data-dir, so
later runs skip the ingest), runs the agent's first search for each answerable question that
opens no follow-up (the question with the reader's selection, as the agent resolves it), and cuts
the passages as the LLM's answer turn does (services.agent.models.guided.focused, the extractive
answerer's picks first). For each it reads `expect` with the headline rule
(services/commands/correctness.py: correct at CORRECT_SHARE of its items): in any retrieved
passage, in what the model is shown, in the first passage it is shown (a small model copies
mostly from that one). No model runs: a model cannot answer from what it is not shown, so the
second figure bounds every model's correctness on these questions, whatever its size.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from types import SimpleNamespace

from bench.harness import ROOT
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.agent.config import ANSWER_CONTEXT_CHARS
from services.agent.extractive import ExtractiveAnswerer
from services.agent.models.guided import focused
from services.agent.search_query import search_query
from services.agent.tools import AskContext, search
from services.commands.connect import suite_channels
from services.commands.correctness import CORRECT_SHARE, judge_correctness
from services.commands.ingest import ingest_folder
from services.commands.question_file import Question, load_questions, select
from services.common.contract_limits import DEFAULT_TOP_K

DEFAULT_QUESTIONS = ROOT / "bench" / "questions" / "agentfactory.yaml"


def holds(expect: str, text: str) -> bool:
    """Whether `text` holds the expected answer, by the headline rule."""
    return judge_correctness(expect, text, answerable=True, declined=False).score >= CORRECT_SHARE


async def first_search(
    stub: retrieval_pb2_grpc.RetrievalServiceStub, collection: str, query: str, top_k: int = DEFAULT_TOP_K
) -> AskContext:
    """The run state after the agent's first search for `query` (a resolved search_query): its
    sources and passages, as the answer turn and the validator get them."""
    state = AskContext(
        retrieval=stub, deadline=time.monotonic() + 60, collection=collection, search_query=query, top_k=top_k
    )
    call = SimpleNamespace(context=state, tool_call_id="bench", tool_name="retrieval_tool", tool_arguments="")
    await search(call, query)
    return state


async def shown_for(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    collection: str,
    question: Question,
    extractive: ExtractiveAnswerer,
    budget: int,
    top_k: int,
) -> tuple[list[str], list[str]]:
    """The retrieved passages' texts and what the answer turn shows of them, in its order."""
    query = search_query(question.question, selected_text=question.selected_text)
    state = await first_search(stub, collection, query, top_k)
    passages = list(state.passages.values())
    shown = focused(passages, budget, extractive.choose(question.question, passages))
    return [p.text for p in passages], [text for _, text in shown]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--split", default="tune", choices=["tune", "report", "all"])
    parser.add_argument("--budget", type=int, default=ANSWER_CONTEXT_CHARS)
    parser.add_argument("--top-k", type=int, default=DEFAULT_TOP_K, help="chunks the search returns")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/glossator-bench-answer-context"))
    parser.add_argument("--rows", action="store_true", help="print one line a question")
    args = parser.parse_args()
    qset = load_questions(args.questions)
    questions = [
        q for q in select(qset.questions, args.split) if q.answerable and q.form != "follow-up" and q.expect
    ]
    extractive = ExtractiveAnswerer()
    counts = {"retrieved": 0, "shown": 0, "first": 0}
    lengths = []
    async with suite_channels({"retrieval": ""}, args.data_dir) as channels:
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"])
        await ingest_folder(stub, qset.corpus, retrieval_pb2.IngestOptions(collection=qset.collection))
        for question in questions:
            retrieved, shown = await shown_for(
                stub, qset.collection, question, extractive, args.budget, args.top_k
            )
            found = {
                "retrieved": any(holds(question.expect, text) for text in retrieved),
                "shown": holds(question.expect, " ".join(shown)),
                "first": bool(shown) and holds(question.expect, shown[0]),
            }
            for key, value in found.items():
                counts[key] += value
            lengths.append(sum(map(len, shown)))
            if args.rows:
                flags = " ".join(key if value else "-" * len(key) for key, value in found.items())
                print(f"{question.id:<8} {question.form:<13} {flags}  {lengths[-1]:>5} chars")
    n = len(questions)
    print(
        f"{args.questions.name} ({args.split}, {n} answerable questions, no follow-ups), top {args.top_k}, "
        f"budget {args.budget}: "
        f"answer in the retrieved passages {counts['retrieved'] / n:.2f}, in what the model is shown "
        f"{counts['shown'] / n:.2f}, in the first passage shown {counts['first'] / n:.2f}; "
        f"median {statistics.median(lengths):.0f} characters shown"
    )


if __name__ == "__main__":
    asyncio.run(main())
