"""Question understanding, in one place for the answerers, the coverage judge and the validator.

`understand` reads a question once: its type, the form of answer it asks for, whether it wants a
number or a name, and its focus terms. By surface cues only: cheap, deterministic, explainable.

The type is reported with the answer, and useful to judge its confidence:
- section_based: about a named part of the book (chapter, section, module, lesson...) or about the
  passage the reader selected;
- factual: asks for one fact (who, when, where, how many, which, what year...);
- conceptual: everything else (what is, why, how does, explain, compare).

`question_form` says what shape of sentence answers it (a definition, steps, a reason), which the
extractive answerer prefers among sentences that match the question equally well.

`asks_for_other_words` says whether the reader wants the book's text in other words ("Explain
this in simpler words", "summarise"): the LLM is then asked to reword rather than copy, and the
validator lets a one-sentence answer reword its passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from services.common.text.lists import word_list
from services.common.text.words import NUMBER_WORDS, Analysis, stem


class QueryType(StrEnum):
    CONCEPTUAL = "conceptual"
    FACTUAL = "factual"
    SECTION_BASED = "section_based"


_SECTION_RE = re.compile(
    r"\b(?:chapters?|sections?|modules?|lessons?|units?|appendix|appendices|subsections?"
    r"|(?:this|that|the (?:above|previous|next|following)) (?:page|passage|paragraph|excerpt|part|text))\b",
    re.IGNORECASE,
)
# "How many / much / long ...": asks for a quantity.
_HOW_MUCH = r"how (?:many|much|long|old|far|often|big|large|tall|fast|heavy|high)"
_FACTUAL_RE = re.compile(
    r"^(?:(?:and|so|but|then|also|ok|okay)[,\s]+)?(?:"
    r"who|whom|whose|when|where|which"
    rf"|{_HOW_MUCH}"
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


# What a measurement is asked by: "Within what time windows must ... respond?", "At what rate ...?",
# "Which port ...?" want the figure.
_MEASURE = (
    r"(?:what|which) (?:time ?windows?|time ?frames?|rates?|frequenc(?:y|ies)|latenc(?:y|ies)|ports?"
    r"|resolutions?|temperatures?|voltages?"
    # a measure named with what it measures: "What noise standard deviation ...?", "What timeout ...?"
    r"|(?:[\w-]+ )?(?:standard deviations?|variances?|timeouts?|intervals?|durations?|distances?"
    r"|speeds?|heights?|widths?))"
)
_NUMBER_Q_RE = re.compile(
    rf"\b(?:{_HOW_MUCH}|what (?:percentage|percent|number|amount)|{_MEASURE}|"
    r"(?:what|which) (?:years?|dates?|decades?|century|centuries))\b"
    # "When did ...?" asks for a time; "what should I check when my robot falls" and "when should I
    # use X" (a condition) do not.
    r"|(?:^(?:(?:and|so|but|then)[,\s]+)?|[,;]\s*)when\b(?!\s+(?:should|would|could|can|must|do|to)\b)",
    re.IGNORECASE,
)
_NAME_Q_RE = re.compile(
    r"\b(?:who|whom|whose|where|which|what (?:city|country|company|team|name))\b", re.IGNORECASE
)


# Cues whose answer is a quantity whatever the rest says ("when" may ask for a condition).
_QUANTITY_Q_RE = re.compile(
    rf"\b(?:{_HOW_MUCH}|what (?:percentage|percent|number|amount)|{_MEASURE}|"
    r"(?:what|which) (?:years?|dates?|decades?|century|centuries))\b",
    re.IGNORECASE,
)


def wants_quantity(query: str) -> bool:
    """A question that is answered by a quantity and nothing else ("How many joints does Atlas
    have?"): a number cue ("how many", "what year"; not "when") in a question that asks no second
    question ("What is Zed written in, and how fast does it start?" is not one)."""
    text = " ".join(query.split())
    return bool(_QUANTITY_Q_RE.search(text)) and not _FOLLOWING_QUESTION_RE.search(text)


# The kind of figure a quantity question asks for, where its words say: "How much will it cost?"
# is not answered by "Expected public beta: Q1 2026", nor "How much smaller can the image get?"
# by "Does it involve 5+ decision points?". Each names the figures that answer it (FIGURES).
_MEASURE_CUES = (
    (
        "cost",
        re.compile(
            r"\bhow much (?:\w+ ){0,6}(?:cost|costs|charge|charges|pay|price|spend)\b"
            r"|\bwhat (?:does|will|would) (?:\w+ ){0,4}cost\b",
            re.IGNORECASE,
        ),
    ),
    ("duration", re.compile(r"\bhow long\b|\bhow much time\b", re.IGNORECASE)),
    ("size", re.compile(r"\bhow much (?:free )?(?:ram|memory|disk|storage|space|vram)\b", re.IGNORECASE)),
    (
        "relative",
        re.compile(
            r"\bhow (?:much|many times) (?:faster|slower|smaller|larger|bigger|cheaper|lighter|heavier"
            r"|less|more|lower|higher)\b",
            re.IGNORECASE,
        ),
    ),
)
# A duration: a count of units ("30 seconds", "two months", "2 million years"); "how long" is also
# answered by when it ran until or since ("until 1796", "since the Lower Paleolithic period").
_COUNT = rf"(?:\d|\b(?:{'|'.join(sorted(NUMBER_WORDS, key=len, reverse=True))}|a few|several))"
_DURATION = (
    rf"{_COUNT}[\s-]*(?:(?:hundred|thousand|million|billion)\s+)?"
    r"(?:ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|weeks?|months?|years?"
    r"|decades?|centuries)\b"
)
_SIZE = r"\d\s*(?:[KMGTP]i?B|bytes?|[kmgt]b|kilobytes?|megabytes?|gigabytes?|terabytes?)\b"
FIGURES = {
    "cost": re.compile(r"[$€£¥]\s*\d|\d\s*(?:USD|EUR|GBP|dollars?|euros?|cents?)\b|\bfree\b", re.IGNORECASE),
    "duration": re.compile(rf"{_DURATION}|\b(?:since|until|till)\b", re.IGNORECASE),
    "size": re.compile(_SIZE),
    "relative": re.compile(rf"\d\s*(?:%|percent\b|x\b|×|times\b)|{_SIZE}|{_DURATION}", re.IGNORECASE),
}


def asked_measure(query: str) -> str:
    """The kind of figure a quantity question asks for (a key of FIGURES), or "" when it does not say."""
    return next((kind for kind, cue in _MEASURE_CUES if cue.search(query)), "")


_FIGURE_Q_RE = re.compile(rf"\b(?:how (?:many|much)|{_MEASURE})\b", re.IGNORECASE)


def asks_for_figure(query: str) -> bool:
    """A question no answer without a figure answers: how many or how much, or a measurement
    ("Within what time windows ...?", "Which port ...?"); "how long" may be "until it completes"."""
    return bool(_FIGURE_Q_RE.search(query))


def wants_number(query: str) -> bool:
    """A question answered by a number, a date or a period ("how many", "when", "what year")."""
    return bool(_NUMBER_Q_RE.search(query))


_LIST_Q_RE = re.compile(
    r"^(?:(?:and|so|ok|okay)[,\s]+)?(?:what|which)\s+(?:are|were)\b"
    r"|(?:^(?:(?:and|so|ok|okay)[,\s]+)?which|(?:^(?:(?:and|so|ok|okay)[,\s]+)?|\band\s+)what)"
    r"\s+(?:[\w-]+\s+){0,3}[\w-]*[^\Ws]s\s+(?:do|does|did|should|can|could|are|were|will|must|make)\b"
    r"|\b(?:list|name)\s+(?:the|all|some)\b|\bwhat\s+(?:kinds|types|sorts)\s+of\b"
    r"|\b(?:the|which|what)\s+(?:two|three|four|five|six|seven|eight|nine|ten)\s+(?:[\w-]+\s+)?[\w-]+s\b",
    re.IGNORECASE,
)


# "What are hooks?" asks what hooks are; "What are the three ...?" and "What are some ...?" ask
# which ones.
_BARE_PLURAL_Q_RE = re.compile(
    r"^(?:(?:and|so|ok|okay)[,\s]+)?what\s+(?:are|were)\s+"
    r"(?!(?:the|some|all|any|its|their|your|my|our|these|those)\b)",
    re.IGNORECASE,
)


def wants_list(query: str, form: QuestionForm | None = None) -> bool:
    """A question answered by several things ("What are the three categories ...", "Which
    callbacks does ...", "... and what parts does ...", "List the ..."): a list answers it better
    than any one of its items. ("What class does ..." and "What kind of movement ..." ask for one,
    and "What are hooks in Claude Code?" for a definition: a bare plural of one word, or of names,
    is a term.) `form` is the query's question_form when the caller has it already."""
    text = " ".join(query.split())
    if _BARE_PLURAL_Q_RE.match(text):
        form = form or question_form(text)
        words = form.term.split()
        if form.form is AnswerForm.DEFINITION and (len(words) == 1 or all(w[:1].isupper() for w in words)):
            return False
    return bool(_LIST_Q_RE.search(text))


_COMPARES_RE = re.compile(
    r"\b(?:differences?|differ|differs|compared?|compares|comparison|versus|vs\.?|rather than|instead of)\b",
    re.IGNORECASE,
)


def compares(query: str) -> bool:
    """A question setting two or more things side by side ("What is the difference between a
    revolute and a continuous joint?", "X rather than Y"): the answer names each of them."""
    return bool(_COMPARES_RE.search(query))


_SIDES_RE = re.compile(
    r"\bdifferences?\s+between\s+(?P<between>.+?)\s+and\s+(?P<and>.+)"
    r"|(?P<subject>.+?)\s+differs?\s+from\s+(?P<from>.+)"
    r"|(?P<left>.+?)\s+(?:rather\s+than|instead\s+of|compared?\s+(?:with|to)|versus|vs\.?)\s+(?P<right>.+)",
    re.IGNORECASE,
)

# What follows the second side ("... a continuous joint in URDF", "... Docker for running my
# agent's containers") is the comparison's setting, not the side; "use" frames either side.
_SIDE_CONTEXT_RE = re.compile(r"\s(?:in|for|on|as|when|within|inside|under|to)\s", re.IGNORECASE)
_FRAME_TERMS = frozenset({"use"})


def compared_sides(query: str) -> tuple[frozenset[str], ...]:
    """The two things a comparison sets side by side, each as the content words (stemmed) only its
    side of the question has ("How does AGENTS.md differ from README.md?": agents / readme); empty
    when the question names no two sides."""
    found = _SIDES_RE.search(" ".join(query.split()))
    if not found:
        return ()
    first, second = (side for side in found.groups() if side is not None)
    return own_terms(first, _SIDE_CONTEXT_RE.split(second, maxsplit=1)[0], _FRAME_TERMS)


def own_terms(first: str, second: str, ignored: frozenset[str] = frozenset()) -> tuple[frozenset[str], ...]:
    """The content words (stemmed) each of two phrases has and the other has not, `ignored` aside;
    empty when either has none of its own."""
    left, right = (Analysis(side).term_set - ignored for side in (first, second))
    sides = (left - right, right - left)
    return sides if all(sides) else ()


def wants_name(query: str) -> bool:
    """A question answered by a name (who, where, which ...), when it is not one for a number."""
    return not wants_number(query) and bool(_NAME_Q_RE.search(query))


_OTHER_WORDS_RE = re.compile(
    r"\b(?:explain|simpl(?:er|ify|y put)|in other words|rephrase|paraphrase|summari[sz]e"
    r"|plain (?:english|words|terms)|clarify|elaborate"
    r"|what (?:does|do) (?:this|that|these|those|it) (?:mean|say)|what is meant"
    r"|i (?:don't|do not|can't|cannot) (?:understand|follow|get) (?:this|that|it))\b",
    re.IGNORECASE,
)


def asks_for_other_words(query: str) -> bool:
    """Whether the reader asks for other words ("Explain this in simpler words", "Summarise it"):
    the answer may reword its source rather than quote it."""
    return bool(_OTHER_WORDS_RE.search(query))


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


class AnswerForm(StrEnum):
    """The shape of sentence that answers a question, by its wording: the extractive answerer
    prefers sentences of that shape (services/agent/extractive.py)."""

    DEFINITION = "definition"  # "What is X?": "X is / refers to ..."
    HOW = "how"  # "How do I ...?": steps, "by ...ing", imperatives
    WHY = "why"  # "Why ...?": "because", "to ...", "so that", "allows"
    OTHER = "other"  # anything else (numbers and names have a term of their own)


@dataclass(frozen=True)
class QuestionForm:
    form: AnswerForm
    # For a definition, the words of the term asked about ("What is a ROS 2 topic?": "ROS 2 topic").
    term: str = ""


_DEFINITION_Q_RE = re.compile(
    r"^(?:(?:and|so|ok|okay)[,\s]+)?(?:in\s+[^,?]{1,40},\s+)?(?:what|who)(?:'s|\s+(?:is|are|was|were))\s+(?:an?\s+|the\s+)?"
    r"(?P<term>[^?]{1,80}?)\s*\??$"
    r"|^(?:define|explain what)\s+(?:an?\s+|the\s+)?(?P<defined>[^?]{1,80}?)(?:\s+(?:is|are|means))?\s*[?.]?$"
    r"|^what\s+(?:does|do)\s+(?:an?\s+|the\s+)?(?P<meant>[^?]{1,80}?)\s+(?:mean|stand for)\s*\??$",
    re.IGNORECASE,
)
# "What is the difference / purpose / role ..." asks for more than a definition, and "who was the
# first person to ..." for a fact.
_NOT_DEFINITION_RE = re.compile(
    r"^(?:the\s+)?(?:difference|differences|purpose|role|reason|best|main|key|advantage|benefit|use"
    r"|first|last|second|third|next|previous|most|least|largest|smallest|biggest|oldest|only|name)\b"
    r"|\b(?:difference|between|compared?)\b|\s(?:to|that|who|which|when|where)\s",
    re.IGNORECASE,
)
_HOW_Q_RE = re.compile(
    r"^(?:(?:and|so|ok|okay)[,\s]+)?(?:how\s+(?:do|does|did|can|could|should|would|to|is|are|will)\b"
    r"|what\s+(?:are\s+the\s+)?steps\b|what\s+should\s+i\s+(?:do|check)\b|what\s+can\s+i\s+do\b)",
    re.IGNORECASE,
)
_WHY_Q_RE = re.compile(
    r"^(?:(?:and|so|ok|okay)[,\s]+)?why\b|\b(?:what\s+is\s+the\s+(?:purpose|reason|point|benefit)|what\s+for)\b",
    re.IGNORECASE,
)
_FOLLOWING_QUESTION_RE = re.compile(r",?\s+and\s+(?:what|which|how|why|where|who|when)\b", re.IGNORECASE)
# "the walrus operator in Python", "a handoff in the OpenAI Agents SDK": the term, then the named
# thing it belongs to (every word capitalised or a number), which is the book's context, not the term.
_NAMED_CONTEXT_RE = re.compile(r"\s+in\s+(?:the\s+)?[A-Z][\w.+#-]*(?:\s+(?:[A-Z][\w.+#-]*|\d[\w.]*))*$")
# "What is ROS 2, in a nutshell?", "What is Helm, exactly?": how short an answer to give, not the term.
_TERM_QUALIFIER_RE = re.compile(
    r",\s*(?:in\s+(?:a\s+nutshell|short|brief|simple\s+terms|plain\s+(?:words|english)|general|practice)"
    r"|exactly|briefly|basically|simply|really|actually)$",
    re.IGNORECASE,
)
_MAX_TERM_WORDS = 6


def question_form(query: str) -> QuestionForm:
    """The answer shape a question asks for, by surface cues only (like classify_query)."""
    text = " ".join(query.split())
    if _WHY_Q_RE.search(text):
        return QuestionForm(AnswerForm.WHY)
    if _HOW_Q_RE.search(text):
        return QuestionForm(AnswerForm.HOW)
    definition = _DEFINITION_Q_RE.search(text)
    if definition:
        term = next(group for group in definition.groups() if group is not None)
        # "What is URDF and what parts does it describe?": the term is URDF.
        term = _FOLLOWING_QUESTION_RE.split(term, maxsplit=1)[0].strip(" .,'\"")
        term = _NAMED_CONTEXT_RE.sub("", _TERM_QUALIFIER_RE.sub("", term))
        if term and len(term.split()) <= _MAX_TERM_WORDS and not _NOT_DEFINITION_RE.search(term):
            return QuestionForm(AnswerForm.DEFINITION, term)
    return QuestionForm(AnswerForm.OTHER)


@dataclass(frozen=True)
class Question:
    """A question as every part of the answer path reads it."""

    text: str
    type: QueryType
    form: QuestionForm
    wants_number: bool
    wants_quantity: bool
    # The kind of figure it asks for (asked_measure), "" for any.
    measure: str
    wants_name: bool
    other_words: bool
    wants_list: bool
    compares: bool
    # What a comparison compares (compared_sides).
    sides: tuple[frozenset[str], ...]
    # Its content words, stemmed: what an answer must be about.
    focus: frozenset[str]


def understand(query: str, selected_text: str = "") -> Question:
    """Everything the cues of this module say about a question, read once."""
    form = question_form(query)
    return Question(
        text=query,
        type=classify_query(query, selected_text),
        form=form,
        wants_number=wants_number(query),
        wants_quantity=wants_quantity(query),
        measure=asked_measure(query),
        wants_name=wants_name(query),
        other_words=asks_for_other_words(query),
        wants_list=wants_list(query, form),
        compares=compares(query),
        sides=compared_sides(query),
        focus=Analysis(query).term_set,
    )


_QUESTIONS_RE = re.compile(r"[^?]*\?")


def last_question(query: str) -> str:
    """The question a query asks last: a follow-up searched with the question it follows
    ("What is URDF and what parts does it describe? And how does it compare with SDF?") asks for
    a comparison, not a list. A query of one question is itself."""
    asked = _QUESTIONS_RE.findall(query)
    return asked[-1].strip() if len(asked) > 1 and query.rstrip().endswith("?") else query


# Words every question asks with ("explain", "difference", "use"): not what it is about.
QUESTION_WORDS = frozenset(stem(word) for word in word_list("question_words"))


# A check reads a question's focus twice (the restated frame, then whether the answer addresses
# it), at about a millisecond each: a third of a short answer's validation.
@lru_cache(maxsize=256)
def focus_terms(query: str) -> frozenset[str]:
    """The stemmed words naming what the question is about (its content words less
    QUESTION_WORDS); none when it asks for the selected text or the last answer in other words
    (what it is about is that text)."""
    if asks_for_other_words(query):
        return frozenset()
    return understand(query).focus - QUESTION_WORDS


def focus_share(query: str, answer: str) -> float:
    """The share of the question's focus terms the answer names (1 when it has none)."""
    focus = focus_terms(query)
    return len(focus & Analysis(answer).term_set) / len(focus) if focus else 1.0
