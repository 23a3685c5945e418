"""LLM answers: a question set asked through AskStream, scored per question, on a named model.

    ../shared/tools/test-llm start              # the local llama.cpp server (port 8081), if none runs
    eval $(../shared/tools/test-llm env)        # sets GLOSSATOR_AGENT_LLM_BASE_URL / _MODEL / _API_KEY
    .venv/bin/python -m bench.llm_answers [--questions bench/questions/sample-docs.yaml]
        [--split report|tune|all] [--ids ID,ID] [--data-dir DIR] [--timeout 300] [--offline] [--json]

Runs `glossator up` in its own process (embedded Qdrant, data kept under --data-dir, so later runs
skip unchanged documents), ingests the question file's corpus into its collection, then asks the
selected questions (--split, default report; or --ids, which brings a session's earlier questions
along) one at a time, in file order: questions sharing a `session` in one session, `selected_text`
as the reader's highlight. The model is the one GLOSSATOR_AGENT_LLM_* configure (environment or
.env); with none configured the bench refuses to run unless --offline is given, which answers the
same questions with the offline extractive model, for comparison. The model each answer came from
is printed: the one the run started with and the one the response names, when they differ.
--timeout is the deadline of each question, and also the agent's own model deadline
(GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS) unless the environment sets one.

Per question, and in total:
- correct / partial / wrong: whether the answer holds the page's answer, the question's `expect`
  words (services/commands/correctness.py); an unanswerable question is correct when declined;
- retrieved: a retrieval event with at least one chunk;
- cited: the final answer has a [n] marker, and every marker names one of the response's sources;
- right page: one of the cited sources is the question's source file;
- grounded: validation status VALIDATED and is_grounded; flagged: VALIDATED but not grounded;
- replaced: validation status REPLACED (the agent swapped the answer); declined: response.not_covered;
- leaked: textguard.find_leaks finds echoed instructions, template tokens or tool-call markup in the
  streamed deltas or in the final answer;
- status: the gRPC status code of the call (INTERNAL is also counted on its own);
- first token: client side, from sending the request to the first answer_delta; total time.
A question passes when it is answerable and its answer cited, grounded and not declined, or
unanswerable and declined. Totals: for answerable questions the shares retrieved / cited / grounded
/ declined and the counts replaced / flagged; for unanswerable ones the share declined; wrong answers
shown grounded with confidence 0.8 or more (confidently_wrong); leaks;
status counts; first-token and total p50/p99. --json prints the per-question records (with the
model's own streamed text, the verdict on each claim, the tool calls and the server's own timings)
and the totals as one JSON object on stdout; the per-question lines then go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from bench.harness import ROOT, percentile, start_services
from glossator.v1 import agent_pb2, agent_pb2_grpc, common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.agent.citations import marker_indexes
from services.agent.config import AgentSettings
from services.agent.models.textguard import find_leaks
from services.agent.prompt import INSTRUCTIONS
from services.agent.tools import TOOL_NAME
from services.commands.answer_quality import CONFIDENT, cited_sources, confidently_wrong, is_page
from services.commands.correctness import judge_correctness, verdict_figures
from services.commands.ingest import ingest_folder
from services.commands.question_file import Question, QuestionSet, conversations, load_questions, select
from services.common.clients import make_channel

DEFAULT_QUESTIONS = ROOT / "bench" / "questions" / "sample-docs.yaml"
USER = "bench-llm"
# An answer longer than this is counted: the prompts ask for one to four short sentences.
LONG_ANSWER_CHARS = 1000
# The note of a replaced answer names its reason (services/agent/answer_check.py).
REPLACED_NOTE_RE = re.compile(r"was replaced \((?P<reason>[a-z_]+)\)")
FLAGS = (  # letter, record key: the flag columns of the per-question lines
    ("R", "retrieved"),
    ("C", "cited"),
    ("G", "grounded"),
    ("F", "flagged"),
    ("X", "replaced"),
    ("D", "declined"),
    ("L", "leaked"),
)


# --- which model answers --------------------------------------------------------------------


def model_env(offline: bool, timeout: float) -> tuple[dict[str, str], str, str]:
    """The agent's extra environment, the model that should answer and where; exits when none is set."""
    if offline:
        blank = {f"GLOSSATOR_AGENT_LLM_{name}": "" for name in ("BASE_URL", "MODEL", "API_KEY")}
        return blank, "offline-extractive", "in the agent process"
    settings = AgentSettings(_env_file=ROOT / ".env")
    if not settings.llm_base_url or not settings.llm_model:
        sys.exit(
            "no LLM configured: set GLOSSATOR_AGENT_LLM_BASE_URL and GLOSSATOR_AGENT_LLM_MODEL "
            "(for the local server: eval $(../shared/tools/test-llm env)), or pass --offline to "
            "answer with the offline extractive model"
        )
    env = {}
    if "GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS" not in os.environ:
        env["GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS"] = str(timeout)
    return env, settings.llm_model, settings.llm_base_url


