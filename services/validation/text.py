"""Text analysis shared by claim splitting and support scoring.

Plain Python over regular expressions: it runs in microseconds, so the checker can look at every
sentence of every chunk lexically and keep the embedding model for what needs it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache

from services.common.markdown_display import HTML_TAG_RE, LINK_RE, show_links

# fmt: off
STOPWORDS = frozenset(
    {
        "a", "about", "above", "actually", "after", "again", "against", "all", "already", "also",
        "although", "am", "an", "and", "another", "any", "are", "aren", "around", "as", "at", "away",
        "be", "became", "because", "become", "becomes", "been", "before", "began", "being", "below",
        "between", "both", "but", "by", "can", "could", "currently", "d", "did", "do", "does", "doing",
        "down", "during", "each", "either", "else", "even", "ever", "every", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
        "himself", "his", "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself",
        "just", "let", "like", "ll", "m", "may", "me", "might", "more", "most", "much", "must", "my",
        "myself", "neither", "nor", "now", "o", "of", "off", "often", "on", "once", "one", "ones",
        "only", "or", "other", "others", "our", "ours", "ourselves", "out", "over", "own", "per",
        "quite", "rather", "re", "s", "same", "several", "shall", "she", "should", "since", "so",
        "some", "still", "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves",
        "then", "there", "these", "they", "this", "those", "through", "thus", "to", "too", "under",
        "until", "up", "upon", "us", "ve", "very", "via", "was", "we", "were", "what", "whatever",
        "when", "where", "whether", "which", "while", "whilst", "who", "whom", "whose", "why", "will",
        "with", "within", "would", "y", "yes", "yet", "you", "your", "yours", "yourself"
    }
)
# Words that carry no checkable fact: reporting verbs and filler that summaries add freely
# ("police say", "it includes"). On the HaluEval summarization dev split: +2 points.
LIGHT_WORDS = frozenset(
    {
        "according", "came", "come", "comes", "get", "gets", "go", "goes", "got", "include", "included",
        "includes", "including", "lot", "made", "make", "makes", "many", "new", "people", "report",
        "reported", "reporting", "reports", "said", "say", "saying", "says", "take", "taken", "takes",
        "tell", "tells", "thing", "things", "time", "times", "told", "took", "way", "well", "went",
        "year", "years"
    }
)
NEGATIONS = frozenset(
    {
        "cannot", "n't", "neither", "never", "no", "nobody", "none", "nor", "not", "nothing", "nowhere",
        "without"
    }
)
# Words that spell a number; "one" and "first" are left out: mostly pronoun and adverb.
NUMBER_WORDS = {
    "two": "2", "second": "2", "twice": "2", "three": "3", "third": "3", "four": "4", "fourth": "4",
    "five": "5", "fifth": "5", "six": "6", "sixth": "6", "seven": "7", "seventh": "7", "eight": "8",
    "eighth": "8", "nine": "9", "ninth": "9", "ten": "10", "tenth": "10", "eleven": "11",
    "twelve": "12", "dozen": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
    "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000",
    "billion": "1000000000",
}
# Periods after these do not end a sentence.
ABBREVIATIONS = frozenset(
    {
        "a.m", "adm", "al", "approx", "apr", "aug", "capt", "cf", "co", "col", "corp", "cpl", "dec",
        "dept", "dr", "e.g", "est", "etc", "feb", "fig", "ft", "gen", "gov", "hon", "i.e", "inc", "jan",
        "jr", "jul", "jun", "lt", "ltd", "maj", "mar", "mr", "mrs", "ms", "mt", "nov", "oct", "p.m",
        "pp", "prof", "rep", "rev", "sen", "sep", "sept", "sgt", "sr", "st", "u.k", "u.n", "u.s", "vol",
        "vs"
    }
)
# fmt: on

TOKEN_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
NUMBER_RE = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")
ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
SENTENCE_END_RE = re.compile(
    r"""[.!?]+['"”’)\]*_`]*(?:\s*\[\d+(?:\s*[,;–-]\s*\d+)*\])*(?=\s|$)"""  # ". ", '." ', ".[1] ", "?** "
    r"""|(?<=[a-z]{2}[.!?])(?=[A-Z][a-z])"""  # "century.First": passages glued without a space
    r"""|\n+"""
)
LIST_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, possessive 's dropped ("Arthur's" -> "arthur"); of a Markdown link
    only the words a reader sees ("[physics simulation](../physics-simulation/index.md)" states
    nothing about "index" or "md")."""
    return [_strip_possessive(m.group().lower()) for m in TOKEN_RE.finditer(show_links(text))]


def _strip_possessive(token: str) -> str:
    token = token.replace("’", "'")
    return token[:-2] if token.endswith("'s") else token


def is_content_word(word: str) -> bool:
    """Words that state something checkable; numbers and negations have hard checks of their own."""
    return not (
        word in STOPWORDS
        or word in LIGHT_WORDS
        or word in NEGATIONS
        or word in NUMBER_WORDS
        or word.isdigit()
    )


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A light suffix stripper: plurals, -ed, -ing and -ly fold together, nothing cleverer.

    Claim and context go through the same function, so it only has to be consistent, not correct:
    "based", "bases" and "base" all become "bas". Cached: an answer and its passages repeat their
    words, and a book's vocabulary is a few tens of thousands of them.
    """
    if len(word) <= 2 or not word.isalpha():
        return word
    if word.endswith("ied"):
        word = word[:-2]  # "died" -> "di", "studied" -> "studi"
    elif word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed", "ly"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and re.search("[aeiouy]", base):
            if suffix != "ly" and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # "stopped" -> "stop"
            word = base
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("ie") or (word.endswith("e") and len(word) > 3):
        word = word[:-1]
    return word


