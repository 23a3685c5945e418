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

import html
import re

_FENCE_RE = re.compile(r"(?m)^[ \t]*(?:`{3,}|~{3,}).*$")
# A link or an image, inline ("[text](url)", a url may hold one pair of parentheses) or by
# reference ("[text][ref]"), or an autolink ("<https://...>"): what a reader sees is the group.
LINK_RE = re.compile(
    r"!?\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)|!?\[([^\]\n]+)\]\[[^\]\n]*\]|<((?:https?|mailto):[^>\s]+)>"
)
HTML_TAG_RE = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_ADMONITION_RE = re.compile(r"(?m)^[ \t]*:::[\w-]*(?:[ \t].*)?$")
# Quote marks, then a heading's marks, a bullet (with a task box "[ ]" / "[x]") or a table pipe.
_LINE_START_RE = re.compile(
    r"(?m)^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|(?:[-*+•]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?|\|[ \t]*)?"
)
# A task box left at the start once a bullet was cut off (a sentence span starts after it).
_TASK_BOX_RE = re.compile(r"^[ \t]*\[[ xX]\][ \t]+")
_HEADING_CLOSE_RE = re.compile(r"(?m)[ \t]+#+[ \t]*$")
_TABLE_PIPE_RE = re.compile(r"[ \t]*\|[ \t]*")
_STRONG_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# Single * or _ emphasis only between non-word characters: snake_case names keep their "_".
_EMPHASIS_RE = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])"
)
_STRIKE_RE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_CODE_RE = re.compile(r"(`+)(.+?)\1")
_SPACE_RE = re.compile(r"[ \t]+")
_SPACE_BEFORE_CLOSE_RE = re.compile(r" ([)\].,;])")
_SPACE_AFTER_OPEN_RE = re.compile(r"([(\[]) ")


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

    def keep_code(match: re.Match[str]) -> str:
        # Code spans are set aside so that the "*" and "_" inside them stay as written.
        code.append(match.group(2).strip())
        return f"\x00{len(code) - 1}\x00"

    text = _CODE_RE.sub(keep_code, text)
    text = show_links(text)
    text = HTML_TAG_RE.sub(" ", _COMMENT_RE.sub(" ", text))
    text = _STRIKE_RE.sub(r"\1", _STRONG_RE.sub(r"\2", text))
    text = _EMPHASIS_RE.sub(lambda m: m.group(1) or m.group(2), text)
    text = _TABLE_PIPE_RE.sub(" ", text) if text.count("|") >= 2 else text
    text = re.sub(r"\x00(\d+)\x00", lambda m: code[int(m.group(1))], text)
    text = _SPACE_RE.sub(" ", html.unescape(" ".join(text.split()))).strip()
    # A tag removed next to punctuation leaves a space inside it: "(see <b>QoS</b>)".
    return _SPACE_BEFORE_CLOSE_RE.sub(r"\1", _SPACE_AFTER_OPEN_RE.sub(r"\1", text))