# --- ingest ---------------------------------------------------------------------------------


# --- one question ---------------------------------------------------------------------------


@dataclass
class Outcome:
    """What one AskStream call gave, as the client saw it."""

    status: str = "OK"
    detail: str = ""
    model: str = ""
    session_id: str = ""
    chunks_retrieved: int = 0
    # The chunks of the first retrieval event, as Search scored them.
    first_retrieval: list[common_pb2.ScoredChunk] = field(default_factory=list, repr=False)
    streamed: str = ""
    first_token_ms: float | None = None
    total_ms: float = 0.0
    response: agent_pb2.Response | None = field(default=None, repr=False)


async def ask(
    stub: agent_pb2_grpc.AgentServiceStub,
    question: Question,
    collection: str,
    session_id: str,
    timeout: float,
) -> Outcome:
    request = agent_pb2.AskRequest(
        query=question.question,
        session_id=session_id,
        user_id=USER,
        selected_text=question.selected_text,
        include_sources=True,
        collection=collection,
    )
    outcome, deltas = Outcome(), []
    start = time.perf_counter()
    try:
        async for event in stub.AskStream(request, timeout=timeout):
            kind = event.WhichOneof("event")
            if kind == "started":
                outcome.model, outcome.session_id = event.started.model, event.started.session_id
            elif kind == "retrieval":
                outcome.chunks_retrieved = max(outcome.chunks_retrieved, len(event.retrieval.chunks))
                outcome.first_retrieval = outcome.first_retrieval or list(event.retrieval.chunks)
            elif kind == "answer_delta":
                if outcome.first_token_ms is None:
                    outcome.first_token_ms = (time.perf_counter() - start) * 1000
                deltas.append(event.answer_delta.text)
            elif kind == "completed":
                outcome.response = event.completed.response
    except grpc.aio.AioRpcError as error:
        outcome.status, outcome.detail = error.code().name, error.details() or ""
    outcome.total_ms = (time.perf_counter() - start) * 1000
    outcome.streamed = "".join(deltas)
    if outcome.status == "OK" and outcome.response is None:
        outcome.status, outcome.detail = "NO_COMPLETED", "the stream ended without a completed event"
    return outcome


def leaks_in(text: str) -> list[str]:
    """Echoed instructions, template tokens and tool-call markup (retrieval_tool named) in text."""
    return find_leaks(text, INSTRUCTIONS, tool_names=(TOOL_NAME,))


