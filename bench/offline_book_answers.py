"""Offline answers on a real book: does our own validator accept what the extractive model says?

    .venv/bin/python -m bench.offline_book_answers [--questions bench/questions/physical-ai-book.yaml]
        [--split all|tune|report|none] [--ids ID,ID] [--headings N] [--set FIELD=VALUE[,...]]...
        [--data-dir DIR] [--quiet] [--json]

Starts the whole suite in this process (embedded Qdrant in a fresh temporary data directory unless
--data-dir is given: sentence offsets are stored at ingest, so a changed splitter needs a fresh
ingest), ingests the question file's corpus with the real chunker, and asks its questions through
AskStream with the offline extractive model (no LLM, whatever the environment says) and the
validation policy `annotate`, so that the answer delivered is the model's own, with its verdict.
--headings N also asks "What is <heading>?" of N section headings of the corpus (spread over it):
no expected answer, but each is an answer the validator must accept, or a decline.

Per answer: its text; grounded (validation VALIDATED and is_grounded); citations valid / found;
whether it cites the question's source page; Markdown left in it (the kinds `glossator eval
answers` looks for, and code, admonition and HTML); a pair of sentences repeating each other (as
`glossator eval answers` judges them, services/commands/answer_quality.py). An answer given but
not grounded is a disagreement between answerer and validator, a bug in one of them: its
unsupported claims are printed with the validator's reasons.

--set runs the answerer again on the same Search results with other Weights (one variant per
--set, e.g. `--set meta=0.3 --set form=0.2,meta=0.3`) and validates each variant's answers with
the running ValidationService, like the agent does; for each variant it prints the share of
questions answered correctly (services/commands/correctness.py, the headline rule), the share of
answerable questions answered, grounded and citing their source page, the share of the words of
`expect` the answers contain, and the share of unanswerable questions declined. Tune on
`--split tune`, report on `--split report`.

--sentences checks the splitter, the display cleaning and the validator against each other without
any question: every prose sentence of every chunk (the real chunker), quoted as an answer would
quote it and cited, is validated in-process against its raw chunk; it prints how many were not
grounded, with the validator's reasons.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

from bench.answer_tuning import variant
from bench.harness import ROOT
from bench.llm_answers import ask
from glossator.v1 import (
    agent_pb2_grpc,
    common_pb2,
    retrieval_pb2,
    retrieval_pb2_grpc,
    validation_pb2,
    validation_pb2_grpc,
)
from services.agent.extractive import Weights, choose_sentences, compose_answer, not_covered, shown_sentence
from services.agent.passages import Passage
from services.agent.tools import TOOL_NAME
from services.commands.answer_quality import judge_answer
from services.commands.connect import suite_channels
from services.commands.correctness import judge_correctness
from services.commands.ingest import ingest_folder
from services.commands.question_file import Question, load_questions, select
from services.common.embedding import EmbeddingCache, count_tokens, local_embedding_model
from services.common.logging import configure_logging
from services.common.text.prose import prose_sentences
from services.common.text.words import Analysis
from services.retrieval.ingest import SourceError, chunk_document, parse_document, read_folder
from services.validation.grounding import ContextChunk, OfflineChecker

DEFAULT_QUESTIONS = ROOT / "bench" / "questions" / "physical-ai-book.yaml"
HEADINGS_SPLIT = "headings"
# Markup `glossator eval answers` does not look for, but a reader should not see either.
_MORE_FRAGMENTS = {
    "code": re.compile(r"`"),
    "admonition": re.compile(r"^:::|:::$", re.MULTILINE),
    "html": re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>"),
}


def fragments(record: dict) -> list[str]:
    more = [kind for kind, pattern in _MORE_FRAGMENTS.items() if pattern.search(record["answer"])]
    return record["markdown"] + more


def heading_questions(corpus: Path, count: int) -> list[Question]:
    """ "What is <heading>?" for every k-th distinct short section heading of the corpus."""
    headings: list[str] = []
    for item in read_folder(corpus):
        if isinstance(item, SourceError):
            continue
        for section in parse_document(item, "").sections:
            title = section.title.strip()
            if title and len(title.split()) <= 6 and title not in headings:
                headings.append(title)
    step = max(1, len(headings) // max(1, count))
    return [
        Question(
            id=f"h-{i:03d}",
            question=f"What is {title}?",
            answerable=True,
            split=HEADINGS_SPLIT,
            form="definition",
        )
        for i, title in enumerate(headings[::step][:count])
    ]


def expect_recall(answer: str, expect: str) -> float:
    """Share of the content words of `expect` (a few words of the answer) that the answer holds."""
    wanted = Analysis(expect).term_set | Analysis(expect).numbers
    found = Analysis(answer).term_set | Analysis(answer).numbers
    return len(wanted & found) / len(wanted) if wanted else 1.0


def search_queries(response) -> list[str]:
    """The queries the run's retrieval_tool calls searched for."""
    queries = []
    for step in response.steps:
        if step.name == TOOL_NAME and not step.error:
            queries.append(json.loads(step.arguments or "{}").get("query", ""))
    return [q for q in queries if q]


