"""`glossator eval`: quality figures measured through the running services' public RPCs.

- retrieval: SQuAD paragraphs ingested through Ingest, questions asked through Search;
  recall@1/5/10 and MRR@10 per mode.
- grounding: HaluEval (QA or summarization) answers checked through Validate; balanced accuracy,
  precision/recall of "not grounded", p50/p99 validation time.
- answers: questions asked through AskStream. --squad: answer containment and own-paragraph
  citations on SQuAD. --questions: a question file's book (bench/questions/*.yaml) ingested into
  its collection, then per split the share of questions answered correctly (correctness.py), of
  answerable questions correct, partial and wrong, citing the right page, grounded and declined,
  unanswerable ones declined, answers with Markdown fragments or a repeated sentence, the median
  answer length and the calls that did not end OK (answer_quality.py).
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
from services.commands.answer_quality import judge_answer, question_figures
from services.commands.connect import (
    add_target_option,
    connection_failed,
    default_target,
    explain_rpc_error,
    service_channel,
    suite_channels,
    wrong_service,
)
from services.commands.ingest import ingest, ingest_folder
from services.commands.progress import Progress
from services.commands.question_file import (
    SPLITS,
    Question,
    QuestionFileError,
    conversations,
    load_questions,
    select,
)
from services.common.contract_limits import DEFAULT_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K, MIN_TOP_K

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
        "answers",
        help="answer quality through AskStream: SQuAD containment, or a question file on a real book",
        description="Asks questions through AskStream and scores the answers. --squad: SQuAD "
        "paragraphs, answer containment and citations. --questions: a question file "
        "(bench/questions/*.yaml); its book is ingested into its collection, then correct / partial / "
        "wrong (the expected key words in the answer), the right page cited, grounded, declined, Markdown fragments, repeated sentences and answer length.",
    )
    questions = answers.add_mutually_exclusive_group(required=True)
    questions.add_argument("--squad", type=Path, help="a SQuAD v1.1 JSON file")
    questions.add_argument(
        "--questions", type=Path, help="a question file: corpus, collection and questions (YAML)"
    )
    answers.add_argument(
        "--limit", type=int, default=0, help="--squad: questions to ask, spread over the file (0: all)"
    )
    answers.add_argument(
        "--split",
        choices=(*SPLITS, "all"),
        help="--questions: the questions of this split (default all)",
    )
    answers.add_argument(
        "--collection",
        help=f"collection the documents go into (default {EVAL_COLLECTION}, or the question file's)",
    )
    answers.add_argument(
        "--top-k",
        type=int,
        default=DEFAULT_TOP_K,
        help=f"chunks the agent retrieves, {MIN_TOP_K}-{MAX_TOP_K}",
    )
    answers.add_argument("--concurrency", type=int, default=4, help="questions in flight")
    answers.add_argument("--timeout", type=float, default=120.0, help="deadline of each question, seconds")
    answers.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    answers.add_argument(
        "--rows", action="store_true", help="--questions: also one row per question (in the JSON: rows)"
    )
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


async def bounded(concurrency: int, jobs, progress: Progress | None = None) -> list:
    """Runs the coroutines with at most `concurrency` in flight; results in order. `progress`
    counts the jobs done."""
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def run(job):
        nonlocal done
        async with gate:
            result = await job
        done += 1
        if progress is not None:
            progress.update(done)
        return result

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
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    documents: list[retrieval_pb2.Document],
    collection: str,
    progress: Progress | None = None,
) -> tuple[retrieval_pb2.IngestProgress | None, float]:
    """Ingests the paragraphs (idempotent: a second run skips them all); returns summary and seconds."""
    started = time.perf_counter()
    summary = None
    async for reply in ingest(stub, _documents(documents, collection)):
        summary = reply.summary if reply.HasField("summary") else summary
        if progress is not None:
            progress.update(reply.progress.documents_done, f"{reply.progress.documents_unchanged} unchanged")
    return summary, time.perf_counter() - started


async def _eval_retrieval(args: argparse.Namespace) -> int:
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


def _usage_error(message: str) -> int:
    print(f"glossator eval answers: error: {message}", file=sys.stderr)
    return exit_codes.USAGE


async def _eval_answers(args: argparse.Namespace) -> int:
    if args.concurrency < 1 or args.timeout <= 0:
        return _usage_error("--concurrency must be at least 1 and --timeout above 0")
    if args.questions is not None:
        return await _eval_questions(args)
    if args.split is not None or args.rows:
        return _usage_error("--split and --rows go with --questions, not --squad")
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
    if args.json:
        print(json.dumps(figures))
        return exit_codes.OK
    print(f"SQuAD answers through AskStream: {figures['questions']} questions")
    for key, value in figures.items():
        if key != "questions":
            print(f"  {key:<26} {value}")
    return exit_codes.OK


# --- answers to a question file --------------------------------------------------------------


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


async def _eval_questions(args: argparse.Namespace) -> int:
    if args.limit:
        return _usage_error("--limit goes with --squad; --questions asks a whole split")
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