def judge(question: Question, outcome: Outcome) -> dict:
    """The per-question record: the flags of the brief, from the stream and the final response."""
    response = outcome.response or agent_pb2.Response()
    grounding = response.grounding
    validated = grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
    markers = marker_indexes(response.answer)
    leaks = list(dict.fromkeys(leaks_in(outcome.streamed) + leaks_in(response.answer)))
    correctness = judge_correctness(
        question.expect,
        response.answer,
        answerable=question.answerable,
        declined=response.not_covered,
        answered=outcome.status == "OK",
        selected_text=question.selected_text,
    )
    return {
        "id": question.id,
        "split": question.split,
        "form": question.form,
        "answerable": question.answerable,
        "question": question.question,
        "expect": question.expect,
        "correctness": correctness.verdict,
        "expect_share": correctness.score,
        "missing": list(correctness.missing),
        "session": question.session,
        "session_id": outcome.session_id,
        "selected_text": bool(question.selected_text),
        "status": outcome.status,
        "detail": outcome.detail,
        "model": response.model or outcome.model,
        "started_model": outcome.model,
        "answer": response.answer,
        # What the model itself wrote (the answer above may be its replacement), and the verdict
        # on each claim of the delivered answer: what a failed question is diagnosed from.
        "streamed": outcome.streamed,
        "claims": [
            {"text": c.text, "supported": c.supported, "score": round(c.score, 2), "reason": c.reason}
            for c in response.validation.claims
        ],
        "notes": list(response.validation.notes),
        "sources": len(response.sources),
        "retrieved": outcome.chunks_retrieved > 0,
        "cited": bool(markers) and set(markers) <= {s.index for s in response.sources},
        "right_page": question.answerable
        and any(is_page(s, question.source) for s in cited_sources(response)),
        "grounded": validated and grounding.is_grounded,
        "flagged": validated and not grounding.is_grounded,
        "replaced": grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED,
        "replaced_reason": replaced_reason(response),
        "declined": response.not_covered,
        "leaked": bool(leaks),
        "leaks": leaks,
        "validation": agent_pb2.ValidationStatus.Name(grounding.status),
        "grounding_score": round(grounding.grounding_score, 3),
        "confidence": round(response.confidence, 3),
        "cached": response.cached,
        "steps": [f"{s.name}: {s.error}" if s.error else s.name for s in response.steps],
        "server_ms": {
            "retrieval": round(response.timings.retrieval_ms, 1),
            "generation": round(response.timings.generation_ms, 1),
            "validation": round(response.timings.validation_ms, 1),
            "first_delta": round(response.timings.first_delta_ms, 1),
        },
        "first_token_ms": None if outcome.first_token_ms is None else round(outcome.first_token_ms, 1),
        "total_ms": round(outcome.total_ms, 1),
    }


def replaced_reason(response: agent_pb2.Response) -> str:
    """Why the agent replaced the model's answer, as its note says ("" when it did not)."""
    if response.grounding.status != agent_pb2.VALIDATION_STATUS_REPLACED:
        return ""
    found = (REPLACED_NOTE_RE.search(note) for note in response.validation.notes)
    return next((match["reason"] for match in found if match), "unstated")


def verdict(record: dict) -> str:
    """pass: an answerable question cited and grounded, an unanswerable one declined."""
    if record["status"] != "OK":
        return "ERROR"
    if record["answerable"]:
        return "pass" if record["cited"] and record["grounded"] and not record["declined"] else "MISS"
    return "pass" if record["declined"] else "MISS"


# --- the run --------------------------------------------------------------------------------


async def run_questions(
    agent: agent_pb2_grpc.AgentServiceStub,
    qset: QuestionSet,
    questions: list[Question],
    timeout: float,
    report,
    concurrency: int = 1,
) -> list[dict]:
    """Every question, `concurrency` conversations in flight (a session's questions one after the
    other, in the session its first one opened); records in file order."""
    gate = asyncio.Semaphore(concurrency)

    async def converse(run: list[Question]) -> list[dict]:
        session_id, records = "", []
        async with gate:
            for question in run:
                outcome = await ask(agent, question, qset.collection, session_id, timeout)
                if question.session:
                    session_id = session_id or outcome.session_id
                record = judge(question, outcome)
                records.append(record)
                report(record)
        return records

    runs = await asyncio.gather(*(converse(run) for run in conversations(questions)))
    order = {q.id: i for i, q in enumerate(questions)}
    return sorted((r for run in runs for r in run), key=lambda r: order[r["id"]])


