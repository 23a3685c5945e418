"""Recognising answers that decline to answer: they claim nothing, so they cannot be ungrounded."""

from __future__ import annotations

import re

SOURCE = r"(?:book|text|context|documentation|docs|sources?|passages?|documents?|excerpts?|material|chapter)"
REFUSAL_PATTERNS = [
    r"\bi (?:do not|don't|cannot|can't|could not|couldn't) (?:know|tell|say|find|answer|determine)\b",
    r"\bi(?: am|'m) (?:not sure|unable|not able)\b",
    r"\b(?:i|we)(?: am| are|'m|'re| was| were)? (?:unable|not able) to (?:find|answer|determine|locate)\b",
    r"\b(?:cannot|can't|could not|couldn't) be (?:answered|determined|found)\b",
    rf"(?:\bnot|n't|\bnever|\bnowhere) (?:\w+ly )?(?:mentioned|covered|discussed|addressed|described|stated|"
    rf"specified|explained|found|included|provided|given|defined|listed|named)\b.*\b{SOURCE}\b",
    rf"\b{SOURCE}\b.*\b(?:does not|doesn't|do not|don't|did not|didn't) (?:\w+ly )?(?:cover|mention|say|"
    rf"contain|discuss|address|describe|provide|specify|include|explain|state|answer|tell|define|list|name|"
    rf"give|offer|detail|identify|spell out|go into)\b",
    rf"\bnone of (?:the |these |those |its |my )?(?:retrieved |provided )?{SOURCE}\b",
    rf"\b{SOURCE}\b.*\b(?:is|are) silent\b",
    rf"\b{SOURCE}\b.*\b(?:provides?|gives?|contains?|has|have|offers?) no\b",
    r"\b(?:there is|there's|i have|i found) (?:no|not enough|insufficient) information\b",
    rf"\b(?:no|not enough|insufficient) information\b.*\b{SOURCE}\b",
    rf"\bnothing (?:in|about)\b.*\b{SOURCE}\b",
    rf"\boutside (?:the scope|of)\b.*\b{SOURCE}\b",
    # What a decline adds: where the book comes closest ("Nearby, the book covers: ROS 2 > Topics [1]").
    rf"^nearby,? (?:the )?{SOURCE} covers\b",
]
REFUSAL_RE = re.compile("|".join(f"(?:{pattern})" for pattern in REFUSAL_PATTERNS), re.IGNORECASE)


def is_refusal(sentence: str) -> bool:
    """Whether a sentence says the answer is unknown or not covered ("The book does not cover X")."""
    return bool(REFUSAL_RE.search(sentence.replace("’", "'")))
