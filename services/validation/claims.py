"""Splitting an answer into atomic claims, each with its citation markers and its place in the answer.

A claim is a sentence, or one clause of it when "and", ";" or a contrasting ", while" joins two
statements that each have a verb of their own ("He was born in Paris and died in London"), or a
lead-in ends with a colon before what it announces. A list of names joined by "and"
stays one claim, and so does a longer answer's sentence joined by "and" unless it cites several
chunks (services.validation.grounding.split_answer). Offsets always point into the original answer, so unsupported spans can be
highlighted there.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from dataclasses import dataclass

from services.common.text.lists import word_list
from services.common.text.units import sentence_spans
from services.common.text.words import names_only, tokens
from services.validation.refusals import is_refusal

CITATION_GROUP_RE = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
# The run of "[...]" groups closing a text, matched on the text reversed: searched for from the
# left, every group of a long run was tried as the start of the run (quadratic).
REVERSED_TRAILING_CITATIONS_RE = re.compile(r"(?:\][\d\s,;]+\[\s*)+")
_MARKER = r"\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]"
# A run of markers opening a line ("[2][4] ", "[1, 3] ").
_LEADING_CITATIONS_RE = re.compile(rf"[ \t]*(?:{_MARKER}[ \t]*)+")
# Markers standing alone after a sentence's end ("[5]:").
_ONLY_MARKERS_RE = re.compile(rf"(?:\s*{_MARKER})+\s*[:.;]?\s*")
# A stop, its citation markers, and a new sentence ("... before B before A. [1] Inheritance ...").
_CITED_STOP_RE = re.compile(rf"[.!?][\"'”’)]*(?:[ \t]*{_MARKER})+[ \t]+(?=[\"“(]?[A-Z0-9])")
PUNCTUATION = frozenset(".,;:!?")
# "; ", " and ", and the contrast of a comparison (", while", ", whereas": "the revolute rotates
# with limits, while the continuous rotates freely" says one thing of each).
# And a lead-in's colon before what it announces ("... requires several components: Operating
# System: Linux-based ..."): each is a sentence of its own in the book, the item read under its label.
CLAUSE_JOIN_RE = re.compile(
    r"(?<!\s)\s*;\s+|(?:,|(?<![\s,]))\s+and\s+|,\s+(?:while|whereas)\s+|(?<=\w):\s+(?=[A-Z])"
)  # space runs from their start
# A closing quotation mark, then spaces and a capital, or a quotation opening on one ('... a
# "convicted killer" "Justice has been served," says ...'): where a run-on line may start anew.
QUOTE_RUN_ON_RE = re.compile(r'["”](?=\s+["“]?[A-Z])\s+')
# How far back a nickname's opening quotation mark is looked for.
MAX_QUOTE_CHARS = 60
# A first name or title a nickname may follow ("Emrich", "Jean-Claude", "Dr."): not a label's
# colon ('Father: "I know ..."') nor a possessive ('TV\'s "Partridge Family"'), which end a word
# no name continues past.
_NAME_WORD_RE = re.compile(r"[A-Z][\w.-]*")
# Finite verbs and auxiliaries: a clause after "and" that has one early asserts a fact of its own.
VERB_WORDS = word_list("clause_verbs")
SUBJECT_WORDS = word_list("clause_subjects")
WORDS_BEFORE_CLAUSE_VERB = 5
# Words before a colon that make a lead-in rather than a label ("**Operating System**: ...").
LEAD_IN_WORDS = 4
# The largest citation number kept as written. No context has this many chunks, so a marker past
# it points nowhere either way; reading it as this number keeps it an int32 on the wire and
# spares int() a number of thousands of digits.
MAX_CITATION_NUMBER = 2**31 - 1


@dataclass(frozen=True)
class CitationMarker:
    """One cited number as written (up to MAX_CITATION_NUMBER): "[1, 3]" yields two markers
    sharing a span."""

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


# "According to the book, ...", "Based on the provided passages, ...", "The text says that ...":
# where the answer comes from, which is what a citation says; the words state no fact of the book.
_SOURCE_FRAME_RE = re.compile(
    r"^\W*(?:"
    r"(?:according\s+to|based\s+on|as\s+(?:stated|described|explained|shown|noted)\s+in|from|in|per)\s+"
    r"(?:the|this|these)\s+(?:(?:provided|given|retrieved|above|cited)\s+)?"
    r"(?:book|text|passages?|context|sources?|documentation|docs|excerpts?)(?:\s*" + _MARKER + r")*\s*,\s*"
    r"|(?:the|this)\s+(?:book|text|passages?|context|documentation)(?:\s*" + _MARKER + r")*\s+"
    r"(?:says|states|explains|notes|describes|shows)(?:\s+that)?\s+"
    r")",
    re.IGNORECASE,
)


def without_source_frame(claim: str) -> str:
    """The claim less an opening that only names its source ("According to the book, ...")."""
    return _SOURCE_FRAME_RE.sub("", claim, count=1)


def find_citations(answer: str) -> list[CitationMarker]:
    """Every [n], [n][m] and [n, m] marker in the answer, in reading order."""
    return [
        CitationMarker(_citation_number(digits), group.start(), group.end())
        for group in CITATION_GROUP_RE.finditer(answer)
        for digits in re.findall(r"\d+", group.group(1))
    ]


def _citation_number(digits: str) -> int:
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(MAX_CITATION_NUMBER)):
        return MAX_CITATION_NUMBER
    return min(int(significant), MAX_CITATION_NUMBER)


def strip_citations(text: str) -> str:
    """The text without its markers, whitespace collapsed ("in 1846 [1]." -> "in 1846.")."""
    return " ".join(word for _, word in _words(text))


def _words(text: str) -> list[tuple[int, str]]:
    """The words of the text without its markers, each with the offset of its first character;
    a punctuation mark set off by spaces joins the word before it ("1846 [1] ." -> "1846.")."""
    kept = []
    previous = 0
    for marker in CITATION_GROUP_RE.finditer(text):
        kept.append(range(previous, marker.start()))
        previous = marker.end()
    kept.append(range(previous, len(text)))
    words: list[tuple[int, list[str]]] = []
    spaced = True
    for offset in itertools.chain.from_iterable(kept):
        char = text[offset]
        if char.isspace():
            spaced = True
        elif spaced and not (words and char in PUNCTUATION):
            words.append((offset, [char]))
            spaced = False
        else:
            words[-1][1].append(char)
            spaced = False
    return [(offset, "".join(chars)) for offset, chars in words]


def split_claims(answer: str, min_clause_words: int = 3, and_clauses: bool = True) -> list[Claim]:
    """Claims in reading order; questions are left out (they assert nothing).

    and_clauses: cut a sentence at "and" between two statements; without, only in a sentence that
    cites several chunks, whose clauses may rest on different ones
    (services.validation.grounding.split_answer says when)."""
    markers = find_citations(answer)
    marker_starts = [marker.start for marker in markers]
    claims = []
    spans = _lines_led_by_markers(
        answer,
        [
            piece
            for span in _markers_kept(answer, sentence_spans(answer))
            for cut in _cut_at_cited_stops(answer, *span)
            for piece in _run_on_spans(answer, *cut)
        ],
    )
    line_markers: tuple[CitationMarker, ...] = ()
    marked_line = -1
    for sentence_index, (sentence_start, sentence_end) in enumerate(spans):
        line = answer.rfind("\n", 0, sentence_start) + 1
        sentence = strip_citations(answer[sentence_start:sentence_end])
        if not tokens(sentence) or sentence.endswith("?"):
            continue
        cited = {m.number for m in _markers_within(markers, marker_starts, sentence_start, sentence_end)}
        pieces = _clause_spans(
            answer, sentence_start, sentence_end, min_clause_words, and_clauses or len(cited) > 1
        )
        trailing = _trailing_markers(answer, markers, marker_starts, sentence_start, sentence_end)
        leading = _leading_markers(answer, markers, marker_starts, sentence_start, sentence_end)
        if leading:
            line_markers, marked_line = leading, line
        inherited = line_markers if line == marked_line else ()
        for start, end in pieces:
            own = _markers_within(markers, marker_starts, start, end)
            text = strip_citations(answer[start:end])
            claims.append(Claim(text, start, end, sentence_index, own or trailing or leading or inherited))
    return claims


def _markers_kept(answer: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sentences, markers left alone after a sentence's end joined to it: a label quoting a
    question ('"Should I enable hooks right now?" [5]:') ends at its closing quote, and its marker
    would otherwise cite nothing."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if kept and _ONLY_MARKERS_RE.fullmatch(answer, start, end):
            kept[-1] = (kept[-1][0], end)
        else:
            kept.append((start, end))
    return kept


def _cut_at_cited_stops(answer: str, start: int, end: int) -> list[tuple[int, int]]:
    """A sentence cut after a stop its markers follow: the sentence splitter reads the period of
    "Always check D before B before A. [1] Inheritance order preserved ..." as an initial's, but a
    writer cites a sentence at its end, so the marker ends it (three list items copied on one
    line were read as one claim, and no passage states three items in one sentence)."""
    cuts = [match.end() for match in _CITED_STOP_RE.finditer(answer, start, end)]
    bounds = [start, *cuts, end]
    return [(a, len(answer[:b].rstrip()) if b < end else b) for a, b in itertools.pairwise(bounds) if a < b]


def _lines_led_by_markers(answer: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The sentences, a line's opening markers moved from the sentence before to the one after:
    small models copy the sources' layout ("[1] Streaming sends data ...\n\n[3] SSE is ..."), and
    a marker opening a line cites what follows it on the line, not the sentence above."""
    moved = list(spans)
    for index in range(len(moved) - 1):
        start, end = moved[index]
        line = answer.rfind("\n", start, end) + 1
        opening = _LEADING_CITATIONS_RE.fullmatch(answer, line, end) if line > start else None
        if opening and answer[start : line - 1].strip():
            marker = line + len(answer[line:end]) - len(answer[line:end].lstrip(" \t"))
            moved[index] = (start, start + len(answer[start:line].rstrip()))
            moved[index + 1] = (marker, moved[index + 1][1])
    return moved