def totals(records: list[dict]) -> dict:
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    statuses = Counter(r["status"] for r in records)

    def share(rows: list[dict], key: str) -> float | None:
        return round(sum(r[key] for r in rows) / len(rows), 3) if rows else None

    def spread(values: list[float]) -> dict:
        if not values:
            return {"n": 0, "p50": None, "p99": None}
        return {
            "n": len(values),
            "p50": round(statistics.median(values), 1),
            "p99": round(percentile(values, 0.99), 1),
        }

    # A 0.5B model often copies whole passages (up to max_answer_chars): the rule finds the answer
    # near their start, a reader finds a wall of text.
    lengths = [len(r["answer"]) for r in records if r["status"] == "OK"]
    long = sum(length > LONG_ANSWER_CHARS for length in lengths)
    return {
        "questions": len(records),
        "correct": round(sum(r["correctness"] == "correct" for r in records) / len(records), 3)
        if records
        else None,
        "answerable_verdicts": verdict_figures([r["correctness"] for r in answerable]),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "answerable_retrieved": share(answerable, "retrieved"),
        "answerable_cited": share(answerable, "cited"),
        "answerable_right_page": share(answerable, "right_page"),
        "answerable_grounded": share(answerable, "grounded"),
        "answerable_declined": share(answerable, "declined"),
        "answerable_replaced": sum(r["replaced"] for r in answerable),
        "answerable_flagged": sum(r["flagged"] for r in answerable),
        "replaced_by_reason": dict(Counter(r["replaced_reason"] for r in records if r["replaced"])),
        "unanswerable_declined": share(unanswerable, "declined"),
        "confidently_wrong": sum(confidently_wrong(r) for r in records),
        "leaked": sum(r["leaked"] for r in records),
        "status": dict(statuses),
        "internal": statuses.get("INTERNAL", 0),
        "passed": sum(verdict(r) == "pass" for r in records),
        "first_token_ms": spread([r["first_token_ms"] for r in records if r["first_token_ms"] is not None]),
        "total_ms": spread([r["total_ms"] for r in records]),
        "models": dict(Counter(r["model"] for r in records if r["model"])),
        "answer_chars": {"median": statistics.median(lengths) if lengths else None, "long": long},
    }


# --- output ---------------------------------------------------------------------------------


def question_line(record: dict) -> str:
    flags = "".join(letter if record[key] else "." for letter, key in FLAGS)
    first = "-" if record["first_token_ms"] is None else f"{record['first_token_ms'] / 1000:.2f}s"
    text = record["answer"] if record["status"] == "OK" else f"{record['status']}: {record['detail']}"
    head = " ".join(text.split())[:60]
    if record["started_model"] and record["model"] != record["started_model"]:
        head += f"  (started {record['started_model']}, answered {record['model']})"
    kind = "ans" if record["answerable"] else "unans"
    return (
        f"{record['id']:<7} {record['split']:<6} {kind:<5} {record['correctness']:<7} {flags} {verdict(record):<5} "
        f"first {first:>6} total {record['total_ms'] / 1000:>7.2f}s  {head}"
    )


def print_totals(t: dict, out=sys.stdout) -> None:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    v = t["answerable_verdicts"]
    print(
        f"\ncorrect {pct(t['correct'])} of {t['questions']} questions (unanswerable: when declined); "
        f"answerable: correct {pct(v['correct'])}, partial {pct(v['partial'])}, wrong {pct(v['wrong'])}",
        file=out,
    )
    print(
        f"answerable ({t['answerable']}): retrieved {pct(t['answerable_retrieved'])}, cited "
        f"{pct(t['answerable_cited'])}, right page {pct(t['answerable_right_page'])}, grounded {pct(t['answerable_grounded'])}, declined "
        f"{pct(t['answerable_declined'])}, replaced {t['answerable_replaced']}, flagged {t['answerable_flagged']}",
        file=out,
    )
    print(
        f"unanswerable ({t['unanswerable']}): declined {pct(t['unanswerable_declined'])} · wrong answers "
        f"shown grounded with confidence >= {CONFIDENT}: {t['confidently_wrong']}",
        file=out,
    )
    reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(t["replaced_by_reason"].items()))
    print(f"replaced (all questions) by reason: {reasons or 'none'}", file=out)
    status = ", ".join(f"{code} {n}" for code, n in sorted(t["status"].items()))
    print(
        f"passed {t['passed']}/{t['questions']} · leaked {t['leaked']} · status {status} · INTERNAL {t['internal']}",
        file=out,
    )
    f, a = t["first_token_ms"], t["total_ms"]
    print(
        f"first token p50 {f['p50']} / p99 {f['p99']} ms ({f['n']} answers streamed) · "
        f"total p50 {a['p50']} / p99 {a['p99']} ms",
        file=out,
    )
    print(f"answered by: {', '.join(f'{m} ({n})' for m, n in t['models'].items()) or 'no model'}", file=out)
    chars = t["answer_chars"]
    print(f"answers: median {chars['median']} characters, {chars['long']} over {LONG_ANSWER_CHARS}", file=out)


