"""The context as evidence: chunks cut into passages, and the passage that best covers a claim.

A passage is a window of one to a few consecutive sentences of one chunk: small enough that a
claim whose words are spread over a whole chunk (a recombination of facts) does not look
supported, large enough for a claim that merges two adjacent sentences.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from functools import cached_property

from services.common.text.units import sentence_spans
from services.common.text.words import Analysis


@dataclass(frozen=True)
class Passage:
    """Sentences [first, last) of one chunk, with the union of their words."""

    chunk_index: int
    first: int
    last: int
    terms: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    negations: frozenset[str]


class ChunkEvidence:
    """One context chunk, analysed once per check and shared by every claim."""

    def __init__(self, index: int, text: str, window_sentences: int, phrase_gap: int) -> None:
        self.index = index
        self.analysis = Analysis(text)
        self.sentences = [text[a:b] for a, b in sentence_spans(text)] or [text]
        self._window_sentences = window_sentences
        self._phrase_gap = phrase_gap

    @cached_property
    def passages(self) -> list[Passage]:
        analysed = [Analysis(sentence) for sentence in self.sentences]
        passages = []
        for size in range(1, min(self._window_sentences, len(analysed)) + 1):
            for first in range(len(analysed) - size + 1):
                window = analysed[first : first + size]
                passages.append(
                    Passage(
                        self.index,
                        first,
                        first + size,
                        frozenset().union(*(a.term_set for a in window)),
                        frozenset().union(*(a.ordered_pairs(self._phrase_gap) for a in window)),
                        frozenset().union(*(a.negations for a in window)),
                    )
                )
        return passages


@dataclass(frozen=True)
class PassageMatch:
    """How well one passage covers a claim's content words and adjacent word pairs."""

    passage: Passage
    novel_terms: frozenset[str]  # nowhere in the chunk
    outside_terms: frozenset[str]  # in the chunk, but not in this passage
    missing_bigrams: frozenset[tuple[str, str]]  # adjacent claim words not in order in this passage

    @property
    def misses(self) -> int:
        return len(self.novel_terms) + len(self.outside_terms) + len(self.missing_bigrams)

    @property
    def phrase_supported(self) -> bool:
        """Every content word and every adjacent pair of them is in this one passage."""
        return self.misses == 0


def rank_passages(claim: Analysis, chunk: ChunkEvidence, keep: int | None = None) -> list[PassageMatch]:
    """The chunk's passages (the `keep` best of them), best coverage first; among equals the
    shorter passage wins. Keeping only the few that are used bounds the memory of a check: every
    passage of a 20,000-character chunk, for each of hundreds of claims, took gigabytes."""
    novel = claim.term_set - chunk.analysis.term_set
    matches = (
        PassageMatch(
            passage,
            novel,
            claim.term_set - passage.terms - novel,
            claim.bigrams - passage.bigrams,
        )
        for passage in chunk.passages
    )
    if keep is None:
        return sorted(matches, key=_best_first)
    return heapq.nsmallest(keep, matches, key=_best_first)


def _best_first(match: PassageMatch) -> tuple[int, int, int]:
    return (match.misses, match.passage.last - match.passage.first, match.passage.first)


def mentions_anything(claim: Analysis, chunk: ChunkEvidence) -> bool:
    """Cheap pre-filter: a chunk sharing no word and no number with a claim cannot support it."""
    return bool(claim.term_set & chunk.analysis.term_set or claim.numbers & chunk.analysis.numbers)
