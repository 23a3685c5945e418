"""What retrieval is asked for: the question, resolved against the conversation and the reader's selection.

"Explain this" searched alone finds nothing; with the passage the reader highlighted it finds the
section it came from. "And how does it compare with Unity?" searched alone loses its subject; with
the question it follows, it finds both. Both answer modes search for this text, whatever the model
writes as its own query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from services.agent.sessions.model import Turn
from services.common.contract_limits import MAX_QUERY_CHARS
from services.common.text.words import Analysis

# Most of the budget left after the question that the reader's selection may take.
_MAX_SELECTION_CHARS = 600
# A question with this few content words of its own leans on what came before when it refers back.
_MAX_FOLLOW_UP_TERMS = 4
# Earlier questions followed back through a chain of follow-ups.
_MAX_CHAIN = 2
_CONNECTOR_RE = re.compile(
    r"^\s*(?:and|but|or|so|also|then|what about|how about|what else|why not|same for|compared?)\b",
    re.IGNORECASE,
)
_BACK_REFERENCE_RE = re.compile(
    r"\b(?:it|its|this|that|these|those|they|them|their|theirs|he|she|him|her|there|former|latter|"
    r"the same|the other|the previous|above|one)\b",
    re.IGNORECASE,
)


def search_query(question: str, *, selected_text: str = "", history: Sequence[Turn] = ()) -> str:
    """The text to search for: earlier questions a follow-up depends on, the question, the selection.

    With a selection, "this" is the selected text: the question leans on it, not on the questions
    before it (which would steer the search, and the answer, back to their subject)."""
    question = " ".join(question.split())
    selection = " ".join(selected_text.split())
    parts = [*([] if selection else _antecedents(question, history)), question]
    query = " ".join(parts)
    if selection:
        room = MAX_QUERY_CHARS - len(query) - 1
        excerpt = _cut(selection, min(room, _MAX_SELECTION_CHARS))
        if excerpt:
            query = f"{query} {excerpt}"
    return _cut(query, MAX_QUERY_CHARS)


def is_follow_up(question: str) -> bool:
    """Whether a question needs the conversation to be understood: it opens with a connector
    ("And ...", "What about ..."), or refers back ("it", "this") with little subject of its own."""
    if _CONNECTOR_RE.match(question):
        return True
    return (
        bool(_BACK_REFERENCE_RE.search(question)) and len(Analysis(question).term_set) <= _MAX_FOLLOW_UP_TERMS
    )


def _antecedents(question: str, history: Sequence[Turn]) -> list[str]:
    """The earlier questions a follow-up leans on, oldest first (a chain of follow-ups is followed)."""
    chain: list[str] = []
    current = question
    for turn in reversed(history):
        if len(chain) == _MAX_CHAIN or not is_follow_up(current):
            break
        current = " ".join(turn.query.split())
        chain.insert(0, current)
    return chain


def _cut(text: str, max_chars: int) -> str:
    """At most max_chars of text, cut on a word boundary."""
    if max_chars <= 0:
        return ""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    space = head.rfind(" ")
    return head[:space] if space > max_chars // 2 else head
