"""Markdown as a reader sees it rendered: the plain text of a sentence or a snippet.

Stored chunks keep their Markdown (it is what was indexed, and what offsets point into); what a
reader is shown (an answer's quoted sentences, a search result's snippet) is cleaned here:
`**bold**` and `*emphasis*` lose their markers, `` `code` `` its backticks, `[text](url)` and
images keep their text, a leading bullet, heading marks, quote marks and table pipes go, and so do
HTML/JSX tags, admonition markers (`:::note`) and code fences. Only markup goes: every word stays,
in order, so a cleaned sentence is checked against its raw chunk word for word (the validator's
word analysis ignores punctuation).
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable

_FENCE_RE = re.compile(r"(?m)^[ \t]*(?:`{3,}|~{3,}).*$")
# A link or an image, inline ("[text](url)", a url may hold one pair of parentheses) or by
# reference ("[text][ref]"), or an autolink ("<https://...>"): what a reader sees is the group.
# Every user-text pattern here is linear: a part that repeats cannot take the character that
# starts another try ("[" in a link's text or url), so no start rescans what an earlier one read
# (`[^\]]*` let each of 20,000 "[" scan to the line's end: 12 s of CPU for one Validate).
LINK_RE = re.compile(
    r"!?\[([^\[\]\n]*)\]\((?:[^()\[\]\n]|\([^()\[\]\n]*\))*\)|!?\[([^\[\]\n]+)\]\[[^\[\]\n]*\]"
    r"|<((?:https?|mailto):[^<>\s]+)>"
)
HTML_TAG_RE = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
_COMMENT_RE = re.compile(r"<!--(?:(?!<!--).)*?-->", re.DOTALL)
_ADMONITION_RE = re.compile(r"(?m)^[ \t]*:::[\w-]*(?:[ \t].*)?$")
# Quote marks, then a heading's marks, a bullet (with a task box "[ ]" / "[x]") or a table pipe.
_LINE_START_RE = re.compile(
    r"(?m)^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|(?:[-*+•]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?|\|[ \t]*)?"
)
# A task box left at the start once a bullet was cut off (a sentence span starts after it).
_TASK_BOX_RE = re.compile(r"^[ \t]*\[[ xX]\][ \t]+")
_HEADING_CLOSE_RE = re.compile(r"(?m)(?<![ \t])[ \t]+#+[ \t]*$")
_TABLE_PIPE_RE = re.compile(r"[ \t]*\|[ \t]*")
_STRONG_RE = re.compile(r"(\*\*|__)(?=\S)((?:(?!\1).)+?)(?<=\S)\1")
# Single * or _ emphasis only between non-word characters: snake_case names keep their "_".
_EMPHASIS_RE = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])"
)
_STRIKE_RE = re.compile(r"~~(?=\S)((?:(?!~~).)+?)(?<=\S)~~")
# The half of a bold span cut by a sentence end ("**Agents compete. Agents build.**" is two
# sentences; "It does something radical: **It snapshots file state. Then ...**"): an opener or a
# closer left with no partner once the pairs are rendered ("2**3" is neither).
_STRAY_STRONG_RE = re.compile(r"(?<!\S)\*\*(?=\S)|(?<=\S)\*\*(?!\S)")
_BACKTICKS_RE = re.compile(r"`+")
_NEWLINE_RE = re.compile(r"\n")
_SPACE_RE = re.compile(r"[ \t]+")
# Not before a word: ".env" and ".md" are names ("a .env file" is no "a.env file").
_SPACE_BEFORE_CLOSE_RE = re.compile(r" ([)\].,;])(?!\w)")
_SPACE_AFTER_OPEN_RE = re.compile(r"([(\[]) ")


def code_spans(text: str, *, across_lines: bool = False) -> list[tuple[int, int, int, int]]:
    """(start, content start, content end, end) of each code span: a run of n backticks up to the
    next run of exactly n (CommonMark). A hand-written scan, linear: the pattern (`+)(.+?)\\1 tried
    every split of a long run against every later one."""
    runs = [(match.start(), match.end()) for match in _BACKTICKS_RE.finditer(text)]
    following: list[int | None] = [None] * len(runs)
    last_of_length: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = last_of_length.get(length)
        last_of_length[length] = index
    line_ends = [match.start() for match in _NEWLINE_RE.finditer(text)]
    spans = []
    index = 0
    while index < len(runs):
        closing = following[index]
        # No closer, an empty span, or one across lines (spans stay on their line): a literal run.
        if (
            closing is None
            or runs[closing][0] == runs[index][1]
            or (
                not across_lines
                and bisect.bisect(line_ends, runs[index][1]) != bisect.bisect(line_ends, runs[closing][0])
            )
        ):
            index += 1
            continue
        spans.append((runs[index][0], runs[index][1], runs[closing][0], runs[closing][1]))
        index = closing + 1
    return spans


def replace_code_spans(text: str, replace: Callable[[str], str]) -> str:
    """The text with each code span replaced by `replace(its content)`."""
    parts, position = [], 0
    for start, content_start, content_end, end in code_spans(text):
        parts += [text[position:start], replace(text[content_start:content_end])]
        position = end
    parts.append(text[position:])
    return "".join(parts)


def show_links(text: str) -> str:
    """Each link, image or autolink replaced by what a reader sees of it (its text, or the URL of
    an autolink)."""
    return LINK_RE.sub(lambda link: next(g for g in link.groups() if g is not None), text)


def display_text(markdown: str) -> str:
    """The text as rendered, on one line: markup removed, every word kept, spaces collapsed."""
    text = _FENCE_RE.sub(" ", markdown)
    text = _ADMONITION_RE.sub(" ", text)
    text = _HEADING_CLOSE_RE.sub("", _LINE_START_RE.sub("", text))
    text = _TASK_BOX_RE.sub("", text)
    code: list[str] = []

    def keep_code(content: str) -> str:
        # Code spans are set aside so that the "*" and "_" inside them stay as written.
        code.append(" ".join(content.split()))
        return f"\x00{len(code) - 1}\x00"

    text = replace_code_spans(text, keep_code)
    text = show_links(text)
    text = HTML_TAG_RE.sub(" ", _COMMENT_RE.sub(" ", text))
    text = _STRIKE_RE.sub(r"\1", _STRONG_RE.sub(r"\2", text))
    text = _STRAY_STRONG_RE.sub("", text.strip())
    text = _EMPHASIS_RE.sub(lambda m: m.group(1) or m.group(2), text)
    text = _TABLE_PIPE_RE.sub(" ", text) if text.count("|") >= 2 else text
    text = _SPACE_RE.sub(" ", html.unescape(" ".join(text.split()))).strip()
    # A tag removed next to punctuation leaves a space inside it: "(see <b>QoS</b>)". Code is
    # put back after, as written: the "." of `docker build -t api .` is an argument.
    text = _SPACE_BEFORE_CLOSE_RE.sub(r"\1", _SPACE_AFTER_OPEN_RE.sub(r"\1", text))
    return re.sub(r"\x00(\d+)\x00", lambda m: code[int(m.group(1))], text)
