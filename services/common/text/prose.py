"""Prose sentences of a chunk: what Search scores for highlights and the extractive answerer quotes.

The chunk is cut by the one splitter (`units.sentence_units`), so a highlight, a quoted sentence
and the sentence the validator checks it against are the same unit. Only prose answers a question
on its own, so these are left out:
- what is not prose: code, headings, table rows, lines of links, markup (fences, `:::note`,
  HTML/JSX tags, MDX imports);
- lines introducing what follows ("as follows:") and questions (an FAQ's "Q: ...?");
- fragments: fewer than MIN_SENTENCE_WORDS words, or, for a list item or a line that does not
  end like a sentence ("**Cause**: DDS configuration issues"), fewer than MIN_LIST_ITEM_WORDS
  ("Restart ROS 2 daemon" is a step, not an answer). A labelled figure ("**Era**: 2000-2018",
  "RAM: 16 GB") is a fact however short: the one place a book states it is often such a line.
Words are counted in the text as displayed (`display.display_text`). Spans are offsets into the
chunk text (in code points), so a client can highlight a sentence where it stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.common.text.display import display_text
from services.common.text.units import PROSE_KINDS, UnitKind, sentence_units
from services.common.text.words import TOKEN_RE

MIN_SENTENCE_WORDS = 3
MIN_LIST_ITEM_WORDS = 5
_SENTENCE_CLOSE_RE = re.compile(r"[.!]['\"”’)\]]*$")
# "Label: value" where the value holds a figure.
_LABELLED_FIGURE_RE = re.compile(r"^[^:]{1,40}:\s*\S*\d")


@dataclass(frozen=True)
class ProseSentence:
    start: int
    end: int
    # The text of the last heading above the sentence in the chunk ("" when none is).
    heading: str


def prose_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each prose sentence of the text, in order."""
    return [(sentence.start, sentence.end) for sentence in sectioned_sentences(text)]


def sectioned_sentences(text: str) -> list[ProseSentence]:
    """The prose sentences of the text, in order, each with the heading it stands under."""
    found = []
    heading = ""
    for unit in sentence_units(text):
        if unit.kind == UnitKind.HEADING:
            heading = display_text(text[unit.start : unit.end])
        if unit.kind not in PROSE_KINDS:
            continue
        shown = display_text(text[unit.start : unit.end])
        if shown.endswith((":", "?")):
            continue
        fragment = unit.kind == UnitKind.LIST_ITEM or not _SENTENCE_CLOSE_RE.search(shown)
        fragment = fragment and not _LABELLED_FIGURE_RE.match(shown)
        least = MIN_LIST_ITEM_WORDS if fragment else MIN_SENTENCE_WORDS
        if len(TOKEN_RE.findall(shown)) >= least:
            found.append(ProseSentence(unit.start, unit.end, heading))
    return found


def normalise(sentence: str) -> str:
    """One space between words: the form sentences are compared and embedded in."""
    return " ".join(sentence.split())