def print_record(record: dict, out) -> None:
    verdict = "declined" if record["declined"] else "NOT GROUNDED"
    verdict = "grounded" if record["grounded"] else verdict
    flags = [verdict, f"citations {record['citations_valid']}/{record['citations_found']}"]
    if record["answerable"] and record["split"] != HEADINGS_SPLIT:
        flags.append("right page" if record["right_page"] else "OTHER PAGE")
    if record["fragments"]:
        flags.append("markdown: " + ",".join(record["fragments"]))
    if record["duplicate"]:
        flags.append("DUPLICATES")
    kind = "ans" if record["answerable"] else "unans"
    print(f"\n{record['id']} ({record['split']}, {kind}) {record['question']}", file=out)
    print(f"  [{' · '.join(flags)}]", file=out)
    print("  " + " ".join(record["answer"].split()), file=out)
    if record["disagreement"]:
        for text, reason in record["unsupported_reasons"]:
            print(f"    unsupported: {text!r} ({reason})", file=out)


def totals(records: list[dict]) -> dict:
    answerable = [r for r in records if r["answerable"] and r["split"] != HEADINGS_SPLIT]
    headings = [r for r in records if r["split"] == HEADINGS_SPLIT]
    unanswerable = [r for r in records if not r["answerable"]]
    answered = [r for r in records if not r["declined"] and r["status"] == "OK"]

    def count(rows: list[dict], test) -> str:
        return f"{sum(bool(test(r)) for r in rows)}/{len(rows)}"

    return {
        "answerable_answered": count(answerable, lambda r: not r["declined"]),
        "answerable_grounded": count(answerable, lambda r: r["grounded"] and not r["declined"]),
        "answerable_right_page": count(answerable, lambda r: r["right_page"]),
        "unanswerable_declined": count(unanswerable, lambda r: r["declined"]),
        "headings_answered": count(headings, lambda r: not r["declined"]),
        "headings_grounded": count(headings, lambda r: r["grounded"] and not r["declined"]),
        "answers_given": len(answered),
        "answers_not_grounded": sum(r["disagreement"] for r in records),
        "citations_valid": f"{sum(r['citations_valid'] for r in answered)}/"
        f"{sum(r['citations_found'] for r in answered)}",
        "answers_with_markdown": sum(bool(r["fragments"]) for r in answered),
        "answers_with_duplicates": sum(bool(r["duplicate"]) for r in answered),
        "errors": sum(r["status"] != "OK" for r in records),
    }


