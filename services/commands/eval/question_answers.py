"""`glossator eval answers --questions`: a question file's book ingested, its questions asked
through AskStream (a session's questions in order, in one session), each answer judged
(answer_quality.py) and the figures printed per split."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

import grpc

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands import exit_codes
from services.commands.answer_quality import CONFIDENT, judge_answer, question_figures
from services.commands.connect import connection_failed, explain_rpc_error, suite_channels, wrong_service
from services.commands.eval.shared import bounded, usage_error
from services.commands.ingest import ingest_folder
from services.commands.question_file import (
    SPLITS,
    Question,
    QuestionFileError,
    conversations,
    load_questions,
    select,
)
from services.common.contract_limits import MAX_QUERY_CHARS


@dataclass
class Asked:
    """One question's call: its gRPC status, and the final response when it came."""

    question: Question
    status: str = "OK"
    detail: str = ""
    response: agent_pb2.Response | None = None
    error: grpc.aio.AioRpcError | None = None


async def ask_question(
    agent: agent_pb2_grpc.AgentServiceStub,
    question: Question,
    collection: str,
    session_id: str,
    args: argparse.Namespace,
) -> tuple[Asked, str]:
    """Asks through AskStream; returns what came back and the session the answer was given in.
    A failed call is recorded, unless the agent cannot be reached at all (that ends the run)."""
    request = agent_pb2.AskRequest(
        query=question.question[:MAX_QUERY_CHARS],
        session_id=session_id,
        user_id="eval",
        selected_text=question.selected_text,
        top_k=args.top_k,
        include_sources=True,
        collection=collection,
    )
    asked, session = Asked(question), session_id
    try:
        async for event in agent.AskStream(request, timeout=args.timeout):
            kind = event.WhichOneof("event")
            if kind == "started":
                session = session or event.started.session_id
            elif kind == "completed":
                asked.response = event.completed.response
    except grpc.aio.AioRpcError as error:
        if connection_failed(error) or wrong_service(error):
            raise
        asked.status, asked.detail, asked.error = error.code().name, error.details() or "", error
    if asked.status == "OK" and asked.response is None:
        asked.status, asked.detail = "NO_COMPLETED", "the stream ended without a completed event"
    return asked, session


async def _ask_all(
    agent: agent_pb2_grpc.AgentServiceStub, questions: list[Question], collection: str, args
) -> list[Asked]:
    """Every question, `--concurrency` conversations at a time; a session's questions in order, in
    one session. Results in file order."""

    async def converse(run: list[Question]) -> list[Asked]:
        session_id, asked = "", []
        for question in run:
            result, session = await ask_question(agent, question, collection, session_id, args)
            session_id = session if question.session else ""
            asked.append(result)
        return asked

    runs = await bounded(args.concurrency, (converse(run) for run in conversations(questions)))
    order = {q.id: i for i, q in enumerate(questions)}
    return sorted((a for run in runs for a in run), key=lambda a: order[a.question.id])


