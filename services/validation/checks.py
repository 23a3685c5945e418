"""Hard checks: facts a claim states that must appear in its evidence, whatever the similarity.

Embeddings of "born in 1846" and "born in 1864", or of "won" and "did not win", are nearly the
same vector; these checks look for the exact number, name or negation instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.common.text.words import TOKEN_RE, Analysis, attribution_span, capitalised_words
from services.validation.evidence import ChunkEvidence, Passage


def missing_numbers(claim: Analysis, chunk: ChunkEvidence) -> list[str]:
    """Numbers, years, dates and quantities of the claim that the chunk never states."""
    return sorted(claim.numbers - chunk.analysis.numbers)


def missing_names(claim: Analysis, chunk: ChunkEvidence) -> list[str]:
    """Capitalised names (people, places, works, months) the chunk never mentions.

    Names the statement is attributed to are left to the word count: the author of an opinion
    piece, named in a summary, is rarely in the article's body.
    """
    missing = []
    speaker = attribution_span(claim.text) or (0, 0)
    for name, offset in capitalised_words(claim.text):
        if speaker[0] <= offset < speaker[1]:
            continue
        written = TOKEN_RE.match(claim.text, offset).group()
        if not chunk.analysis.mentions(name) and written not in missing:
            missing.append(written)
    return missing


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

    @property
    def reasons(self) -> list[str]:
        """Short reasons, one per failed check, e.g. "number 1846 not in context"."""
        return (
            [f"number {n} not in context" for n in self.numbers]
            + [f"name '{n}' not in context" for n in self.names]
            + [f"negation '{n}' not in the supporting passages" for n in self.negations]
        )


def hard_check_failures(
    claim: Analysis,
    chunk: ChunkEvidence,
    passages: list[Passage],
    *,
    numbers: bool = True,
    names: bool = True,
    negations: bool = True,
) -> HardCheckFailures:
    """The checks that are switched on, run against the chunk (names, numbers) and the claim's
    best passages (negations)."""
    return HardCheckFailures(
        missing_numbers(claim, chunk) if numbers else [],
        missing_names(claim, chunk) if names else [],
        unmatched_negations(claim, passages) if negations else [],
    )