class Book:
    """The running suite's stubs and what each question retrieved, for re-ranking variants."""

    def __init__(self, channels, collection: str) -> None:
        self.agent = agent_pb2_grpc.AgentServiceStub(channels["agent"])
        self.retrieval = retrieval_pb2_grpc.RetrievalServiceStub(channels["retrieval"])
        self.validation = validation_pb2_grpc.ValidationServiceStub(channels["validation"])
        self.collection = collection
        # question id -> (search query, the chunks in source order)
        self.retrieved: dict[str, tuple[str, list[common_pb2.ScoredChunk]]] = {}

    async def ask_all(self, questions: list[Question], timeout: float, report) -> list[dict]:
        sessions: dict[str, str] = {}
        records = []
        for question in questions:
            session_id = sessions.get(question.session, "") if question.session else ""
            outcome = await ask(self.agent, question, self.collection, session_id, timeout)
            if question.session and outcome.session_id:
                sessions.setdefault(question.session, outcome.session_id)
            response = outcome.response
            record = judge_answer(question, outcome.status, response, outcome.detail)
            validation = response.validation if response is not None else None
            record["citations_found"] = validation.citations_found if validation else 0
            record["citations_valid"] = validation.citations_valid if validation else 0
            record["unsupported_reasons"] = [
                (c.text, c.reason) for c in (validation.claims if validation else []) if not c.supported
            ]
            record["fragments"] = [] if record["declined"] else fragments(record)
            record["disagreement"] = (
                record["status"] == "OK" and not record["declined"] and not record["grounded"]
            )
            records.append(record)
            report(record)
            if response is not None:
                await self._keep_retrieval(question, response)
        return records

    async def _keep_retrieval(self, question: Question, response) -> None:
        """Searches again as the run's tool calls did (Search is deterministic), numbering chunks
        as the agent numbers sources: by first retrieval."""
        chunks: dict[str, common_pb2.ScoredChunk] = {}
        queries = search_queries(response)
        for query in queries:
            request = retrieval_pb2.SearchRequest(collection=self.collection, query=query, top_k=5)
            reply = await self.retrieval.Search(request, timeout=30)
            for result in reply.results:
                chunks.setdefault(result.chunk.chunk_id, result)
        if queries:
            self.retrieved[question.id] = (queries[-1], list(chunks.values()))

    async def variant_figures(self, questions: list[Question], weights: Weights, embed) -> dict:
        rows = []
        for question in questions:
            if question.id not in self.retrieved:
                continue
            query, chunks = self.retrieved[question.id]
            passages = [Passage.of(n, r) for n, r in enumerate(chunks, start=1)]
            picks = choose_sentences(query, passages, embed, weights)
            answer = compose_answer(picks) if picks else not_covered(passages)
            request = validation_pb2.ValidateRequest(
                query=question.question, response=answer, context=[r.chunk for r in chunks]
            )
            verdict = await self.validation.Validate(request, timeout=60)
            cited_paths = {chunks[p.number - 1].chunk.source_path for p in picks}
            rows.append(
                {
                    "id": question.id,
                    "answer": answer,
                    "answerable": question.answerable,
                    "declined": not picks,
                    "grounded": bool(picks) and verdict.is_grounded,
                    "right_page": question.source in cited_paths,
                    "recall": expect_recall(answer, question.expect) if picks else 0.0,
                    "correct": judge_correctness(
                        question.expect,
                        answer,
                        answerable=question.answerable,
                        declined=not picks,
                        selected_text=question.selected_text,
                    ).verdict
                    == "correct",
                    "chars": len(answer),
                }
            )
        answerable = [r for r in rows if r["answerable"]]
        unanswerable = [r for r in rows if not r["answerable"]]

        def mean(values) -> float:
            values = list(values)
            return statistics.mean(values) if values else float("nan")

        return {
            "correct": mean(r["correct"] for r in rows),
            "answered": mean(not r["declined"] for r in answerable),
            "grounded": mean(r["grounded"] for r in answerable),
            "right_page": mean(r["right_page"] for r in answerable),
            "expect_recall": mean(r["recall"] for r in answerable),
            "median_chars": statistics.median(r["chars"] for r in answerable) if answerable else 0,
            "unanswerable_declined": mean(r["declined"] for r in unanswerable),
            "answers": {r["id"]: r["answer"] for r in rows},
        }


