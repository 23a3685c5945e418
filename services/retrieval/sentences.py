"""Prose sentences of a chunk: what Search scores for highlights and the extractive answerer quotes.

Code blocks, headings, lines introducing a list ("as follows:") and fragments of a few words are
left out: none answers a question on its own. Spans are offsets into the chunk text (in code
points), so a client can highlight a sentence where it stands.
"""

from __future__ import annotations

import re

from services.validation.text import sentence_spans

_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_NOT_NEWLINE_RE = re.compile(r"[^\n]")
MIN_SENTENCE_WORDS = 3


def prose_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each prose sentence of the text, in order."""
    # Code is blanked out rather than cut, so that offsets still hold in the original text.
    masked = _FENCE_RE.sub(lambda fence: _NOT_NEWLINE_RE.sub(" ", fence.group()), text)
    found = []
    for start, end in sentence_spans(masked):
        sentence = masked[start:end]
        if sentence.startswith("#") or sentence.endswith(":") or len(sentence.split()) < MIN_SENTENCE_WORDS:
            continue
        found.append((start, end))
    return found


def normalise(sentence: str) -> str:
    """One space between words: the form sentences are compared and embedded in."""
    return " ".join(sentence.split())
