"""Hard checks: facts a claim states that must appear in its evidence, whatever the similarity.

Embeddings of "born in 1846" and "born in 1864", or of "won" and "did not win", are nearly the
same vector; these checks look for the exact number, name or negation instead.
"""

from __future__ import annotations

from services.validation.evidence import ChunkEvidence, Passage
from services.validation.text import TOKEN_RE, Analysis, attribution_span, capitalised_words


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


def hard_check_failures(
    claim: Analysis,
    chunk: ChunkEvidence,
    passages: list[Passage],
    *,
    numbers: bool = True,
    names: bool = True,
    negations: bool = True,
) -> list[str]:
    """Short reasons, one per failed check, e.g. "number 1846 not in context"."""
    reasons = []
    if numbers:
        reasons += [f"number {n} not in context" for n in missing_numbers(claim, chunk)]
    if names:
        reasons += [f"name '{n}' not in context" for n in missing_names(claim, chunk)]
    if negations:
        reasons += [
            f"negation '{n}' not in the supporting passages" for n in unmatched_negations(claim, passages)
        ]
    return reasons
