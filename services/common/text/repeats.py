"""Whether a text mostly repeats another: an answer to "Explain this in simpler words" that gives
the reader's highlight back explains nothing (the correctness rule calls it partial at best, and
the agent's confidence says so too)."""

from __future__ import annotations

import re

from services.common.text.words import LIGHT_WORDS, NUMBER_WORDS, STOPWORDS, stem

# An answer whose words are this much the highlight's repeats it instead of explaining it.
REPEATED_SHARE = 0.75

# Words, and numbers with their decimal points ("3.10", "9.8"); "2-3" and "HRP-1" split at "-".
_TERM = re.compile(r"\d+(?:\.\d+)*|[^\W\d_]+", re.UNICODE)


def terms(text: str) -> list[str]:
    """The checkable terms of a text: numbers as written (number words as digits), content words
    stemmed; stop words and filler dropped."""
    found = []
    for raw in _TERM.findall(text.lower()):
        if raw[0].isdigit():
            found.append(raw)
        elif raw in NUMBER_WORDS:
            found.append(NUMBER_WORDS[raw])
        elif raw not in STOPWORDS and raw not in LIGHT_WORDS and len(raw) > 1:
            found.append(stem(raw))
    return found


def repeats(answer: str, highlight: str) -> bool:
    """Whether the answer mostly repeats the highlight: REPEATED_SHARE of its terms are the
    highlight's."""
    said, highlighted = terms(answer), set(terms(highlight))
    return bool(said) and sum(t in highlighted for t in said) / len(said) >= REPEATED_SHARE
