"""Does the checker tell a right answer from a wrong one as a capable model writes them?

    .venv/bin/python -m bench.checker_probes [--probes bench/questions/checker-probes/agentfactory.json ...]
        [--set 1|2|3|4] [--data-dir DIR] [--rows]

A probe file (bench/questions/checker-probes/*.json) names a question file and gives, for some of
its questions, answers written by helper sessions that saw the passages Search returns but never
the checker: right ones, saying only what the passages say in a model's own words, and wrong ones,
as fluent and cited. For each question this runs the agent's first search (embedded retrieval and
validation services, the book kept under --data-dir so later runs skip the ingest) and sends each
answer to Validate with the retrieved chunks, as the agent does. An answer passes when every claim
is supported and it answers the question: the agent re-points a marker that names the wrong
passage, so a misplaced citation alone does not count against it.

Prints, per file and set, the share of right answers passed (a right answer refused is replaced
under `enforce`) and of wrong ones passed (shown as grounded); then, of the refused ones, how many
the agent delivers in part (services.agent.answer_check.supported_part: the answer without its
unsupported sentences, validated again, passes). --rows prints each misjudged answer with the
reasons of its refused claims, and each wrong answer delivered in part, to read whether its wrong
claim went with the sentences left out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from bench.answer_context import first_search
from bench.harness import ROOT
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc, validation_pb2, validation_pb2_grpc
from services.agent.answer_check import context_chunk, supported_part
from services.agent.search_query import search_query
from services.commands.connect import suite_channels
from services.commands.ingest import ingest_folder
from services.commands.question_file import load_questions

PROBES = sorted((ROOT / "bench" / "questions" / "checker-probes").glob("*.json"))


async def context_for(stub: retrieval_pb2_grpc.RetrievalServiceStub, collection: str, question: str) -> list:
    """The chunks the agent's first search retrieves for the question, as it sends them to Validate."""
    state = await first_search(stub, collection, search_query(question))
    texts = {p.chunk_id: p.text for p in state.passages.values()}
    return [context_chunk(source, texts) for source in state.sources]


def passes(verdict: validation_pb2.ValidateResponse) -> bool:
    return all(claim.supported for claim in verdict.claims) and verdict.answers_question


async def judge_file(channels: dict, path: Path, only_set: int | None, rows: bool) -> None:
    probes = json.loads(path.read_text())
    qset = load_questions(ROOT / probes["questions"])
    retrieval = retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"])
    validation = validation_pb2_grpc.ValidationServiceStub(channels["validation"])
    await ingest_folder(retrieval, qset.corpus, retrieval_pb2.IngestOptions(collection=qset.collection))
    tally: dict[tuple[int, str], list[int]] = {}
    for probe in probes["probes"]:
        if only_set is not None and probe["set"] != only_set:
            continue
        context = await context_for(retrieval, qset.collection, probe["question"])
        for kind in ("right", "wrong"):
            for answer in probe[kind]:
                request = validation_pb2.ValidateRequest(
                    query=probe["question"], response=answer, context=context
                )
                verdict = await validation.Validate(request)
                passed = passes(verdict)
                part = "" if passed else supported_part(answer, verdict)
                if part:
                    request = validation_pb2.ValidateRequest(
                        query=probe["question"], response=part, context=context
                    )
                    part = part if passes(await validation.Validate(request)) else ""
                counts = tally.setdefault((probe["set"], kind), [0, 0, 0])
                counts[0] += passed
                counts[1] += bool(part)
                counts[2] += 1
                if rows and passed != (kind == "right"):
                    print(f"{probe['id']} {kind} {'passed' if passed else 'refused'}: {answer}")
                    for claim in verdict.claims:
                        if not claim.supported:
                            print(f"    {claim.text[:100]!r}: {claim.reason}")
                if rows and part and kind == "wrong":
                    print(f"{probe['id']} wrong delivered in part: {part}")
    for number in sorted({s for s, _ in tally}):
        right, wrong = tally.get((number, "right"), [0, 0, 0]), tally.get((number, "wrong"), [0, 0, 0])
        print(
            f"{path.name} set {number}: right answers passed {right[0]}/{right[2]} (+{right[1]} in part), "
            f"wrong answers passed {wrong[0]}/{wrong[2]} (+{wrong[1]} in part)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", type=Path, nargs="+", default=PROBES)
    parser.add_argument("--set", type=int, choices=(1, 2, 3, 4), help="one set of answers (default all)")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/glossator-bench-checker-probes"))
    parser.add_argument("--rows", action="store_true", help="print each misjudged answer")
    args = parser.parse_args()
    async with suite_channels({"retrieval": "", "validation": ""}, args.data_dir) as channels:
        for path in args.probes:
            await judge_file(channels, path, args.set, args.rows)


if __name__ == "__main__":
    asyncio.run(main())