def _leading_markers(
    answer: str, markers: list[CitationMarker], marker_starts: list[int], start: int, end: int
) -> tuple[CitationMarker, ...]:
    """Markers opening a sentence at the start of a line ("[1] ROS 2 uses DDS.") vouch for every
    clause of it (and split_claims lends them to the sentences after it on the line that cite
    nothing themselves)."""
    indent = start
    while indent > 0 and answer[indent - 1] in " \t":
        indent -= 1
    opening = _LEADING_CITATIONS_RE.match(answer, start, end)
    if (indent > 0 and answer[indent - 1] != "\n") or not opening:
        return ()
    return _markers_within(markers, marker_starts, start, opening.end())


def _run_on_spans(answer: str, start: int, end: int) -> list[tuple[int, int]]:
    """A sentence cut where a quotation closes one statement and the next begins with no stop
    between them, as news highlights run their lines together ('... was "deeply flawed" Danny
    Cevallos says ...'). Only when the part before has a verb and the part after starts a
    statement: 'The "Publisher" Node sends ...' is one sentence. The words are found once, as
    in _clause_spans, so that a sentence of many quotations is not read again at each."""
    sentence = answer[start:end]
    words = _words(sentence)
    word_starts = [offset for offset, _ in words]
    verbs_before = list(itertools.accumulate((_has_verb([word]) for _, word in words), initial=0))
    pieces = []
    piece_start = quotes_seen = counted_to = 0
    for boundary in QUOTE_RUN_ON_RE.finditer(sentence):
        quotes_seen += sentence.count('"', counted_to, boundary.end())
        counted_to = boundary.end()
        if (sentence[boundary.start()] == '"' and quotes_seen % 2) or _nicknames(sentence, boundary.start()):
            continue  # an opening quote, or 'Emrich "Imi" Lichtenfeld'
        first, after = (bisect_left(word_starts, i) for i in (piece_start, boundary.end()))
        right = [word for _, word in words[after : after + WORDS_BEFORE_CLAUSE_VERB]]
        # A highlight's subject may be long ("The 10 death row inmates being held have had ..."):
        # after a capital, a verb anywhere in the rest of the sentence makes it a statement.
        states_after = _starts_statement(right) or (
            _capitalised(right[0]) and verbs_before[len(words)] > verbs_before[after]
        )
        if verbs_before[after] > verbs_before[first] and states_after:
            pieces.append((piece_start, boundary.start() + 1))
            piece_start = boundary.end()
    pieces.append((piece_start, len(sentence)))
    return [(start + a, start + b) for a, b in pieces]