def normalise_number(raw: str) -> str:
    """'2,466' -> '2466', '6.50' -> '6.5', '32nd' -> '32', 'third' -> '3'."""
    lowered = raw.lower().replace(",", "")
    if lowered in NUMBER_WORDS:
        return NUMBER_WORDS[lowered]
    ordinal = ORDINAL_RE.match(lowered)
    if ordinal:
        return ordinal.group(1)
    if "." in lowered:
        lowered = lowered.rstrip("0").rstrip(".")
    return lowered


@dataclass(frozen=True)
class Analysis:
    """What support scoring and the hard checks compare about one piece of text (computed lazily)."""

    text: str

    @cached_property
    def words(self) -> list[str]:
        return tokens(self.text)

    @cached_property
    def word_set(self) -> frozenset[str]:
        """Every token, raw and stemmed, for looking up the names a claim mentions."""
        return frozenset(self.words) | frozenset(stem(w) for w in self.words)

    @cached_property
    def terms(self) -> list[str]:
        """Stemmed content words in reading order."""
        return [stem(w) for w in self.words if is_content_word(w)]

    @cached_property
    def term_set(self) -> frozenset[str]:
        return frozenset(self.terms)

    @cached_property
    def bigrams(self) -> frozenset[tuple[str, str]]:
        """Adjacent content words ("grand slam", "head office"): they catch recombined facts."""
        return frozenset(zip(self.terms, self.terms[1:], strict=False))

    def ordered_pairs(self, max_gap: int) -> frozenset[tuple[str, str]]:
        """Content words in reading order with at most max_gap others between them: a passage
        states "the harbour was completed" even when it says "the harbour of Dunmore East was
        completed", but not when the words come in the other order."""
        terms = self.terms
        return frozenset(
            (terms[i], terms[j])
            for i in range(len(terms))
            for j in range(i + 1, min(len(terms), i + max_gap + 2))
        )

    @cached_property
    def numbers(self) -> frozenset[str]:
        found = {normalise_number(m.group()) for m in NUMBER_RE.finditer(self.text)}
        found |= {NUMBER_WORDS[w] for w in self.words if w in NUMBER_WORDS}
        return frozenset(found)

    @cached_property
    def negations(self) -> frozenset[str]:
        """Negation words, except an answer's leading "No," (that answers a question)."""
        words = (
            self.words[1:]
            if self.words[:1] == ["no"] and re.match(r"\W*no\b\W*[,.!]", self.text, re.I)
            else self.words
        )
        found = {w for w in words if w in NEGATIONS}
        if re.search(r"n['’]t\b", self.text, re.IGNORECASE):
            found.add("n't")
        return frozenset(found)

    @cached_property
    def acronyms(self) -> frozenset[str]:
        """Initials of capitalised runs ("International Criminal Court" -> "icc")."""
        runs = re.finditer(r"[A-Z][\w’'-]*(?:\s+(?:of|the|and|for|de)?\s*[A-Z][\w’'-]*)+", self.text)
        return frozenset(
            "".join(
                w[0] for w in run.group().split() if w[0].isupper() and w.lower() not in STOPWORDS
            ).lower()
            for run in runs
        )

    @cached_property
    def word_prefixes(self) -> frozenset[str]:
        """Every prefix of four letters or more of every word."""
        return frozenset(w[:k] for w in self.words for k in range(4, len(w) + 1))

    def mentions(self, name: str, derived_forms: bool = True) -> bool:
        """Whether a lower-cased name from a claim occurs here: as is, stemmed, as an acronym, or
        (with derived_forms) as a form sharing all but its last three letters ("Indonesian" /
        "Indonesia")."""
        return (
            name in self.word_set
            or stem(name) in self.word_set
            or name in self.acronyms
            or (derived_forms and name[: max(4, len(name) - 3)] in self.word_prefixes)
        )


