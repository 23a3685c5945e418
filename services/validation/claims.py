"""Splitting an answer into atomic claims, each with its citation markers and its place in the answer.

A claim is a sentence, or one clause of it when "and" or ";" joins two statements that each have
a verb of their own ("He was born in Paris and died in London"). A list of names joined by "and"
stays one claim. Offsets always point into the original answer, so unsupported spans can be
highlighted there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.validation.text import sentence_spans, tokens

CITATION_GROUP_RE = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
TRAILING_CITATIONS_RE = re.compile(r"(?:\s*\[[\d\s,;]+\])+$")
CLAUSE_JOIN_RE = re.compile(r"\s*;\s+|,?\s+and\s+")
# Finite verbs and auxiliaries: a clause after "and" that has one early asserts a fact of its own.
# fmt: off
VERB_WORDS = frozenset(
    {
        "are", "be", "became", "become", "becomes", "been", "began", "begins", "born", "built", "can",
        "contains", "could", "did", "died", "dies", "do", "does", "finds", "found", "gave", "gets",
        "gives", "goes", "got", "grew", "had", "has", "have", "held", "holds", "include", "includes",
        "is", "kept", "knew", "known", "leads", "led", "left", "lived", "lives", "loses", "lost",
        "made", "makes", "met", "owned", "owns", "plays", "ran", "remains", "said", "saw", "says",
        "sees", "served", "serves", "showed", "shows", "sold", "stayed", "takes", "tells", "told",
        "took", "used", "uses", "was", "went", "were", "will", "won", "would", "writes", "wrote"
    }
)
SUBJECT_WORDS = frozenset(
    {"he", "she", "it", "they", "we", "i", "you", "this", "these", "those", "there", "the", "a", "an", "his", "her", "its", "their"}
)
# fmt: on
WORDS_BEFORE_CLAUSE_VERB = 5


@dataclass(frozen=True)
class CitationMarker:
    """One cited number as written: "[1, 3]" yields two markers sharing a span."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Claim:
    """One checkable statement: its text without markers and its span in the answer (end exclusive)."""

    text: str
    start: int
    end: int
    sentence: int
    markers: tuple[CitationMarker, ...] = ()

    @property
    def citations(self) -> list[int]:
        return [marker.number for marker in self.markers]


def find_citations(answer: str) -> list[CitationMarker]:
    """Every [n], [n][m] and [n, m] marker in the answer, in reading order."""
    return [
        CitationMarker(int(number), group.start(), group.end())
        for group in CITATION_GROUP_RE.finditer(answer)
        for number in re.findall(r"\d+", group.group(1))
    ]


def strip_citations(text: str) -> str:
    """The text without its markers, whitespace collapsed ("in 1846 [1]." -> "in 1846.")."""
    without = CITATION_GROUP_RE.sub("", text)
    without = re.sub(r"\s+([.,;:!?])", r"\1", without)
    return " ".join(without.split())


def split_claims(answer: str, min_clause_words: int = 3) -> list[Claim]:
    """Claims in reading order; questions are left out (they assert nothing)."""
    markers = find_citations(answer)
    claims = []
    for sentence_index, (sentence_start, sentence_end) in enumerate(sentence_spans(answer)):
        sentence = strip_citations(answer[sentence_start:sentence_end])
        if not tokens(sentence) or sentence.endswith("?"):
            continue
        pieces = _clause_spans(answer, sentence_start, sentence_end, min_clause_words)
        trailing = _trailing_markers(answer, markers, sentence_start, sentence_end)
        for start, end in pieces:
            own = tuple(m for m in markers if start <= m.start < end)
            text = strip_citations(answer[start:end])
            claims.append(Claim(text, start, end, sentence_index, own or trailing))
    return claims


def _trailing_markers(
    answer: str, markers: list[CitationMarker], start: int, end: int
) -> tuple[CitationMarker, ...]:
    """Markers closing a sentence ("... in 1846 [1][2].") vouch for every clause of it."""
    body = answer[start:end].rstrip(" .!?\"”')")
    tail = TRAILING_CITATIONS_RE.search(body)
    if not tail:
        return ()
    return tuple(m for m in markers if start + tail.start() <= m.start < end)


def _clause_spans(answer: str, start: int, end: int, min_words: int) -> list[tuple[int, int]]:
    """Cuts a sentence at ";" or "and" where both sides are statements of their own."""
    sentence = answer[start:end]
    pieces = []
    piece_start = 0
    for join in CLAUSE_JOIN_RE.finditer(sentence):
        left = strip_citations(sentence[piece_start : join.start()]).split()
        right = strip_citations(sentence[join.end() :]).split()
        if len(left) < min_words or len(right) < min_words:
            continue
        if ";" in join.group() or (_has_verb(left) and _starts_statement(right)):
            pieces.append((piece_start, join.start()))
            piece_start = join.end()
    pieces.append((piece_start, len(sentence)))
    return [(start + a, start + b) for a, b in pieces]


def _starts_statement(words: list[str]) -> bool:
    """ "he died in 1900", "the band split up", "died in 1900"; not "London" or "his brother"."""
    if _has_verb(words[:1]):
        return True
    starts_subject = _bare(words[0]) in SUBJECT_WORDS or words[0][:1].isupper()
    return starts_subject and _has_verb(words[1:WORDS_BEFORE_CLAUSE_VERB])


def _bare(word: str) -> str:
    return word.lower().strip(".,;:!?\"'()")


def _has_verb(words: list[str]) -> bool:
    for word in words:
        lowered = _bare(word)
        if lowered in VERB_WORDS or (len(lowered) >= 5 and lowered.endswith("ed")):
            return True
    return False