def _nicknames(sentence: str, closing: int) -> bool:
    """Whether the short quotation closing at `closing` follows a capitalised word, as a nickname
    or a name's title does ('Emrich "Imi" Lichtenfeld'). Only the last MAX_QUOTE_CHARS are read."""
    window = sentence[max(0, closing - MAX_QUOTE_CHARS) : closing]
    opening = max(window.rfind('"'), window.rfind("“"))
    before = window[:opening].split()[-1:] if opening > 0 else []
    return bool(before) and _NAME_WORD_RE.fullmatch(before[0]) is not None


def _trailing_markers(
    answer: str, markers: list[CitationMarker], marker_starts: list[int], start: int, end: int
) -> tuple[CitationMarker, ...]:
    """Markers closing a sentence ("... in 1846 [1][2].") vouch for every clause of it."""
    body = answer[start:end].rstrip(" .!?\"”')")
    tail = REVERSED_TRAILING_CITATIONS_RE.match(body[::-1])
    if not tail:
        return ()
    return _markers_within(markers, marker_starts, start + len(body) - tail.end(), end)


def _markers_within(
    markers: list[CitationMarker], marker_starts: list[int], start: int, end: int
) -> tuple[CitationMarker, ...]:
    """The markers starting in [start, end), found by bisection: an answer may hold hundreds."""
    return tuple(markers[bisect_left(marker_starts, start) : bisect_left(marker_starts, end)])