def capitalised_words(text: str) -> list[tuple[str, int]]:
    """Capitalised words that name something (people, places, titles, months), with offsets.

    A claim naming something the context never mentions is a classic hallucination that embeddings
    barely notice. The first word is skipped unless a capitalised word follows it ("Researchers
    found" is ordinary English, "Salil Shetty said" is a name).
    """
    found = []
    for match in TOKEN_RE.finditer(text):
        word = match.group()
        lowered = _strip_possessive(word.lower())
        if not word[0].isupper() or len(lowered) < 2 or not is_content_word(lowered):
            continue
        if not text[: match.start()].strip(" \"'“‘([") or text[: match.start()].rstrip().endswith(":"):
            rest = text[match.end() :].lstrip(" '’s")
            if not rest[:1].isupper():
                continue
        found.append((lowered, match.start()))
    return found


_NAME = r"[A-Z][\w'’.-]*"
_NAMES = rf"{_NAME}(?:\s+(?:and\s+|&\s+)?{_NAME}){{0,4}}"
_SAYS = r"(?:says?|said|writes|wrote|argues|asks|notes)"
# Who is speaking rather than what is said: a leading "Frida Ghitis:" label, a closing ", says
# Stefan Wolff." or "Zelizer says." An opinion piece's author is in its byline, not its body.
ATTRIBUTION_RE = re.compile(
    rf"^\W*(?P<label>{_NAMES})\s*:\s"
    rf"|(?:,|(?<![\s,]))\s+{_SAYS}\s+(?P<after>{_NAMES})\W*$"  # from a space run's start: linear
    rf"|(?:^|,\s*)(?P<before>{_NAMES})\s+{_SAYS}\W*$"
)


def attribution_span(text: str) -> tuple[int, int] | None:
    """(start, end) of the names a statement is attributed to, or None."""
    match = ATTRIBUTION_RE.search(text)
    if not match:
        return None
    group = next(name for name in ("label", "after", "before") if match.group(name))
    return match.span(group)


# --- sentence units ---------------------------------------------------------------------------
#
# Text is cut into units along its Markdown structure first, then into sentences. A heading, a
# table row, a line of links, a code line, and markup (a fence, an admonition marker such as
# ":::note", an HTML or JSX tag, an MDX import) is one unit of its own line. A list item, a quote
# or a paragraph is a block: its soft-wrapped lines (a line break inside it) join, and it is cut
# into sentences. Nothing joins across block boundaries, so a list item is never glued to the
# lines around it, and a line ending with ":" ends its unit (it introduces what follows).


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
            if _ends_with_abbreviation(text, match.start()):
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


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line, trimmed of surrounding whitespace and list bullets
    (see sentence_units, which also says what kind of text each one is)."""
    return [(unit.start, unit.end) for unit in sentence_units(text)]


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
