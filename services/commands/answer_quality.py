"""What `glossator eval answers --questions` checks in one answer, and the figures over many.

- correct / partial / wrong: whether the answer holds the page's answer (correctness.py);
- right page: one of the sources the answer cites ([n] markers) is the question's source file;
- Markdown fragments: raw Markdown syntax left in the answer text (a reader sees it as is);
- duplicate sentences: two sentences of one answer that say the same thing;
- the figures: shares over a question set (see `question_figures`).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from itertools import combinations
from urllib.parse import unquote, urlsplit

from glossator.v1 import agent_pb2
from services.agent.citations import MARKER_RE, marker_indexes
from services.commands.correctness import judge_correctness, verdict_figures
from services.commands.question_file import Question, normalise_source
from services.common.text.units import sentence_spans

# --- Markdown left in the answer -------------------------------------------------------------

# Kind → pattern; line-anchored patterns see each line of the answer (re.MULTILINE).
_MARKDOWN = {
    "heading": re.compile(r"^[ \t]*#{1,6}[ \t]+\S", re.MULTILINE),
    "fence": re.compile(r"```|~~~"),
    "bold": re.compile(r"\*\*\S|\S\*\*"),
    "table": re.compile(r"^[ \t]*\|.*\||\S[ \t]*\|[ \t]*\S.*\|", re.MULTILINE),
    "link": re.compile(r"!?\[[^\]\n]+\]\([^)\s]+\)"),
    "bullet": re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+\S", re.MULTILINE),
    "admonition": re.compile(r":::[ \t]*[a-z]+\b|^[ \t]*:::[ \t]*$", re.MULTILINE),
}


def markdown_fragments(text: str) -> list[str]:
    """The kinds of raw Markdown in text: heading (`# ` at a line start), fence (``` or ~~~), bold
    (`**`), table (a line with two `|` pipes), link (`[text](url)`, images too) and bullet (`- `,
    `* `, `+ `, `1. ` at a line start), and admonition (Docusaurus `:::tip` ... `:::`). Citation
    markers such as [1] are not links."""
    return [kind for kind, pattern in _MARKDOWN.items() if pattern.search(text)]


# --- sentences that repeat ---------------------------------------------------------------------

_TOKEN = re.compile(r"\w+")
# Shorter sentences ("See below.") are left out: two of them are alike by chance.
MIN_SENTENCE_TOKENS = 4
NEAR_DUPLICATE_JACCARD = 0.8


def sentence_tokens(text: str) -> list[list[str]]:
    """The answer's sentences (citation markers dropped) as lists of lower-case word tokens."""
    plain = MARKER_RE.sub("", text)
    sentences = (_TOKEN.findall(plain[start:end].lower()) for start, end in sentence_spans(plain))
    return [tokens for tokens in sentences if len(tokens) >= MIN_SENTENCE_TOKENS]


def duplicate_sentences(text: str) -> tuple[str, str] | None:
    """The first pair of sentences of text that repeat each other: the same word set up to a token
    Jaccard of 0.8, or one's words standing in order inside the other; None when there is none."""
    sentences = sentence_tokens(text)
    for a, b in combinations(sentences, 2):
        sa, sb = set(a), set(b)
        jaccard = len(sa & sb) / len(sa | sb)
        shorter, longer = sorted((a, b), key=len)
        if jaccard >= NEAR_DUPLICATE_JACCARD or f" {' '.join(shorter)} " in f" {' '.join(longer)} ":
            return " ".join(a), " ".join(b)
    return None


# --- the page the answer cites ---------------------------------------------------------------


def cited_sources(response: agent_pb2.Response) -> list[agent_pb2.Source]:
    """The response's sources the answer names with [n] markers, in order of first citation."""
    by_index = {s.index: s for s in response.sources}
    return [by_index[n] for n in marker_indexes(response.answer) if n in by_index]


def is_page(source: agent_pb2.Source, path: str) -> bool:
    """Whether a source is the corpus file `path`: its document id is the path (a folder ingest
    derives it so), or its document id or URL ends with the path (an id or URL given at ingest)."""
    want = normalise_source(path)
    if normalise_source(source.document_id) == want:
        return True
    for value in (source.document_id, unquote(urlsplit(source.source_url).path)):
        if value and normalise_source(value).endswith("/" + want):
            return True
    return False


def source_path(source: agent_pb2.Source) -> str:
    return source.document_id or source.source_url


# --- one question, and many ------------------------------------------------------------------


def judge_answer(
    question: Question, status: str, response: agent_pb2.Response | None, detail: str = ""
) -> dict:
    """The record of one question: what was asked, what came back and the checks on it."""
    response = response or agent_pb2.Response()
    ok = status == "OK"
    cited = cited_sources(response)
    duplicate = duplicate_sentences(response.answer)
    grounding = response.grounding
    correctness = judge_correctness(
        question.expect,
        response.answer,
        answerable=question.answerable,
        declined=ok and response.not_covered,
        answered=ok,
        selected_text=question.selected_text,
    )
    return {
        "id": question.id,
        "split": question.split,
        "form": question.form,
        "answerable": question.answerable,
        "question": question.question,
        "source": question.source,
        "expect": question.expect,
        "correctness": correctness.verdict,
        "expect_share": correctness.score,
        "missing": list(correctness.missing),
        "status": status,
        "detail": detail,
        "model": response.model,
        "answer": response.answer,
        "chars": len(response.answer),
        "cited": [source_path(s) for s in cited],
        # A decline cites the sections nearby: naming the right page is not answering from it.
        "right_page": ok
        and question.answerable
        and not response.not_covered
        and any(is_page(s, question.source) for s in cited),
        "grounded": ok
        and grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
        and grounding.is_grounded,
        "validation": agent_pb2.ValidationStatus.Name(grounding.status),
        "grounding_score": round(grounding.grounding_score, 3),
        "confidence": round(response.confidence, 3),
        "unsupported": [c.text for c in response.validation.claims if not c.supported],
        "declined": ok and response.not_covered,
        "markdown": markdown_fragments(response.answer),
        "duplicate": list(duplicate) if duplicate else None,
    }


# A confidence a reader takes as "checked and sure" (Response.confidence, 0-1).
CONFIDENT = 0.8


def confidently_wrong(record: dict) -> bool:
    """A wrong answer (an unanswerable question answered, or an answerable one missed) that is
    shown grounded with confidence CONFIDENT or more: the one kind of answer that must not exist."""
    return record["correctness"] == "wrong" and record["grounded"] and record["confidence"] >= CONFIDENT


def _share(rows: list[dict], test) -> float | None:
    return round(sum(1 for r in rows if test(r)) / len(rows), 4) if rows else None


def question_figures(records: list[dict]) -> dict:
    """The figures of a question set.

    correct: the share of all questions answered correctly (an unanswerable one by declining);
    answerable: correct / partial / wrong (shares), and (shares of all its questions, a failed call counting as a miss): right_page,
    grounded, declined; unanswerable: declined; confidently_wrong: the count of wrong answers
    shown grounded with confidence CONFIDENT or more; answers (the calls that returned, declined or
    not): markdown and duplicates (shares with at least one), median_chars; forms: the share of
    answerable questions of each form answered correctly; status: the count of
    each gRPC status other than OK. A share is None when there is nothing to divide by.
    """
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    answered = [r for r in records if r["status"] == "OK"]
    lengths = [r["chars"] for r in answered]
    return {
        "questions": len(records),
        "correct": _share(records, lambda r: r["correctness"] == "correct"),
        "answerable": {
            "questions": len(answerable),
            **verdict_figures([r["correctness"] for r in answerable]),
            "right_page": _share(answerable, lambda r: r["right_page"]),
            "grounded": _share(answerable, lambda r: r["grounded"]),
            "declined": _share(answerable, lambda r: r["declined"]),
        },
        "unanswerable": {
            "questions": len(unanswerable),
            "declined": _share(unanswerable, lambda r: r["declined"]),
        },
        "confidently_wrong": sum(confidently_wrong(r) for r in records),
        "answers": {
            "answered": len(answered),
            "markdown": _share(answered, lambda r: r["markdown"]),
            "duplicates": _share(answered, lambda r: r["duplicate"]),
            "median_chars": statistics.median(lengths) if lengths else None,
        },
        "forms": {
            form: _share(
                [r for r in answerable if r["form"] == form], lambda r: r["correctness"] == "correct"
            )
            for form in sorted({r["form"] for r in answerable})
        },
        "status": dict(Counter(r["status"] for r in records if r["status"] != "OK")),
        "models": dict(Counter(r["model"] for r in records if r["model"])),
    }
