"""`glossator eval grounding`: how well Validate tells HaluEval's right answers from its
hallucinated ones (balanced accuracy, precision and recall of "not grounded", p50/p99 time)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import grpc

from glossator.v1 import common_pb2, validation_pb2, validation_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import explain_rpc_error, service_channel
from services.commands.eval.shared import bounded, print_figures, spread
from services.commands.progress import Progress
from services.common.contract_limits import MAX_QUERY_CHARS


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


async def eval_grounding(args: argparse.Namespace) -> int:
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
                        query=case.query[:MAX_QUERY_CHARS],
                        response=case.answer,
                        context=[common_pb2.Chunk(chunk_id="context", text=case.context)],
                    ),
                    timeout=60,
                )
                return reply.is_grounded, reply.validation_ms

            with Progress("validating", len(cases), "answers") as progress:
                replies = await bounded(args.concurrency, (check(case) for case in cases), progress)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    figures = grounding_figures([c.grounded for c in cases], [r[0] for r in replies], [r[1] for r in replies])
    heading = f"HaluEval {args.halueval.name}: {figures['cases']} answers"
    return print_figures(figures, heading, "cases", 24, args.json)
