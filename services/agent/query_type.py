"""What kind of question was asked: reported with the answer, and useful to judge its confidence.

- section_based: about a named part of the book (chapter, section, module, lesson...) or about the
  passage the reader selected;
- factual: asks for one fact (who, when, where, how many, which, what year...);
- conceptual: everything else (what is, why, how does, explain, compare).
"""

from __future__ import annotations

import re
from enum import StrEnum


class QueryType(StrEnum):
    CONCEPTUAL = "conceptual"
    FACTUAL = "factual"
    SECTION_BASED = "section_based"


_SECTION_RE = re.compile(
    r"\b(?:chapters?|sections?|modules?|lessons?|units?|appendix|appendices|subsections?"
    r"|(?:this|that|the (?:above|previous|next|following)) (?:page|passage|paragraph|excerpt|part|text))\b",
    re.IGNORECASE,
)
_FACTUAL_RE = re.compile(
    r"^(?:(?:and|so|but|then|also|ok|okay)[,\s]+)?(?:"
    r"who|whom|whose|when|where|which"
    r"|how (?:many|much|long|old|far|often|big|large|tall|fast|heavy|high)"
    r"|what (?:year|date|time|day|month|century|decade|age|number|percentage|percent|amount|size"
    r"|color|colour|type|kind|name|is the name|was the name|city|country|language)"
    r"|in (?:what|which) (?:year|city|country|century|decade|month|language)"
    r"|name (?:the|a|one)|list (?:the|all)"
    r")\b",
    re.IGNORECASE,
)
# Cues that ask for one fact wherever they stand: "In the 1850s, how many ...".
_FACTUAL_ANYWHERE_RE = re.compile(
    r"\b(?:how many|how much|(?:what|which) year|(?:what|which) date|by whom|to whom)\b", re.IGNORECASE
)
# "What is the difference ...", "what was the role ..." ask for more than one fact.
_CONCEPTUAL_CUE_RE = re.compile(
    r"\b(?:why|explain|difference|compare|describe|role of|purpose of)\b", re.IGNORECASE
)


def classify_query(query: str, selected_text: str = "") -> QueryType:
    """Classifies by surface cues only: cheap, deterministic, and explainable."""
    text = " ".join(query.split())
    if selected_text.strip() or _SECTION_RE.search(text):
        return QueryType.SECTION_BASED
    if (_FACTUAL_RE.search(text) or _FACTUAL_ANYWHERE_RE.search(text)) and not _CONCEPTUAL_CUE_RE.search(
        text
    ):
        return QueryType.FACTUAL
    return QueryType.CONCEPTUAL