async def check_sentences(corpus: Path, out) -> dict:
    """Every prose sentence of the corpus's chunks, shown and cited, validated against its chunk."""
    checker = OfflineChecker()
    checked, failed = 0, []
    for item in read_folder(corpus):
        if isinstance(item, SourceError):
            continue
        for chunk in chunk_document(parse_document(item, ""), count_tokens):
            for start, end in prose_sentences(chunk.text):
                answer = f"{shown_sentence(chunk.text[start:end])} [1]"
                verdict = await checker.check("", answer, [ContextChunk("1", chunk.text)], [], None)
                checked += 1
                if not verdict.is_grounded or verdict.citations_valid != verdict.citations_found:
                    reasons = [claim.reason for claim in verdict.claims if not claim.supported]
                    failed.append({"sentence": chunk.text[start:end], "reasons": reasons})
                    print(f"  not grounded: {chunk.text[start:end]!r} ({'; '.join(reasons)})", file=out)
    print(
        f"sentences validated against their own chunk: {checked - len(failed)}/{checked} grounded", file=out
    )
    return {"checked": checked, "failed": failed}


async def run(args: argparse.Namespace, data_dir: Path) -> dict:
    qset = load_questions(args.questions)
    ids = [i for i in args.ids.split(",") if i]
    questions = select(qset.questions, args.split, ids) if args.split != "none" or ids else []
    if args.headings:
        questions += heading_questions(qset.corpus, args.headings)
    out = sys.stderr if args.json else sys.stdout
    if args.sentences:
        return {"sentences": await check_sentences(qset.corpus, out), "records": [], "variants": {}}

    def report(record: dict) -> None:
        problem = record["disagreement"] or record["fragments"] or record["duplicate"]
        if not args.quiet or problem:
            print_record(record, out)

    async with suite_channels({"agent": "", "retrieval": "", "validation": ""}, data_dir) as channels:
        book = Book(channels, qset.collection)
        options = retrieval_pb2.IngestOptions(collection=qset.collection)
        summary = await ingest_folder(book.retrieval, qset.corpus, options) or retrieval_pb2.IngestProgress()
        print(
            f"{qset.corpus}: {summary.documents_indexed} documents indexed, "
            f"{summary.chunks_written} chunks; {len(questions)} questions",
            file=out,
        )
        records = await book.ask_all(questions, args.timeout, report)
        variants = {}
        if args.set:
            embed = EmbeddingCache(local_embedding_model().embed)
            asked = [q for q in questions if q.split != HEADINGS_SPLIT]
            for label in ["default", *args.set]:
                weights = Weights() if label == "default" else variant(Weights(), label.split(","))
                variants[label] = await book.variant_figures(asked, weights, embed)
    return {"records": records, "totals": totals(records), "variants": variants}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--split", choices=("all", "tune", "report", "none"), default="all")
    parser.add_argument("--ids", default="", help="only these questions, comma-separated")
    parser.add_argument("--headings", type=int, default=0, help='also ask "What is <heading>?" of N headings')
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE[,FIELD=VALUE]", help="a Weights variant"
    )
    parser.add_argument(
        "--sentences",
        action="store_true",
        help="validate every prose sentence against its chunk (no questions)",
    )
    parser.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary directory")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--quiet", action="store_true", help="print only answers with a problem")
    parser.add_argument("--json", action="store_true", help="records, totals and variants as JSON on stdout")
    args = parser.parse_args()
    # The offline model answers, and the answer delivered is its own, with its verdict.
    for name in ("BASE_URL", "MODEL", "API_KEY"):
        os.environ[f"GLOSSATOR_AGENT_LLM_{name}"] = ""
    os.environ["GLOSSATOR_AGENT_VALIDATION_POLICY"] = "annotate"
    configure_logging("WARNING", "console")
    with tempfile.TemporaryDirectory(prefix="glossator-book-") as temporary:
        result = asyncio.run(run(args, args.data_dir or Path(temporary)))
    if args.json:
        print(json.dumps(result, default=str))
        return
    if "totals" in result:
        print("\n" + "\n".join(f"{key:>24}: {value}" for key, value in result["totals"].items()))
    for label, f in result["variants"].items():
        print(
            f"  {label:<32} correct {f['correct']:.3f}  answered {f['answered']:.3f}  grounded {f['grounded']:.3f}  right page "
            f"{f['right_page']:.3f}  expect recall {f['expect_recall']:.3f}  median {f['median_chars']} "
            f"chars  unanswerable declined {f['unanswerable_declined']:.3f}"
        )


if __name__ == "__main__":
    main()
