"""Whether an answer answers its question: it must address the question's focus.

A grounded answer can still answer nothing: "What is Gazebo used for?" answered "Used for
long-running tasks. Used for streaming data like sensor readings." (ROS 2's communication
patterns) quotes the book faithfully and says nothing of Gazebo. The focus is what the question
is about: its content words (services.common.text.question) less the words every question asks
with (services/common/text/wordlists/question_words.txt). An answer addresses it when it, or a passage supporting one
of its claims (a list item read with its heading), names one focus word; a question asking how
many or how much is answered only by a number, and numbers alone ("20 25 20") say nothing of
what they count; an answer that is only the titles of sections ("2. Real-time Constraints [1]"
for the time windows a system must respond within) names a topic and states nothing. A decline claims nothing, so it is never "not an
answer" here (whether it should have answered is the agent's judgement), and a question with no
focus of its own ("Explain this in simpler words") is answered by whatever is grounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from services.common.text.prose import HEADING_NUMBER_RE
from services.common.text.question import asks_for_figure, focus_terms
from services.common.text.words import Analysis

_HEADING_LINE_RE = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
TITLES_ONLY_NOTE = "the answer only names sections of the book: it states nothing about them"


def titles_only(claims: Iterable[str], chunk_texts: Iterable[str], places: Iterable[str]) -> bool:
    """Whether every claim is the title of a section of the context (a Markdown heading of a
    chunk, or a part of a chunk's place in the book)."""
    titles = {_title(h) for text in chunk_texts for h in _HEADING_LINE_RE.findall(text)}
    titles |= {_title(part) for place in places for part in place.split(" > ")}
    said = [_title(claim) for claim in claims]
    return bool(said) and all(claim in titles for claim in said)


def _title(text: str) -> str:
    """A heading as compared: its numbering, Markdown emphasis, case and closing punctuation dropped."""
    plain = HEADING_NUMBER_RE.sub("", " ".join(text.replace("*", "").replace("`", "").split()))
    return plain.rstrip(".:;!").strip().lower()


def missed_focus(query: str, claims: str, supporting_passages: Iterable[frozenset[str]]) -> str:
    """Why the answer (its claims, markers left out) does not answer the question ("" when it
    does): the terms of each passage supporting one of its claims count as addressed (a quoted
    list item is about its heading)."""
    focus = focus_terms(query)
    stated = Analysis(claims)
    if focus and not focus & stated.term_set.union(*supporting_passages):
        return "the answer never addresses what the question asks about: " + ", ".join(sorted(focus))
    if asks_for_figure(query) and not stated.numbers:
        return "the question asks for a figure, and the answer states no number"
    if len(stated.numbers) > 1 and not stated.term_set:
        return "the answer lists numbers without a word of what they are"
    return ""