def _clause_spans(
    answer: str, start: int, end: int, min_words: int, and_clauses: bool = True
) -> list[tuple[int, int]]:
    """Cuts a sentence at ";", a contrasting ", while", or "and" where both sides are statements
    of their own ("and" only with `and_clauses`).

    The sentence's words are found once, and each side of a join counts the words that start in
    it: cutting them out again for every join was quadratic ("a and a and ..." took seconds). A
    ";" inside a marker ("[1; 2]") cuts nothing.
    """
    sentence = answer[start:end]
    words = _words(sentence)
    word_starts = [offset for offset, _ in words]
    verbs_before = list(itertools.accumulate((_has_verb([word]) for _, word in words), initial=0))
    in_markers = {i for m in CITATION_GROUP_RE.finditer(sentence) for i in range(m.start(), m.end())}
    pieces = []
    piece_start = 0
    for join in CLAUSE_JOIN_RE.finditer(sentence):
        first, last, after = (bisect_left(word_starts, i) for i in (piece_start, join.start(), join.end()))
        if join.start() in in_markers or last - first < min_words or len(words) - after < min_words:
            continue
        right = [word for _, word in words[after : after + WORDS_BEFORE_CLAUSE_VERB]]
        states = verbs_before[last] > verbs_before[first]
        if (
            ";" in join.group()
            or _contrasts(join.group())
            or (
                join.group().startswith(":")
                and _leads_in(sentence[piece_start : join.start()], last - first, states)
            )
            or (states and _starts_statement(right) and (and_clauses or join.group().strip(" ,") != "and"))
        ):
            pieces.append((piece_start, join.start()))
            piece_start = join.end()
    pieces.append((piece_start, len(sentence)))
    return [(start + a, start + b) for a, b in pieces]


def _leads_in(before: str, words: int, states: bool) -> bool:
    """Whether the `words` words before a colon announce what follows: a statement or a clause of
    LEAD_IN_WORDS, not a label ("**Operating System**:") nor the names of who speaks ("Sam Erman
    and Nathan Perl-Rosenthal: ..."); a decline naming the sections nearby ("Nearby, the book
    covers: ...") stays whole, as it claims nothing."""
    return (states or words >= LEAD_IN_WORDS) and not is_refusal(before) and not names_only(before)


def _contrasts(join: str) -> bool:
    """ ", while" and ", whereas" set a statement against another: each side is one of its own."""
    return join.rstrip().endswith(("while", "whereas"))


def _starts_statement(words: list[str]) -> bool:
    """ "he died in 1900", "the band split up", "died in 1900"; not "London" or "his brother"."""
    if _has_verb(words[:1]):
        return True
    starts_subject = _bare(words[0]) in SUBJECT_WORDS or _capitalised(words[0])
    return starts_subject and _has_verb(words[1:WORDS_BEFORE_CLAUSE_VERB])


def _capitalised(word: str) -> bool:
    """ "London", '"Justice': a capital, after any opening quotation mark."""
    return word.lstrip('"“')[:1].isupper()


def _bare(word: str) -> str:
    return word.lower().strip(".,;:!?\"'()")


def _has_verb(words: list[str]) -> bool:
    for word in words:
        lowered = _bare(word)
        if lowered in VERB_WORDS or (len(lowered) >= 5 and lowered.endswith("ed")):
            return True
    return False
