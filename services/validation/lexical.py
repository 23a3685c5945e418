"""What the words of a claim and the hard checks say about it against one chunk: the evidence both
regimes of services.validation.support judge, and the claim model's features are read from."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.common.text.words import Analysis, capitalised_words
from services.validation.checks import HardCheckFailures, hard_check_failures
from services.validation.evidence import ChunkEvidence, PassageMatch
from services.validation.grounding_config import GroundingConfig


@dataclass(frozen=True)
class LexicalEvidence:
    """What words and hard checks say about a claim against one chunk (no embedding needed)."""

    chunk_index: int
    match: PassageMatch
    hard_checks: HardCheckFailures
    unsupported_mass: float  # words absent from the chunk, plus a fraction of those outside the passage
    coverage: float
    chunk: ChunkEvidence = field(repr=False, compare=False)

    def novel_distance(self, claim: Analysis) -> float:
        """The claim's words the chunk never states, each weighed by how far it is from the
        chunk's nearest word: a synonym ("struck" for "hit") weighs less than a new fact."""
        written = claim.written_forms
        return self.chunk.distance_of([written[term] for term in sorted(self.match.novel_terms)])

    @property
    def failures(self) -> list[str]:
        return self.hard_checks.reasons


def has_checkable_content(claim: Analysis) -> bool:
    """False for "Yes." or "That is right.": nothing in them can be looked up."""
    return bool(claim.term_set or claim.numbers or capitalised_words(claim.text))


def lexical_evidence(
    claim: Analysis,
    chunk: ChunkEvidence,
    ranked: list[PassageMatch],
    config: GroundingConfig,
    subject: frozenset[str] = frozenset(),
    context_numbers: frozenset[str] = frozenset(),
    question_sides: tuple[frozenset[str], ...] = (),
) -> LexicalEvidence:
    """Evidence from the chunk's passages ranked best first (see evidence.rank_passages), for a
    claim about `subject` (see services.validation.subjects)."""
    match = ranked[0]
    hard_checks = hard_check_failures(
        claim,
        chunk,
        [m.passage for m in ranked[: config.negation_passages]],
        subject,
        context_numbers,
        question_sides,
        numbers=config.check_numbers,
        names=config.check_names,
        negations=config.check_negations,
    )
    mass = len(match.novel_terms) + config.outside_passage_weight * len(match.outside_terms)
    coverage = max(0.0, 1.0 - mass / len(claim.term_set)) if claim.term_set else 1.0
    return LexicalEvidence(chunk.index, match, hard_checks, mass, coverage, chunk)
