"""`glossator eval`: quality figures measured through the running services' public RPCs.

One module per evaluation:
- retrieval: SQuAD paragraphs ingested through Ingest, questions asked through Search;
  recall@1/5/10 and MRR@10 per mode.
- grounding: HaluEval (QA or summarization) answers checked through Validate; balanced accuracy,
  precision/recall of "not grounded", p50/p99 validation time.
- answers: questions asked through AskStream. --squad (squad_answers): answer containment and
  own-paragraph citations on SQuAD. --questions (question_answers): a question file's book
  (bench/questions/*.yaml) ingested into its collection, then per split the share of questions
  answered correctly (correctness.py), of answerable questions correct, partial and wrong, citing
  the right page, grounded and declined, unanswerable ones declined, answers with Markdown
  fragments or a repeated sentence, the median answer length and the calls that did not end OK
  (answer_quality.py).
squad.py loads and ingests SQuAD for retrieval and answers; shared.py runs the calls.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from services.commands.connect import add_target_option, default_target
from services.commands.eval.grounding import eval_grounding
from services.commands.eval.question_answers import eval_question_file
from services.commands.eval.retrieval import eval_retrieval
from services.commands.eval.shared import usage_error
from services.commands.eval.squad import EVAL_COLLECTION
from services.commands.eval.squad_answers import eval_squad_answers
from services.commands.question_file import SPLITS
from services.common.contract_limits import DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K


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
    retrieval.set_defaults(func=lambda args: asyncio.run(eval_retrieval(args)))

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
    grounding.set_defaults(func=lambda args: asyncio.run(eval_grounding(args)))

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
    answers.set_defaults(func=lambda args: asyncio.run(_answers(args)))


async def _answers(args: argparse.Namespace) -> int:
    """--squad or --questions, after the checks both share."""
    if args.concurrency < 1 or args.timeout <= 0:
        return usage_error("--concurrency must be at least 1 and --timeout above 0")
    if args.questions is not None:
        return await eval_question_file(args)
    return await eval_squad_answers(args)
