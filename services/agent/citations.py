"""[n] citation markers: found while the answer streams, checked against what was retrieved, capped.

A citation may only point at a retrieved source, so a marker naming any other number is removed
from the text before the client sees it: the streamed text and the final answer agree, and neither
carries a dangling [n]. A grouped marker ("[1, 3]") keeps its valid numbers; ranges ("[1-3]") are
not markers.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from services.common.text.units import sentence_ends

# Optional leading spaces belong to the marker: removing " [9]" must not leave "word ." behind.
# Spaces are matched from the start of their run only ((?<!\s)): a try at each space of a long run
# rescanned the rest of it, quadratic.
MARKER_RE = re.compile(r"(?<!\s)(\s*)\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]")
# A marker that may still be completed by the next delta: "[", "[1", "[1, ".
_OPEN_MARKER_RE = re.compile(r"(?<!\s)\s*\[[\d,\s]{0,24}$")
_TRAILING_SPACE_RE = re.compile(r"(?<!\s)\s+$")


def marker_indexes(text: str) -> list[int]:
    """Every number cited in text, in order of first appearance, without repeats."""
    seen: dict[int, None] = {}
    for match in MARKER_RE.finditer(text):
        for number in match.group(2).split(","):
            seen.setdefault(int(number), None)
    return list(seen)


def filter_markers(text: str, is_known: Callable[[int], bool]) -> tuple[str, list[int]]:
    """Removes unknown numbers from the markers of text; returns the text and the known numbers cited."""
    cited: dict[int, None] = {}

    def keep_known(match: re.Match[str]) -> str:
        known = [n for n in (int(x) for x in match.group(2).split(",")) if is_known(n)]
        for number in known:
            cited.setdefault(number, None)
        if not known:
            return ""
        return f"{match.group(1)}[{', '.join(str(n) for n in dict.fromkeys(known))}]"

    return MARKER_RE.sub(keep_known, text), list(cited)


class CitationStream:
    """Cleans streamed answer text and reports each valid citation the first time it appears.

    The tail of a delta that could be the start of a marker (or the spaces before one) is held back
    until the next delta decides it, so a marker split across deltas is still recognised and an
    invalid one disappears with its leading space. `is_known` is asked at the time a marker closes,
    so sources retrieved by a later tool call count as soon as they exist.
    """

    def __init__(self, is_known: Callable[[int], bool]) -> None:
        self._is_known = is_known
        self._pending = ""
        self._cited: set[int] = set()
        self.text = ""

    def feed(self, delta: str) -> tuple[str, list[int]]:
        """Text that can be shown now, and the numbers cited in it for the first time."""
        buffer = self._pending + delta
        hold = _OPEN_MARKER_RE.search(buffer) or _TRAILING_SPACE_RE.search(buffer)
        cut = hold.start() if hold else len(buffer)
        self._pending = buffer[cut:]
        return self._release(buffer[:cut])

    def flush(self) -> tuple[str, list[int]]:
        """Releases what was held back at the end of the stream (an unclosed "[" is plain text)."""
        rest, self._pending = self._pending, ""
        return self._release(rest)

    @property
    def cited(self) -> list[int]:
        """Valid numbers cited so far, in order of first appearance."""
        return marker_indexes(self.text)

    def _release(self, text: str) -> tuple[str, list[int]]:
        clean, cited = filter_markers(text, self._is_known)
        new = [n for n in cited if n not in self._cited]
        self._cited.update(new)
        self.text += clean
        return clean, new


def cap_answer(text: str, max_chars: int) -> tuple[str, bool]:
    """Text cut to at most max_chars, on the last sentence end that fits; (text, was_cut).

    A sentence end is only used when it keeps at least half the budget; otherwise the cut falls on
    the last word boundary and an ellipsis marks it, rather than returning almost nothing.
    """
    text = text.strip()
    if len(text) <= max_chars:
        return text, False
    # A sentence ends after its closing quotes and its own [n] markers; "e.g." ends none.
    ends = [end for end in sentence_ends(text) if end <= max_chars]
    if ends and ends[-1] >= max_chars // 2:
        return text[: ends[-1]].rstrip(), True
    head = text[: max_chars - 1]
    space = head.rfind(" ")
    if space >= max_chars // 2:
        head = head[:space]
    return _OPEN_MARKER_RE.sub("", head).rstrip() + "…", True
