"""The sentence splitter: text cut along its Markdown lines, then into sentences.

A heading, a table row, a line of links, a code line, and markup (a fence, an admonition marker
such as ":::note", an HTML or JSX tag, an MDX import) is one unit of its own line. A list item, a
quote or a paragraph is a block: its soft-wrapped lines (a line break inside it) join, and it is
cut into sentences. Nothing joins across block boundaries, so a list item is never glued to the
lines around it, and a line ending with ":" ends its unit (it introduces what follows).

Every service cuts sentences here: Search's highlights, the answerer's quotes, the validator's
claims and the answer cap see the same sentences.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from services.common.text.display import HTML_TAG_RE, LINK_RE
from services.common.text.lists import word_list
from services.common.text.words import TOKEN_RE

# Periods after these do not end a sentence.
ABBREVIATIONS = word_list("abbreviations")
SENTENCE_END_RE = re.compile(
    r"""[.!?]+['"”’)\]*_`]*(?:\s*\[\d+(?:\s*[,;–-]\s*\d+)*\])*(?=\s|$)"""  # ". ", '." ', ".[1] ", "?** "
    # "century.First": passages glued without a space; not "asyncio.TaskGroup()" or "os.Path(",
    # a name in code
    r"""|(?<=[a-z]{2}[.!?])(?=[A-Z][a-z]+\b(?![(.]))"""
    r"""|\n+"""
)
# A question or exclamation closed by its quote marks, and nothing after.
_QUOTED_ASK_RE = re.compile(r"""[?!]+['"”’]+""")
LIST_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_SPACES_RE = re.compile(r"\s*")


class UnitKind:
    """What a unit of text is, by its Markdown: only paragraph, list item and quote are prose."""

    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    QUOTE = "quote"
    HEADING = "heading"
    TABLE_ROW = "table_row"
    LINK_LINE = "link_line"
    CODE = "code"
    MARKUP = "markup"


PROSE_KINDS = frozenset({UnitKind.PARAGRAPH, UnitKind.LIST_ITEM, UnitKind.QUOTE})
# Kinds whose line is one unit, never cut at a period inside it ("### 2. Permission issues").
_WHOLE_LINE_KINDS = frozenset(
    {UnitKind.HEADING, UnitKind.TABLE_ROW, UnitKind.LINK_LINE, UnitKind.CODE, UnitKind.MARKUP}
)


@dataclass(frozen=True)
class Unit:
    """A sentence or a line of text: offsets into it (end exclusive) and its Markdown kind."""

    start: int
    end: int
    kind: str


_FENCE_RE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_TABLE_RE = re.compile(r"[ \t]*\||[ \t]*:?-{3,}:?[ \t]*\|")
_MARKUP_RE = re.compile(
    r"[ \t]*(?::::|<!--|(?:import|export)[ \t].*(?:\bfrom[ \t]|=)|(?:-{3,}|\*{3,}|_{3,})[ \t]*$)"
)
_TAG_LINE_RE = re.compile(r"[ \t]*</?[A-Za-z][\w.:-]*(?:[ \t/>]|$)")
_QUOTE_RE = re.compile(r"[ \t]*>")
# A line opening with a bullet, a quote, a table row, a heading, a numbered item, bold text (a
# "**Label**:" line), or a citation marker (models list cited items as "[1] ...") starts a block
# of its own: it is not a soft wrap of the line above.
_BLOCK_START_RE = re.compile(r"\s*(?:[-*+>|#]|\d+[.)]\s|\[\d+\]\s)")
# Words beside the links of a line that still make it a line of links ("- [Docs](url) - official").
_LINK_LINE_MAX_WORDS = 2


def line_kind(line: str) -> str:
    """The Markdown kind of one line outside code (a fence line is markup, and so is a line of
    HTML or JSX tags with fewer than three words of text)."""
    if _FENCE_RE.match(line) or _MARKUP_RE.match(line):
        return UnitKind.MARKUP
    if _TAG_LINE_RE.match(line) and len(TOKEN_RE.findall(HTML_TAG_RE.sub(" ", line))) < 3:
        return UnitKind.MARKUP
    if _HEADING_RE.match(line):
        return UnitKind.HEADING
    if _TABLE_RE.match(line):
        return UnitKind.TABLE_ROW
    if _QUOTE_RE.match(line):
        return UnitKind.QUOTE
    if _is_link_line(line):
        return UnitKind.LINK_LINE
    if LIST_BULLET_RE.match(line):
        return UnitKind.LIST_ITEM
    return UnitKind.PARAGRAPH


def _is_link_line(line: str) -> bool:
    """A line that is links and little else: "[ROS 2 Tutorials](https://...)"."""
    if not LINK_RE.search(line):
        return False
    rest = LINK_RE.sub(" ", LIST_BULLET_RE.sub("", line, count=1))
    return len(TOKEN_RE.findall(rest)) <= _LINK_LINE_MAX_WORDS


def line_kinds(lines: list[str]) -> list[str]:
    """The kind of each line; lines inside a fenced code block (``` or ~~~, closed by a fence of
    the same character at least as long, or left open to the end) are code."""
    kinds = []
    fence = ""
    for line in lines:
        opening = _FENCE_RE.match(line)
        if fence:
            closes = opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence)
            kinds.append(UnitKind.MARKUP if closes else UnitKind.CODE)
            if closes:
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
        kinds.append(line_kind(line))
    return kinds


def _soft_wrap(previous: str, previous_kind: str, line: str, kind: str) -> bool:
    """Whether `line` continues the block of `previous` (a line break inside a paragraph)."""
    if not previous.strip() or not line.strip() or kind != UnitKind.PARAGRAPH:
        return False
    if previous_kind not in PROSE_KINDS or previous.rstrip().endswith(":") or _BLOCK_START_RE.match(line):
        return False
    # A list item continues on indented lines only; an unindented line after it is a new block.
    return previous_kind != UnitKind.LIST_ITEM or line[:1] in " \t"


