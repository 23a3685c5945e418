"""The heading tree: heading anchors exactly as Docusaurus renders them, and the cut of a document's
blocks into sections (H1 > H2 > H3).

Anchors follow Docusaurus's `headings` remark plugin: an explicit `{#custom-id}` wins as written;
otherwise github-slugger v2 on the heading's plain text, with one slugger per document so a repeated
heading gets `-1`, `-2`... Explicit ids do not take part in the duplicate count, as in Docusaurus.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from services.common.text.display import code_spans
from services.retrieval.ingest.documents import Block, Section

SECTION_DEPTH = 3
"""Headings of level 1-3 open sections; deeper ones stay inside their parent section's text."""

# github-slugger v2 strips these Unicode general categories (letters, marks, decimal and letter
# numbers and connector punctuation such as "_" survive), except "-" and " " (which becomes "-").
# fmt: off
_STRIPPED_CATEGORIES = frozenset((
    "No", "Pe", "Pf", "Pi", "Ps", "Po", "Pd", "Sc", "Sk", "Sm", "So", "Cc", "Cf", "Co", "Cn", "Zs",
    "Zl", "Zp",
))
# fmt: on
# Linear patterns only (headings are user text): what repeats cannot take the character that
# starts another try, so no start rescans what an earlier one read. `[^\]]*` in _LINK let each of
# 50,000 "[" scan to the end: one such page took 47 s of CPU.
_EXPLICIT_ID = re.compile(r"\{#(?P<id>[^{}]+)\}\s*$")
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\[\]]*\)")
_LINK = re.compile(r"\[([^\[\]]*)\](?:\([^()\[\]]*\)|\[[^\[\]]*\])")
_STRONG = re.compile(r"(\*\*|__)(?=\S)((?:(?!\1).)+?)(?<=\S)\1")
_EMPHASIS_STAR = re.compile(r"\*(?=[^\s*])([^*]+?)(?<=\S)\*")
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![\w\\])_(?=[^\s_])([^_]+?)(?<=\S)_(?!\w)")
_STRIKE = re.compile(r"~~(?=\S)((?:(?!~~).)+?)(?<=\S)~~")
_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


@lru_cache(maxsize=65536)
def slugify(text: str) -> str:
    """github-slugger's `slug()`: lower-case, drop punctuation and symbols, spaces to dashes."""
    kept = []
    for char in text.lower():
        if char == " ":
            kept.append("-")
        elif char == "-" or unicodedata.category(char) not in _STRIPPED_CATEGORIES or char.isalpha():
            kept.append(char)
    return "".join(kept)


class Slugger:
    """github-slugger's stateful `BananaSlug`: one per document, duplicates numbered -1, -2..."""

    def __init__(self) -> None:
        self._occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        base = result = slugify(text)
        while result in self._occurrences:
            self._occurrences[base] += 1
            result = f"{base}-{self._occurrences[base]}"
        self._occurrences[result] = 0
        return result


def split_explicit_id(heading: str) -> tuple[str, str]:
    """`Install {#setup}` -> ("Install", "setup"); no explicit id -> (heading, "")."""
    opening = heading.rfind("{#")
    match = _EXPLICIT_ID.match(heading, opening) if opening >= 0 else None
    if not match:
        return heading, ""
    return heading[:opening].rstrip(), match.group("id").strip()


def plain_heading_text(markdown: str) -> str:
    """The heading's text as mdast `toString` sees it: markup gone, code spans and link text kept."""
    parts = []
    position = 0
    for start, content_start, content_end, end in code_spans(markdown, across_lines=True):
        parts.append(_strip_inline_markup(markdown[position:start]))
        code = markdown[content_start:content_end]
        parts.append(code.strip() or code)
        position = end
    parts.append(_strip_inline_markup(markdown[position:]))
    return "".join(parts).strip()


def _strip_inline_markup(text: str) -> str:
    text = _TAG.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _STRONG.sub(r"\2", text)
    text = _EMPHASIS_STAR.sub(r"\1", text)
    text = _EMPHASIS_UNDERSCORE.sub(r"\1", text)
    text = _STRIKE.sub(r"\1", text)
    text = _ESCAPE.sub(r"\1", text)
    return html.unescape(text)


def build_sections(blocks: Iterable[Block]) -> tuple[Section, ...]:
    """Cuts blocks into sections at headings of level 1-3 and gives every heading its anchor.

    The section path is the stack of open headings (a skipped level is simply absent: an H3 right
    under an H1 has a two-item path). Text before the first heading forms a section with an empty
    path. Headings of level 4-6 get anchors too (they count for duplicate numbering) but fold into
    the section above them, so a chunk's anchor is that of its H1-H3 section.
    """
    slugger = Slugger()
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []  # (level, title) of the open headings
    anchor = ""
    current: list[Block] = []

    def close() -> None:
        if current:
            sections.append(
                Section(path=tuple(title for _, title in stack), anchor=anchor, blocks=tuple(current))
            )

    for block in blocks:
        if block.kind == "heading" and block.title:
            heading_anchor = block.anchor or slugger.slug(block.title)
            if block.level <= SECTION_DEPTH:
                close()
                current = []
                while stack and stack[-1][0] >= block.level:
                    stack.pop()
                stack.append((block.level, block.title))
                anchor = heading_anchor
        current.append(block)
    close()
    return tuple(sections)
