"""Whether an answer answers: the headline figure of `glossator eval answers --questions` and
bench/llm_answers.py.

A question file gives each answerable question `expect`, the few key words of the page's answer.
The rule looks for them in the answer text (citation markers dropped):

- `expect` is cut into items at ";" and "," and at " and " / " or " ("goal, feedback and result" is
  three items), so each item of a list counts alike, however many words it has;
- an item's terms are its content words, stemmed ("joints" finds "joint"; words of PREFIX letters
  or more also match on their first PREFIX letters: "cancellable" finds "cancelled"), and its
  numbers, which must appear exactly ("0.001", "3.10", "2-3" is 2 and 3; "nine" counts as 9);
- an item's coverage is the share of its terms in the answer, and nothing when one of its numbers
  is missing (the number is the answer: "Python 3.10+" is not answered by "Python"); the answer's score is the mean
  coverage over items: correct at CORRECT_SHARE or more, partial at PARTIAL_SHARE or more,
  else wrong;
- a selected-text question asks for other words: an answer that repeats the highlight is at most
  partial;
- an unanswerable question is answered correctly only by declining; an answerable question
  declined, or a call that failed, is wrong.

The thresholds were set on the tune split's answers against a human reading of them
(bench/questions/judged/); the agreement is reported on the report split (README, figures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.agent.citations import MARKER_RE
from services.common.text.repeats import repeats, terms

VERDICTS = ("correct", "partial", "wrong")
CORRECT_SHARE = 0.6
PARTIAL_SHARE = 0.3
PREFIX = 6

_ITEM_SPLIT = re.compile(r"[;,]|\s(?:and|or)\s", re.IGNORECASE)


@dataclass(frozen=True)
class Correctness:
    verdict: str  # one of VERDICTS
    score: float  # mean coverage of expect's items, 0-1 (1 for a right decline, 0 for a wrong one)
    missing: tuple[str, ...] = ()  # expect's terms not found in the answer


def expect_items(expect: str) -> list[list[str]]:
    """`expect` as its items, each the list of its terms; items without a term are dropped."""
    return [item for item in (terms(part) for part in _ITEM_SPLIT.split(expect)) if item]


def judge_correctness(
    expect: str,
    answer: str,
    *,
    answerable: bool,
    declined: bool,
    answered: bool = True,
    selected_text: str = "",
) -> Correctness:
    """The verdict on one answer (see the module docstring for the rule)."""
    if not answered:
        return Correctness("wrong", 0.0)
    if not answerable:
        return Correctness("correct", 1.0) if declined else Correctness("wrong", 0.0)
    if declined:
        return Correctness("wrong", 0.0, tuple(t for item in expect_items(expect) for t in item))
    items = expect_items(expect)
    if not items:
        raise ValueError(f"expect {expect!r} has no term to look for")
    plain = MARKER_RE.sub(" ", answer)
    said = set(terms(plain))
    said |= {t[:PREFIX] for t in said if len(t) >= PREFIX and not t[0].isdigit()}
    coverage = [_coverage(item, said) for item in items]
    score = round(sum(coverage) / len(coverage), 3)
    missing = tuple(dict.fromkeys(t for item in items for t in item if not _found(t, said)))
    verdict = "correct" if score >= CORRECT_SHARE else "partial" if score >= PARTIAL_SHARE else "wrong"
    if verdict == "correct" and selected_text and repeats(plain, selected_text):
        verdict = "partial"
    return Correctness(verdict, score, missing)


def _found(term: str, said: set[str]) -> bool:
    if term in said:
        return True
    return len(term) >= PREFIX and not term[0].isdigit() and term[:PREFIX] in said


def _coverage(item: list[str], said: set[str]) -> float:
    found = [_found(t, said) for t in item]
    if any(t[0].isdigit() and not f for t, f in zip(item, found, strict=True)):
        return 0.0
    return sum(found) / len(found)


def verdict_figures(verdicts: list[str]) -> dict[str, float | None]:
    """The share of each verdict (None when there is no verdict)."""
    if not verdicts:
        return dict.fromkeys(VERDICTS)
    return {v: round(sum(1 for x in verdicts if x == v) / len(verdicts), 4) for v in VERDICTS}
