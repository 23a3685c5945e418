"""Answer quality of the offline extractive model on SQuAD, at domain level (no servers).

For each question the model gets, as retrieval_tool output formatted by the real tool code, the
question's own paragraph and `--others` other paragraphs of the same article, in a deterministic
shuffled order (the service would retrieve similar neighbours). It prints:
- containment: share of answers containing a gold answer string (case and spacing ignored);
  containment_exact compares verbatim;
- own_paragraph_cited: share of answers whose citations all point at the question's own paragraph;
- median / mean answer length in characters (citations included);
- not_covered: share of answers saying the book does not cover the question (ideally 0 here);
- with --negatives N: for N questions given five paragraphs of *another* article, the share of
  answers that rightly say the book does not cover them.

    .venv/bin/python bench/offline_answer_quality.py --limit 1000 [--negatives 300] [--json]

Reads ../shared/eval/squad/dev-v1.1.dev-split.json in place (never copied into the repository).
Sentences are embedded once, in batches, and cached: the ranking code runs exactly as in the service.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from glossator.v1 import common_pb2
from services.agent.citations import marker_indexes
from services.agent.extractive import ExtractiveAnswerer, Weights, is_decline, sentences_of
from services.agent.passages import Passage
from services.common.embedding import EmbeddingCache, local_embedding_model

DEFAULT_SQUAD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "squad" / "dev-v1.1.dev-split.json"


@dataclass(frozen=True)
class Case:
    question: str
    answers: list[str]
    paragraphs: list[str]  # in the order the model sees them
    own: int | None  # 1-based number of the question's own paragraph; None for a negative case
    title: str


def load_cases(
    path: Path, limit: int, others: int, negatives: int, seed: int
) -> tuple[list[Case], list[Case]]:
    articles = json.loads(path.read_text())["data"]
    questions = [
        (a, p, qa)
        for a, article in enumerate(articles)
        for p, paragraph in enumerate(article["paragraphs"])
        for qa in paragraph["qas"]
    ]
    rng = random.Random(seed)
    rng.shuffle(questions)
    positives = []
    for a, p, qa in questions[:limit]:
        article = articles[a]
        pool = [i for i in range(len(article["paragraphs"])) if i != p]
        chosen = [p, *random.Random(f"{seed}:{qa['id']}").sample(pool, min(others, len(pool)))]
        random.Random(f"{seed}:{qa['id']}:order").shuffle(chosen)
        texts = [article["paragraphs"][i]["context"] for i in chosen]
        answers = [answer["text"] for answer in qa["answers"]]
        positives.append(Case(qa["question"], answers, texts, chosen.index(p) + 1, article["title"]))
    negative_cases = []
    for a, _p, qa in questions[limit : limit + negatives]:
        other = articles[(a + 1 + rng.randrange(len(articles) - 1)) % len(articles)]
        picked = random.Random(f"{seed}:{qa['id']}:neg").sample(other["paragraphs"], others + 1)
        texts = [paragraph["context"] for paragraph in picked]
        negative_cases.append(Case(qa["question"], [], texts, None, other["title"]))
    return positives, negative_cases


def passages(case: Case) -> list[Passage]:
    """The case's paragraphs as a run keeps retrieved chunks (unscored: the answerer embeds)."""
    return [
        Passage.of(
            n,
            common_pb2.ScoredChunk(
                chunk=common_pb2.Chunk(title=case.title, source_url=f"squad://{case.title}#{n}", text=text),
                rank=n,
            ),
        )
        for n, text in enumerate(case.paragraphs, start=1)
    ]


async def answer(answerer: ExtractiveAnswerer, case: Case) -> str:
    return await answerer.answer(case.question, passages(case))


def contains(answer_text: str, gold: str, exact: bool) -> bool:
    if exact:
        return gold in answer_text
    return " ".join(gold.lower().split()) in " ".join(answer_text.lower().split())


async def evaluate(args: argparse.Namespace) -> dict[str, float]:
    positives, negatives = load_cases(args.squad, args.limit, args.others, args.negatives, args.seed)
    embedder = EmbeddingCache(local_embedding_model().embed, max_entries=sys.maxsize)
    started = time.perf_counter()
    cases = positives + negatives
    texts = [c.question for c in cases] + [s for c in cases for p in c.paragraphs for _, s in sentences_of(p)]
    for start in range(0, len(texts), 256):
        embedder(texts[start : start + 256])
    embed_s = time.perf_counter() - started
    model = ExtractiveAnswerer(embed=embedder, weights=args.weights)
    started = time.perf_counter()
    answers = [await answer(model, case) for case in positives]
    negative_answers = [await answer(model, case) for case in negatives]
    rank_ms = (time.perf_counter() - started) * 1000 / max(1, len(cases))
    lengths = [len(a) for a in answers]
    cited_own = [set(marker_indexes(a)) == {c.own} for a, c in zip(answers, positives, strict=True)]
    figures = {
        "questions": len(positives),
        "containment": statistics.mean(
            any(contains(a, g, exact=False) for g in c.answers)
            for a, c in zip(answers, positives, strict=True)
        ),
        "containment_exact": statistics.mean(
            any(contains(a, g, exact=True) for g in c.answers)
            for a, c in zip(answers, positives, strict=True)
        ),
        "own_paragraph_cited": statistics.mean(cited_own),
        "median_chars": statistics.median(lengths),
        "mean_chars": statistics.mean(lengths),
        "not_covered": statistics.mean(is_decline(a) for a in answers),
        "ms_per_answer_ranking": rank_ms,
        "embedding_s": embed_s,
    }
    if negatives:
        figures["negatives"] = len(negatives)
        figures["negatives_not_covered"] = statistics.mean(is_decline(a) for a in negative_answers)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    parser.add_argument("--limit", type=int, default=1000, help="questions to answer (deterministic sample)")
    parser.add_argument(
        "--others", type=int, default=4, help="other paragraphs given with the question's own"
    )
    parser.add_argument(
        "--negatives", type=int, default=0, help="questions asked of another article's paragraphs"
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--weights", type=json.loads, default={}, help='JSON overrides of Weights, e.g. {"words": 0.5}'
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if not args.squad.exists():
        sys.exit(f"SQuAD split not found at {args.squad}")
    args.weights = Weights(**args.weights)
    figures = asyncio.run(evaluate(args))
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key:>24}: {value:.3f}" if isinstance(value, float) else f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
