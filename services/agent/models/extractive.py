"""Extractive answering: the sentences of the retrieved passages that best answer a question.

No generation, so nothing can be invented: every sentence of an answer is copied verbatim from a
numbered passage and cited with that number. A sentence scores on
- meaning: cosine similarity of its embedding with the question's (the local MiniLM model);
- words: the IDF-weighted share of the question's content words it contains (IDF over the
  retrieved sentences, so a word every passage repeats counts for little);
- neighbourhood: the best word score of the sentences around it, since an answer often follows the
  sentence that names the subject ("Tesla was born in Smiljan. He studied in Graz.");
- answer type: a number for how many / when questions, a name the question does not already
  contain for who / where questions;
- retrieval rank: a small bonus for the passages the retriever put first.
Only the sentences that score best on words (with their neighbourhood) are embedded: on SQuAD the
top 10 of about 25 lose nothing measurable, and a cold answer over five long chunks embeds 20
sentences instead of a hundred.
The best sentence answers; up to two more follow when they fit the length budget and score close
to it: half its score suffices within its own passage (neighbours complete it), nine tenths from
another passage. When even the best sentence barely relates to the question (in meaning and in
words), the book does not cover it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from services.common.embedding import Embed
from services.retrieval.sentences import normalise, prose_sentences
from services.validation.text import STOPWORDS, Analysis, capitalised_words

# Passages whose sentences are kept split and analysed: related questions retrieve the same chunks.
PASSAGE_CACHE_SIZE = 2048
# A passage header in the retrieval tool's output: "[3] Title > Section (https://...)".
_HEADER_RE = re.compile(r"^\[(\d{1,4})\] (.*)$", re.MULTILINE)
_NUMBER_RE = re.compile(r"\d")
_YEAR_OR_MONTH_RE = re.compile(
    r"\b(?:1\d{3}|20\d{2}|January|February|March|April|May|June|July|August|September|October"
    r"|November|December|century|centuries)\b"
)
_NUMERIC_Q_RE = re.compile(
    r"\b(?:how (?:many|much|long|old|far|often|big|large|tall|high|fast|heavy)|what (?:percentage|percent|number|amount)|"
    r"what (?:year|date|decade|century)|which (?:year|date|decade|century)|when)\b",
    re.IGNORECASE,
)
_NAME_Q_RE = re.compile(
    r"\b(?:who|whom|whose|where|which|what (?:city|country|company|team|name))\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Weights:
    """How the evidence combines; tuned on SQuAD with bench/offline_answer_quality.py."""

    meaning: float = 1.0
    words: float = 0.6
    neighbourhood: float = 0.15
    answer_type: float = 0.1
    # Retrieval rank is real evidence through the service, but weaker since Search scores every
    # sentence of every hit. Containment over 2,000 SQuAD questions through Search
    # (`.venv/bin/python -m bench.answer_tuning`): rank 0 / 0.05 / 0.1 / 0.3 gave
    # 0.826 / 0.837 / 0.837 / 0.819 with the older length settings.
    rank: float = 0.1
    # Sentences beyond the first must reach this share of the best score: a lower share for the
    # best sentence's own passage (its neighbours complete it), a higher one for other passages.
    # Other passages at 0.9 / 0.85 / 0.8: containment 0.851 / 0.856 / 0.860, answers citing only
    # the question's own paragraph 0.81 / 0.77 / 0.73.
    follow_ratio: float = 0.5
    follow_ratio_other: float = 0.85
    max_sentences: int = 3
    # Only this many sentences that Search did not score, the best by words, are embedded: a cold
    # answer over five long chunks would otherwise embed a hundred sentences.
    max_embedded: int = 20
    # Characters of answer text (without citations) that further sentences may fill. The issue
    # caps the median answer at 400 characters: at 450 the median is 366 (400: 0.84 containment).
    budget_chars: int = 450
    # Below both, the passages do not answer the question.
    min_meaning: float = 0.3
    min_words: float = 0.4


@dataclass(frozen=True)
class Passage:
    number: int
    heading: str
    text: str


@dataclass(frozen=True)
class Pick:
    """A sentence chosen for the answer, with the passage it cites."""

    number: int
    sentence: str


@dataclass(frozen=True)
class _Candidate:
    number: int
    rank: int
    position: int
    text: str
    analysis: Analysis


def parse_passages(tool_output: str) -> list[Passage]:
    """The numbered passages of a retrieval tool output (none for an error or an empty result)."""
    headers = list(_HEADER_RE.finditer(tool_output))
    passages = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(tool_output)
        passages.append(
            Passage(int(header.group(1)), header.group(2), tool_output[header.end() : end].strip())
        )
    return passages


def sentences_of(text: str) -> list[str]:
    """Prose sentences of a passage, whitespace normalised (the form Search's scores are keyed by)."""
    return [normalise(text[start:end]) for start, end in prose_sentences(text)]


def choose_sentences(
    question: str,
    passages: Sequence[Passage],
    embed: Embed,
    weights: Weights | None = None,
    scored: Mapping[str, float] | None = None,
) -> list[Pick]:
    """The answer's sentences, best first; empty when the passages do not answer the question.

    `scored`: cosine similarities with the question that Search already computed, by sentence.
    """
    weights = weights or Weights()
    candidates = _candidates(passages)
    if not candidates:
        return []
    asked = Analysis(question)
    words = _word_scores(asked, candidates)
    neighbourhood = _neighbourhood(candidates, words)
    shortlist = np.argsort(-(words + neighbourhood), kind="stable")[: weights.max_embedded]
    meaning = _meaning(question, candidates, shortlist, embed, scored or {})
    answer_type = _answer_type(question, asked, candidates)
    rank = np.array([1.0 / (1 + c.rank) for c in candidates])
    scores = (
        weights.meaning * meaning
        + weights.words * words
        + weights.neighbourhood * neighbourhood
        + weights.answer_type * answer_type
        + weights.rank * rank
    )
    order = np.argsort(-scores, kind="stable")
    best = int(order[0])
    if meaning[best] < weights.min_meaning and words[best] < weights.min_words:
        return []
    picks = [best]
    used = len(candidates[best].text)
    for index in order[1:]:
        candidate = candidates[index]
        same_passage = candidate.number == candidates[best].number
        ratio = weights.follow_ratio if same_passage else weights.follow_ratio_other
        if len(picks) == weights.max_sentences:
            break
        if scores[index] < ratio * scores[best] or candidate.text == candidates[best].text:
            continue
        if used + len(candidate.text) <= weights.budget_chars:
            picks.append(int(index))
            used += len(candidate.text)
    return [Pick(candidates[i].number, candidates[i].text) for i in picks]


def compose_answer(picks: Sequence[Pick]) -> str:
    """Each sentence verbatim, followed by its citation."""
    return " ".join(f"{pick.sentence} [{pick.number}]" for pick in picks)


def _candidates(passages: Sequence[Passage]) -> list[_Candidate]:
    candidates = []
    for rank, passage in enumerate(passages):
        for position, analysis in enumerate(_analysed_sentences(passage.text)):
            candidates.append(_Candidate(passage.number, rank, position, analysis.text, analysis))
    return candidates


@lru_cache(maxsize=PASSAGE_CACHE_SIZE)
def _analysed_sentences(text: str) -> tuple[Analysis, ...]:
    """A passage's sentences, split and analysed once (an Analysis computes each view once)."""
    return tuple(Analysis(sentence) for sentence in sentences_of(text))


def _meaning(
    question: str,
    candidates: Sequence[_Candidate],
    shortlist: np.ndarray,
    embed: Embed,
    scored: Mapping[str, float],
) -> np.ndarray:
    """Cosine of each sentence with the question: Search's score where it gave one, else the
    model's for the shortlisted sentences, else -1."""
    meaning = np.array([scored.get(c.text, -1.0) for c in candidates])
    missing = [int(i) for i in shortlist if candidates[i].text not in scored]
    if missing:
        vectors = embed([question] + [candidates[i].text for i in missing])
        meaning[missing] = vectors[1:] @ vectors[0]
    return meaning


def _word_scores(asked: Analysis, candidates: Sequence[_Candidate]) -> np.ndarray:
    """IDF-weighted share of the question's content words in each sentence."""
    document_frequency = Counter(term for c in candidates for term in c.analysis.term_set)
    total = len(candidates)

    def idf(term: str) -> float:
        return math.log(1 + total / (1 + document_frequency[term]))

    wanted = {term: idf(term) for term in asked.term_set}
    weight = sum(wanted.values())
    if not weight:
        return np.zeros(total)
    return np.array(
        [sum(w for t, w in wanted.items() if t in c.analysis.term_set) / weight for c in candidates]
    )


def _neighbourhood(candidates: Sequence[_Candidate], words: np.ndarray) -> np.ndarray:
    """The best word score of the sentences just before and after, in the same passage."""
    scores = np.zeros(len(candidates))
    for i, candidate in enumerate(candidates):
        for j in (i - 1, i + 1):
            if 0 <= j < len(candidates) and candidates[j].number == candidate.number:
                scores[i] = max(scores[i], words[j])
    return scores


def _answer_type(question: str, asked: Analysis, candidates: Sequence[_Candidate]) -> np.ndarray:
    """1 when a sentence holds the kind of thing asked for and the question does not already."""
    scores = np.zeros(len(candidates))
    if _NUMERIC_Q_RE.search(question):
        for i, c in enumerate(candidates):
            if _NUMBER_RE.search(c.text) or _YEAR_OR_MONTH_RE.search(c.text):
                scores[i] = 1.0
    elif _NAME_Q_RE.search(question):
        known = asked.word_set | STOPWORDS
        for i, c in enumerate(candidates):
            if any(word not in known for word, offset in capitalised_words(c.text) if offset > 0):
                scores[i] = 1.0
    return scores
