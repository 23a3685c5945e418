"""Our own framing, copied back by a small model, taken out of its answer as it streams.

The answer turn shows each passage as `[n] (Title > Section) sentences ...` and ends the
reader's message with a request ("Answer with the sentences that answer it, ..."). A 0.5B model
copies what it is shown, framing included: "[1] (Launch Files and Parameters > Learning
Objectives) ROS 2 uses a decentralized architecture ...". The place is not the book's text (the
validator finds its words in no passage and the answer is replaced), and the request is ours. An
`EchoFilter` drops
- a passage's place: "(" + the heading of a passage shown, then anything up to the parenthesis
  that closes it (a place may hold parentheses of its own: "(Book > Publisher-Subscriber
  (Topics))"), with the space after it;
- a line that is nothing but a place, or part of one ("[5] Transport Layers: How MCP Messages
  Travel", "The Reliability Mindset > In Practice"), with its marker: a heading is no claim;
- the lines of the framing (the question line, the request), wherever they appear.
It holds back the tail of the stream that could still become one of them, like CitationStream
holds an open marker, so an echo split across deltas is dropped whole; everything else passes
through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A place is a heading path on one line: an opening parenthesis that has not closed within this
# many characters is prose, not an echo.
MAX_PLACE_CHARS = 400
_LEADING_MARKER_RE = re.compile(r"[ \t]*(?:\[\d+(?:,\s*\d+)*\][ \t]*)?")
_OPEN_MARKER_RE = re.compile(r"[ \t]*\[[\d,\s]*$")
_TRAILING_MARKERS_RE = re.compile(r"(?:\s*\[\d+(?:,\s*\d+)*\])+\s*$")
# The same while it streams: a marker may still be open ("... In Practice [2").
_TRAILING_OPEN_MARKERS_RE = re.compile(r"(?:\s*\[[\d,\s]*\]?)+\s*$")


class EchoFilter:
    def __init__(self, headings: Iterable[str], lines: Iterable[str] = ()) -> None:
        headings = [h for h in headings if h.strip()]
        self._openers = sorted({f"({h}" for h in headings}, key=len, reverse=True)
        self._places = frozenset(part for h in headings for part in _sub_paths(h))
        self._lines = sorted({line for line in lines if line.strip()}, key=len, reverse=True)
        self._pending = ""
        self._line_start = True  # the text released so far ends a line (or is empty)
        self.dropped: list[str] = []

    def feed(self, delta: str) -> str:
        """The text that can be shown now, echoes removed."""
        text = self._pending + delta
        released, self._pending = self._scan(text, final=False)
        return released

    def finish(self) -> str:
        """What was held back, at the end of the stream (an unfinished echo is shown as written)."""
        text, self._pending = self._pending, ""
        return self._scan(text, final=True)[0]

    def _scan(self, text: str, final: bool) -> tuple[str, str]:
        out, at = [], 0
        while at < len(text):
            line_start = text[at - 1] == "\n" if at else self._line_start
            end = self._echo_end(text, at, final, line_start)
            if end is None or (end == len(text) > at and not final):
                # Could still become an echo, or an echo that spaces may still follow: hold.
                return "".join(out), text[at:]
            if end > at:
                self.dropped.append(text[at:end].strip())
                self._line_start = line_start and text[end - 1] == "\n"
                at = end
                continue
            out.append(text[at])
            self._line_start = text[at] == "\n"
            at += 1
        return "".join(out), ""

    def _echo_end(self, text: str, at: int, final: bool, line_start: bool) -> int | None:
        """Where an echo starting at `at` ends (with the spaces after it); `at` when none starts
        there; None when the text ends before it is decided (never when final)."""
        if line_start and self._places:
            end = self._place_line_end(text, at, final)
            if end != at:
                return end
        rest = text[at:]
        for line in self._lines:
            if rest.startswith(line):
                return _after_spaces(text, at + len(line))
            if not final and line.startswith(rest):
                return None
        if not rest.startswith("("):
            return at
        for opener in self._openers:
            if rest.startswith(opener):
                close = _closing(text, at)
                if close is None:
                    return at if final else None
                return at if close < 0 else _after_spaces(text, close + 1)
            if not final and opener.startswith(rest):
                return None
        return at

    def _place_line_end(self, text: str, at: int, final: bool) -> int | None:
        """The end of the line starting at `at` (its newline included) when the line is a place
        (with markers), `at` when it is not, None when the text ends before that is decided."""
        if not final and _OPEN_MARKER_RE.fullmatch(text, at):
            return None
        body = _LEADING_MARKER_RE.match(text, at).end()
        newline = text.find("\n", body)
        if newline < 0 and not final:
            written = _TRAILING_OPEN_MARKERS_RE.sub("", text[body:]).strip()
            return None if any(place.startswith(written) for place in self._places) else at
        line_end = len(text) if newline < 0 else newline
        line = _TRAILING_MARKERS_RE.sub("", text[body:line_end]).strip().rstrip(".:")
        if line not in self._places:
            return at
        return line_end if newline < 0 else newline + 1


def shown_places(texts: Iterable[str]) -> list[str]:
    """The places the passages were shown under: each text's opening `(Title > Section >
    Heading)` (the heading its section stands under in the chunk is in no passage's heading)."""
    places = []
    for text in texts:
        close = _closing(text, 0) if text.startswith("(") else None
        if close is not None and close > 0:
            places.append(text[1:close])
    return places


def _sub_paths(heading: str) -> list[str]:
    """Every run of consecutive parts of a place ("A > B > C": "A", "A > B", ..., "C")."""
    parts = [part.strip() for part in heading.split(" > ") if part.strip()]
    return [" > ".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)]


def _closing(text: str, start: int) -> int | None:
    """The index of the parenthesis closing the one at `start` on the same line and within
    MAX_PLACE_CHARS; -1 when there is none (a line ends first, or the limit); None when the text
    ends before that is decided."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "\n" or index - start >= MAX_PLACE_CHARS:
            return -1
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return index
    return None


def _after_spaces(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t":
        index += 1
    return index