async def eval_question_file(args: argparse.Namespace) -> int:
    if args.limit:
        return usage_error("--limit goes with --squad; --questions asks a whole split")
    try:
        qset = load_questions(args.questions)
    except QuestionFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return exit_codes.USAGE
    split = args.split or "all"
    questions = select(qset.questions, split)
    collection = args.collection or qset.collection
    log = sys.stderr if args.json else sys.stdout
    print(
        f"{qset.path.name}: {len(questions)} questions (split {split}) on {qset.corpus}, "
        f"collection {collection}",
        file=log,
    )
    targets = {"retrieval": args.retrieval, "agent": args.target}
    async with suite_channels(targets, args.embedded) as channels:
        started = time.perf_counter()
        try:
            summary = await ingest_folder(
                retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"]),
                qset.corpus,
                retrieval_pb2.IngestOptions(collection=collection),
            )
        except grpc.aio.AioRpcError as error:
            return explain_rpc_error(error, args.retrieval)
        ingest_s = time.perf_counter() - started
        if summary is None:
            print("error: the ingest stream ended without a summary", file=sys.stderr)
            return exit_codes.RPC_FAILED
        print(
            f"ingested in {ingest_s:.1f} s: {summary.documents_indexed} indexed, "
            f"{summary.documents_unchanged} unchanged, {summary.documents_failed} failed",
            file=log,
        )
        try:
            asked = await _ask_all(
                agent_pb2_grpc.AgentServiceStub(channels["agent"]), questions, collection, args
            )
        except grpc.aio.AioRpcError as error:
            return explain_rpc_error(error, args.target, timeout=args.timeout)
    records = [judge_answer(a.question, a.status, a.response, a.detail) for a in asked]
    report = {
        "questions_file": str(qset.path),
        "corpus": str(qset.corpus),
        "collection": collection,
        "split": split,
        "ingest": {
            "seconds": round(ingest_s, 1),
            "indexed": summary.documents_indexed,
            "unchanged": summary.documents_unchanged,
            "failed": summary.documents_failed,
        },
        "figures": question_figures(records),
    }
    if split == "all":
        report["splits"] = {s: question_figures([r for r in records if r["split"] == s]) for s in SPLITS}
    if args.json:
        if args.rows:
            report["rows"] = records
        print(json.dumps(report))
    else:
        if args.rows:
            for record in records:
                print(question_row(record))
            print()
        print_question_figures(report)
    failed = [a for a in asked if a.status != "OK"]
    if not failed:
        return exit_codes.OK
    print(f"{len(failed)} of {len(asked)} questions failed; the first:", file=sys.stderr)
    if failed[0].error is None:
        print(f"error: {failed[0].detail}", file=sys.stderr)
        return exit_codes.RPC_FAILED
    code = explain_rpc_error(failed[0].error, args.target, timeout=args.timeout)
    return code if len(failed) == len(asked) else exit_codes.RPC_FAILED


_ROW_FLAGS = (
    ("P", "right_page"),
    ("G", "grounded"),
    ("D", "declined"),
    ("M", "markdown"),
    ("U", "duplicate"),
)


def question_row(record: dict) -> str:
    """One line a question: id, split, kind, verdict, status, flags, length, first cited page,
    answer head."""
    flags = "".join(letter if record[key] else "." for letter, key in _ROW_FLAGS)
    kind = "ans" if record["answerable"] else "unans"
    text = record["answer"] if record["status"] == "OK" else record["detail"]
    cited = record["cited"][0] if record["cited"] else "-"
    return (
        f"{record['id']:<8} {record['split']:<6} {kind:<5} {record['correctness']:<7} {record['status']:<6} {flags} "
        f"{record['chars']:>5} {cited[:48]:<48} {' '.join(text.split())[:70]}"
    )


def print_question_figures(report: dict) -> None:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    rows = [("all", report["figures"]), *report.get("splits", {}).items()]
    print(
        f"{'split':<7} {'correct':>7} {'answerable':>10} {'correct':>7} {'partial':>7} {'wrong':>6} "
        f"{'right page':>10} {'grounded':>9} {'declined':>9} "
        f"{'unanswerable':>12} {'declined':>9} {'markdown':>9} {'duplicates':>10} {'median chars':>12}"
    )
    for name, f in rows:
        a, u, answers = f["answerable"], f["unanswerable"], f["answers"]
        median = "-" if answers["median_chars"] is None else f"{answers['median_chars']:g}"
        print(
            f"{name:<7} {pct(f['correct']):>7} {a['questions']:>10} {pct(a['correct']):>7} "
            f"{pct(a['partial']):>7} {pct(a['wrong']):>6} {pct(a['right_page']):>10} {pct(a['grounded']):>9} "
            f"{pct(a['declined']):>9} {u['questions']:>12} {pct(u['declined']):>9} "
            f"{pct(answers['markdown']):>9} {pct(answers['duplicates']):>10} {median:>12}"
        )
    f = report["figures"]
    print("correct by form (answerable): " + ", ".join(f"{form} {pct(v)}" for form, v in f["forms"].items()))
    status = ", ".join(f"{code} {n}" for code, n in sorted(f["status"].items())) or "none"
    models = ", ".join(f"{m} ({n})" for m, n in f["models"].items()) or "no model"
    print(f"calls not OK: {status} · answered by: {models}")
    print(f"wrong answers shown grounded with confidence >= {CONFIDENT}: {f['confidently_wrong']}")
