"""Measures the offline grounding checker on a HaluEval split, at domain level (no gRPC).

Each record gives two validations: the right answer must be judged grounded, the hallucinated one
not. Prints balanced accuracy, precision and recall of the "not grounded" verdict, and the time of
one validation (p50/p99, the embedding model loaded beforehand, nothing cached between calls).

    python bench/grounding_eval.py --file ../shared/eval/halueval/qa_data.dev.jsonl --limit 300
    python bench/grounding_eval.py --file .../summarization_data.dev.jsonl --half report --json

The claim model of longer answers is trained on the tune half (even records) of summarization
(bench/train_claim_model.py): the report half (odd records) is the figure to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import HALVES
from services.common.embedding import local_embedding_model
from services.validation.grounding import ContextChunk, OfflineChecker
from services.validation.grounding_config import GroundingConfig

# (context, question, grounded answer, hallucinated answer) fields of the two HaluEval kinds.
KINDS = {
    "knowledge": ("knowledge", "question", "right_answer", "hallucinated_answer"),
    "document": ("document", None, "right_summary", "hallucinated_summary"),
}


@dataclass(frozen=True)
class Case:
    record: int  # line number in the file
    query: str
    context: str
    answer: str
    hallucinated: bool


def load_cases(path: Path, limit: int | None) -> list[Case]:
    cases = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if limit is not None and number >= limit:
                break
            record = json.loads(line)
            kind = next(k for k in KINDS if k in record)
            context_key, query_key, right_key, wrong_key = KINDS[kind]
            query = record[query_key] if query_key else ""
            cases.append(Case(number, query, record[context_key], record[right_key], False))
            cases.append(Case(number, query, record[context_key], record[wrong_key], True))
    return cases


async def evaluate(cases: list[Case], checker: OfflineChecker) -> dict[str, float]:
    flagged, timings = [], []
    for case in cases:
        started = time.perf_counter()
        result = await checker.check(case.query, case.answer, [ContextChunk("1", case.context)], [], None)
        timings.append((time.perf_counter() - started) * 1000)
        flagged.append(not result.is_grounded)
    return figures(cases, flagged, timings)


def figures(cases: list[Case], flagged: list[bool], timings: list[float]) -> dict[str, float]:
    true_pos = sum(f and c.hallucinated for f, c in zip(flagged, cases, strict=True))
    false_pos = sum(f and not c.hallucinated for f, c in zip(flagged, cases, strict=True))
    hallucinated = sum(c.hallucinated for c in cases)
    grounded = len(cases) - hallucinated
    recall = true_pos / hallucinated if hallucinated else 0.0
    specificity = (grounded - false_pos) / grounded if grounded else 0.0
    ordered = sorted(timings)
    return {
        "validations": len(cases),
        "balanced_accuracy": round((recall + specificity) / 2, 4),
        "not_grounded_precision": round(true_pos / (true_pos + false_pos), 4)
        if true_pos + false_pos
        else 0.0,
        "not_grounded_recall": round(recall, 4),
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 2),
    }


def record_range(text: str) -> range:
    """ "750:1000" -> range(750, 1000); either end may be left out ("750:")."""
    start, _, stop = text.partition(":")
    return range(int(start or 0), int(stop) if stop else 1 << 31)


def parse_overrides(pairs: list[str]) -> GroundingConfig:
    """--set name=value pairs over the default GroundingConfig (values parsed as JSON)."""
    overrides = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        overrides[name] = json.loads(value)
    return GroundingConfig.model_validate({**GroundingConfig().model_dump(), **overrides})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--file", type=Path, required=True, help="a HaluEval qa_ or summarization_ jsonl file"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N records only (two validations each)")
    parser.add_argument(
        "--records",
        type=record_range,
        default=None,
        metavar="FROM:TO",
        help="records FROM (inclusive) to TO (exclusive) only, e.g. 750:1000 for the held-out quarter",
    )
    parser.add_argument(
        "--half", choices=tuple(HALVES), default="all", help="records: tune (even), report (odd) or all"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="GroundingConfig override"
    )
    args = parser.parse_args()
    checker = OfflineChecker(parse_overrides(args.set), local_embedding_model())
    local_embedding_model().embed(["warm up the model before timing"])
    cases = [
        case
        for case in load_cases(args.file, args.limit)
        if case.record % 2 in HALVES[args.half] and (args.records is None or case.record in args.records)
    ]
    results = asyncio.run(evaluate(cases, checker))
    if args.json:
        print(json.dumps(results))
    else:
        for name, value in results.items():
            print(f"{name:24s} {value}")


if __name__ == "__main__":
    main()
