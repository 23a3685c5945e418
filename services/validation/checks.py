"""Hard checks: facts a claim states that must appear in its evidence, whatever the similarity.

Embeddings of "born in 1846" and "born in 1864", or of "won" and "did not win", are nearly the
same vector; these checks look for the exact number, name or negation instead. Two more read
the claim's best passage for its meaning: it must be about the claim's subject (a list item
"Used for streaming data" under "Topics" does not say it of URDF), and it must not state the
opposite of one of the claim's words ("Continuous: Unlimited rotational movement" against "the
continuous can move with limits": a reversed relation). And one reads the chunk's labelled list
items: what one item says is not said of another ("the memory system interprets sensor data" over
"**Processing Unit**: ... interprets sensor data", a swapped attribute).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from services.common.text.words import (
    NUMBER_RE,
    TOKEN_RE,
    Analysis,
    attribution_span,
    capitalised_words,
    normalise_number,
)
from services.validation.evidence import ChunkEvidence, Passage, prefix_negations
from services.validation.subjects import said_of_each


def missing_numbers(claim: Analysis, chunk: ChunkEvidence, named: frozenset[str]) -> list[str]:
    """Numbers, years, dates and quantities of the claim that the chunk never states (`named`:
    those that only complete a name, numbers_in_page_names)."""
    return sorted(claim.numbers - chunk.analysis.numbers - named)


# "ROS 2", "Python 3": a capitalised word and the number that completes the name.
_NAMED_NUMBER_RE = re.compile(r"\b([A-Z][\w.+-]*)\s+(" + NUMBER_RE.pattern + r")(?![\w.,]\d)")


def numbers_in_page_names(claim: Analysis, chunk: ChunkEvidence) -> frozenset[str]:
    """Numbers of the claim that only complete a name the chunk's page or place writes the same
    way: "ROS 2 actions are ideal for tasks that ..." from the list under "When to Use Actions", on
    the page "Introduction to ROS 2 Actions", states no figure 2. (Nothing without a page: the
    chunk's own numbers are its own.)"""
    if chunk.page is chunk.analysis:
        return frozenset()
    page = chunk.page.text.lower()
    named = {
        normalise_number(m.group(2))
        for m in _NAMED_NUMBER_RE.finditer(claim.text)
        if f"{m.group(1)} {m.group(2)}".lower() in page
    }
    # A number the claim also states on its own is a figure all the same.
    alone = {normalise_number(m.group()) for m in NUMBER_RE.finditer(_NAMED_NUMBER_RE.sub("", claim.text))}
    return frozenset(named - alone)


def missing_names(claim: Analysis, chunk: ChunkEvidence) -> list[str]:
    """Capitalised names (people, places, works, months) that neither the chunk nor its page
    mentions ("the feedback message of a ROS 2 action" from a section of the page on ROS 2
    actions that never says "ROS 2" itself).

    Names the statement is attributed to are left to the word count: the author of an opinion
    piece, named in a summary, is rarely in the article's body.
    """
    missing = []
    speaker = attribution_span(claim.text) or (0, 0)
    for name, offset in capitalised_words(claim.text):
        if speaker[0] <= offset < speaker[1]:
            continue
        written = TOKEN_RE.match(claim.text, offset).group()
        if not chunk.page.mentions(name) and written not in missing:
            missing.append(written)
    return missing


# "[specific date]", "[Your Name]": a blank a model leaves where it has no fact (not a marker [3],
# a checkbox [x], an index arr[i] or a Markdown link [text](url)).
_PLACEHOLDER_RE = re.compile(r"(?<![\w\]])\[[^\W\d_][^\W\d]*(?: [^\W\d]+){0,5}\](?!\()")


def placeholders(claim: Analysis, chunk: ChunkEvidence) -> list[str]:
    """Bracketed blanks of the claim that the chunk does not hold as written: the claim leaves the
    fact it is about unsaid ("ROS 2 Humble reaches its end of life on [specific date]")."""
    return [
        m.group()
        for m in _PLACEHOLDER_RE.finditer(claim.text)
        if len(m.group()) > 3 and m.group().lower() not in chunk.analysis.text.lower()
    ]


def numbers_elsewhere(
    claim: Analysis, chunk: ChunkEvidence, context_numbers: frozenset[str], named: frozenset[str]
) -> list[str]:
    """Numbers of the claim that another chunk of the context states and this one does not:
    "Atlas has 360 degrees of freedom", the 360 being a LiDAR's field of view in another passage.
    (Within one chunk a number may come from the next sentence: summaries merge sentences.)"""
    return sorted((claim.numbers & context_numbers) - chunk.analysis.numbers - named)


def numbers_from_other_rows(claim: Analysis, chunk: ChunkEvidence, best: Passage) -> list[str]:
    """Numbers of a claim resting on a table row that the row does not state but the chunk does:
    "Documentation — Points: 25" when 25 is another row's points."""
    if not best.tabular:
        return []
    return sorted((claim.numbers & chunk.analysis.numbers) - best.numbers)


def subject_elsewhere(subject: frozenset[str], best: Passage) -> list[str]:
    """The claim's subject words when its best passage names none of them."""
    return [] if best.is_about(subject) else sorted(subject)


def contradicted_words(claim: Analysis, best: Passage) -> list[str]:
    """Words of the claim (one that negates nothing) that its best passage states the opposite of
    ("limit" against "unlimited", "constraint" against "no constraints"), and the other way round
    ("unpredictable failure modes" against "predictable failure modes")."""
    if claim.negations:
        return []
    stated = best.terms - best.negated
    reversed_here = {word for term, word in prefix_negations(claim).items() if term in stated}
    return sorted(((claim.term_set & best.negated) - best.terms) | reversed_here)


def said_of_another_item(claim: Analysis, chunk: ChunkEvidence) -> list[str]:
    """The label of the list item whose description a claim gives to another item it names:
    "the processing unit stores environmental information" over "**Processing Unit**: Interprets
    sensor data and controls actuators" and "**Memory System**: Stores environmental information".
    The claim is about the item whose label opens it (a label named later, "Pepper focuses on
    ...", names an attribute, not the subject); at least two of its words that its own item does
    not state must all be said of one other item, which the claim does not name."""
    own = next(
        (item for item in chunk.labelled_items if frozenset(claim.terms[: len(item.label)]) == item.label),
        None,
    )
    if own is None:
        return []
    described = frozenset().union(*(item.said for item in chunk.labelled_items))
    elsewhere = (claim.term_set - own.label) & described - own.said
    if len(elsewhere) < 2:
        return []
    for other in chunk.labelled_items:
        if other.label != own.label and not other.label & claim.term_set and elsewhere <= other.said:
            return sorted(other.label)
    return []


def unmatched_negations(claim: Analysis, passages: list[Passage]) -> list[str]:
    """Negations of the claim ("did not", "never") absent from all of its best passages."""
    return sorted(claim.negations) if claim.negations and not any(p.negations for p in passages) else []


@dataclass(frozen=True)
class HardCheckFailures:
    """What a claim states that its evidence does not: numbers, names and negations, by kind (the
    claim model weighs each kind on its own)."""

    numbers: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    negations: list[str] = field(default_factory=list)
    subject: list[str] = field(default_factory=list)
    borrowed_numbers: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    not_both: list[str] = field(default_factory=list)
    other_item: list[str] = field(default_factory=list)

    @property
    def vetoes(self) -> bool:
        """A claim about another subject, the opposite of what its passage says, a blank for its
        fact, or one thing said of two when the chunk says it of one, is not supported however
        many of its words are there (in a longer answer too)."""
        return bool(
            self.subject
            or self.contradicted
            or self.borrowed_numbers
            or self.placeholders
            or self.not_both
            or self.other_item
        )

    @property
    def reasons(self) -> list[str]:
        """Short reasons, one per failed check, e.g. "number 1846 not in context"."""
        return (
            [f"number {n} not in context" for n in self.numbers if n not in self.borrowed_numbers]
            + [f"name '{n}' not in context" for n in self.names]
            + [f"negation '{n}' not in the supporting passages" for n in self.negations]
            + [f"number {n} is from another passage" for n in self.borrowed_numbers]
            + ([f"its passage is not about '{' '.join(self.subject)}'"] if self.subject else [])
            + [f"its passage says the opposite of '{w}'" for w in self.contradicted]
            + [f"{p} is a blank, not a fact" for p in self.placeholders]
            + ([f"'{' '.join(self.not_both)}' is not said of both"] if self.not_both else [])
            + ([f"what it says is said of '{' '.join(self.other_item)}'"] if self.other_item else [])
        )


def hard_check_failures(
    claim: Analysis,
    chunk: ChunkEvidence,
    passages: list[Passage],
    subject: frozenset[str] = frozenset(),
    context_numbers: frozenset[str] = frozenset(),
    question_sides: tuple[frozenset[str], ...] = (),
    *,
    numbers: bool = True,
    names: bool = True,
    negations: bool = True,
) -> HardCheckFailures:
    """The checks that are switched on, run against the chunk (names, numbers) and the claim's
    best passages (negations; subject and opposites: the best one)."""
    named = numbers_in_page_names(claim, chunk) if numbers else frozenset()
    return HardCheckFailures(
        missing_numbers(claim, chunk, named) if numbers else [],
        missing_names(claim, chunk) if names else [],
        unmatched_negations(claim, passages) if negations else [],
        subject_elsewhere(subject, passages[0]),
        sorted(
            set(
                numbers_elsewhere(claim, chunk, context_numbers, named)
                + numbers_from_other_rows(claim, chunk, passages[0])
            )
        )
        if numbers
        else [],
        contradicted_words(claim, passages[0]),
        placeholders(claim, chunk),
        said_of_each(claim, chunk.sentences, question_sides),
        said_of_another_item(claim, chunk),
    )