@contextlib.asynccontextmanager
async def answering_suite(
    qset: QuestionSet, data_dir: Path, extra_env: dict[str, str], log
) -> AsyncIterator[agent_pb2_grpc.AgentServiceStub]:
    """`glossator up` in its own process with the question file's book ingested: its agent."""
    data_dir.mkdir(parents=True, exist_ok=True)
    service = await start_services(data_dir, ["agent", "retrieval", "validation"], extra_env)
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            summary = await ingest_folder(
                retrieval_pb2_grpc.RetrievalServiceStub(channel),
                qset.corpus,
                retrieval_pb2.IngestOptions(collection=qset.collection),
            )
        print(
            f"ingested: {summary.documents_indexed} indexed, {summary.documents_unchanged} unchanged, "
            f"{summary.documents_failed} failed, {summary.chunks_written} chunks written",
            file=log,
        )
        async with make_channel(f"127.0.0.1:{service.ports['agent']}") as channel:
            yield agent_pb2_grpc.AgentServiceStub(channel)
    finally:
        service.stop()


async def run(args: argparse.Namespace) -> int:
    qset = load_questions(args.questions)
    ids = [i for i in args.ids.split(",") if i]
    questions = select(qset.questions, args.split, ids)
    chosen = f"ids {', '.join(q.id for q in questions)}" if ids else f"split {args.split}"
    extra_env, expected_model, endpoint = model_env(args.offline, args.timeout)
    log = sys.stderr if args.json else sys.stdout
    print(
        f"{qset.path.name}: {len(questions)} questions ({chosen}) on {qset.corpus}, "
        f"collection {qset.collection}\nmodel: {expected_model} ({endpoint})\n"
        f"flags: {' '.join(f'{letter}={key}' for letter, key in FLAGS)}",
        file=log,
    )
    async with answering_suite(qset, args.data_dir, extra_env, log) as agent:
        records = await run_questions(
            agent,
            qset,
            questions,
            args.timeout,
            lambda r: print(question_line(r), file=log, flush=True),
            args.concurrency,
        )
    figures = totals(records)
    unexpected = set(figures["models"]) - {expected_model}
    if unexpected:
        print(f"warning: answers came from {sorted(unexpected)}, not {expected_model}", file=log)
    if args.json:
        print(
            json.dumps(
                {
                    "questions_file": str(qset.path),
                    "collection": qset.collection,
                    "split": "ids" if ids else args.split,
                    "model_configured": expected_model,
                    "endpoint": endpoint,
                    "records": records,
                    "totals": figures,
                }
            )
        )
    else:
        print_totals(figures)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, help="a question file (YAML)")
    parser.add_argument("--split", choices=("report", "tune", "all"), default="report")
    parser.add_argument("--ids", default="", help="only these questions, comma-separated (overrides --split)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "bench-llm")
    parser.add_argument("--timeout", type=float, default=300.0, help="deadline of each question, seconds")
    parser.add_argument(
        "--concurrency", type=int, default=1, help="questions in flight (a session's questions in turn)"
    )
    parser.add_argument("--offline", action="store_true", help="answer with the offline extractive model")
    parser.add_argument("--json", action="store_true", help="print records and totals as JSON on stdout")
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