def unwrap_soft_breaks(text: str) -> str:
    """The text with Markdown soft wraps (a line break inside a paragraph) turned into spaces.

    Same length as the input, so offsets found in the result hold in the original.
    """
    return _unwrapped(text)[0]


def _unwrapped(text: str) -> tuple[str, list[tuple[int, str]]]:
    """The unwrapped text, and for each line its start offset and the kind of its block (a line
    joined to the one above takes that line's block kind)."""
    lines = text.split("\n")
    kinds = line_kinds(lines)
    joined = [lines[0]]
    starts = [(0, kinds[0])]
    offset = len(lines[0]) + 1
    for i in range(1, len(lines)):
        soft = _soft_wrap(lines[i - 1], starts[-1][1], lines[i], kinds[i])
        joined.append((" " if soft else "\n") + lines[i])
        starts.append((offset, starts[-1][1] if soft else kinds[i]))
        offset += len(lines[i]) + 1
    return "".join(joined), starts


def sentence_units(text: str) -> list[Unit]:
    """Each sentence or line of the text with its Markdown kind (see UnitKind), in order; spans
    are trimmed of surrounding whitespace and list bullets. A soft wrap inside a paragraph or a
    list item does not end a sentence; a line of its own kind (heading, table row, links, code,
    markup) is one unit whatever periods it holds."""
    unwrapped, line_starts = _unwrapped(text)
    starts = [start for start, _ in line_starts]
    whole_lines = [kind in _WHOLE_LINE_KINDS for _, kind in line_starts]
    spans = []
    start = 0
    for match in SENTENCE_END_RE.finditer(unwrapped):
        if match.group().strip():
            if whole_lines[bisect_right(starts, match.start()) - 1]:
                continue
            if _ends_with_abbreviation(text, match.start()) or _quoted_question_goes_on(unwrapped, match):
                continue
        spans.append((start, match.end()))
        start = match.end()
    spans.append((start, len(text)))
    units = []
    for begin, end in spans:
        piece = text[begin:end]
        bullet = LIST_BULLET_RE.match(piece)
        lead = bullet.end() if bullet else len(piece) - len(piece.lstrip())
        tail = len(piece.rstrip())
        if tail > lead:
            kind = line_starts[bisect_right(starts, begin + lead) - 1][1]
            units.append(Unit(begin + lead, begin + tail, kind))
    return units


def runs(units: list[Unit], kind: str) -> Iterator[tuple[int, int]]:
    """Each run of consecutive units of one kind (a list's items, a table's rows), as the
    indexes [first, end) of its units."""
    index = 0
    while index < len(units):
        if units[index].kind != kind:
            index += 1
            continue
        end = index
        while end < len(units) and units[end].kind == kind:
            end += 1
        yield index, end
        index = end


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line, trimmed of surrounding whitespace and list bullets
    (see sentence_units, which also says what kind of text each one is)."""
    return [(unit.start, unit.end) for unit in sentence_units(text)]


def sentence_ends(text: str) -> list[int]:
    """Where each sentence or line of the text ends (end exclusive, after its closing quotes and
    citation markers): the places where a text can be cut short without cutting a sentence."""
    return [unit.end for unit in sentence_units(text)]


def line_sentences(line: str) -> list[str]:
    """One line of a prose block cut into its sentences, for packing pieces into chunks.

    Unlike sentence_units, nothing is trimmed (no bullet, no indentation) and a line is cut only
    where spaces follow a sentence end, those spaces alone dropped: the chunker rebuilds its text
    by joining the pieces with one space, so every other character must stay in a piece.
    """
    pieces = []
    start = 0
    for end in sentence_ends(line)[:-1]:
        resume = _SPACES_RE.match(line, end).end()
        if resume > end:  # "century.First": glued sentences stay one piece
            pieces.append(line[start:end])
            start = resume
    pieces.append(line[start:])
    return pieces


def _quoted_question_goes_on(text: str, end: re.Match[str]) -> bool:
    """Whether a quoted question or exclamation is part of a sentence that goes on in lower case:
    '"Can you help with my assignment?" passes the keyword filter' is one sentence."""
    if not _QUOTED_ASK_RE.fullmatch(end.group()):
        return False
    rest = text[end.end() : end.end() + 40].lstrip()
    return rest[:1].islower()


def _ends_with_abbreviation(text: str, period_index: int) -> bool:
    """True when the period at period_index closes an abbreviation or an initial, not a sentence."""
    if text[period_index] != ".":
        return False
    start, end = _word_before(text, period_index)
    if start == end:
        return False
    token = text[start:end].lower()
    if token.isdecimal() and _opens_line(text, start):
        return True  # "1. " opening a numbered list item
    if token in ABBREVIATIONS or (len(token) == 1 and token.isalpha()):
        return True
    return bool(re.fullmatch(r"(?:[a-z]\.)+[a-z]", token))  # "u.s", "e.g", "a.m"


def _word_before(text: str, index: int) -> tuple[int, int]:
    """(start, end) of the run of word characters and periods that ends at index, or just before
    a line break there. Found by stepping back, not by searching all of text[:index]: a 20 kB
    answer of short sentences made that search quadratic (seconds per answer)."""
    end = index - 1 if index and text[index - 1] == "\n" else index
    start = end
    while start and (text[start - 1].isalnum() or text[start - 1] in "._"):
        start -= 1
    return start, end


def _opens_line(text: str, index: int) -> bool:
    """Only spaces or tabs stand between index and the start of its line."""
    while index and text[index - 1] in " \t":
        index -= 1
    return not index or text[index - 1] == "\n"
