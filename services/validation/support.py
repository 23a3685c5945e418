"""The verdict on one claim against one chunk: lexical coverage, semantic similarity, hard checks.

Two regimes, chosen per answer:
- a direct answer (one sentence) must be supported phrase by phrase: every content word inside
  one passage, and every adjacent pair of them there in the same order and close together
  (GroundingConfig.phrase_gap). A one-line answer quotes or closely rephrases its
  source; when its words come from different places it is usually a recombination, the commonest
  hallucination of short answers. A rephrasing that keeps every word but changes their order is
  accepted when the embedding model finds it very close to the passage.
- the claims of a longer answer may paraphrase: a claim is supported while its unsupported mass
  (words absent from the chunk, plus a fraction of the words found only outside its best passage,
  plus a weight per failed hard check) stays under an allowance. Here semantic similarity only
  ranks chunks and feeds the reported score: on HaluEval summaries, crediting close paraphrases
  let fabrications through (-3 points).
A direct answer fails on any hard check (number, name, negation): one wrong date is the whole
answer. In a longer answer a failed check weighs like missing words instead: summaries name
people and days their source leaves to its byline and dateline, and a veto on those cost 3.5
points of balanced accuracy on HaluEval summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from services.validation.checks import hard_check_failures
from services.validation.evidence import ChunkEvidence, PassageMatch
from services.validation.text import Analysis, capitalised_words, is_content_word, stem

if TYPE_CHECKING:
    from services.validation.grounding import GroundingConfig


@dataclass(frozen=True)
class LexicalEvidence:
    """What words and hard checks say about a claim against one chunk (no embedding needed)."""

    chunk_index: int
    match: PassageMatch
    failures: list[str]
    unsupported_mass: float
    coverage: float


@dataclass(frozen=True)
class ChunkVerdict:
    chunk_index: int
    supported: bool
    score: float
    reason: str


def has_checkable_content(claim: Analysis) -> bool:
    """False for "Yes." or "That is right.": nothing in them can be looked up."""
    return bool(claim.term_set or claim.numbers or capitalised_words(claim.text))


def lexical_evidence(
    claim: Analysis, chunk: ChunkEvidence, ranked: list[PassageMatch], config: GroundingConfig
) -> LexicalEvidence:
    """Evidence from the chunk's passages ranked best first (see evidence.rank_passages)."""
    match = ranked[0]
    failures = hard_check_failures(
        claim,
        chunk,
        [m.passage for m in ranked[: config.negation_passages]],
        numbers=config.check_numbers,
        names=config.check_names,
        negations=config.check_negations,
    )
    mass = len(match.novel_terms) + config.outside_passage_weight * len(match.outside_terms)
    coverage = max(0.0, 1.0 - mass / len(claim.term_set)) if claim.term_set else 1.0
    return LexicalEvidence(chunk.index, match, failures, mass, coverage)


def wants_similarity(evidence: LexicalEvidence, direct: bool) -> bool:
    """Longer answers always use similarity; a direct answer only when words alone cannot decide
    (all its words are there, but not as the same phrases)."""
    if not direct:
        return True
    return not evidence.failures and not evidence.match.novel_terms and not evidence.match.phrase_supported


def judge_claim(
    claim: Analysis,
    evidence: LexicalEvidence,
    similarity: float | None,
    allowance: float | None,
    config: GroundingConfig,
) -> ChunkVerdict:
    """allowance: the unsupported mass this claim may carry; None for a direct answer."""
    score = evidence.coverage
    if similarity is not None:
        score = (1 - config.semantic_weight) * score + config.semantic_weight * max(0.0, similarity)
    if allowance is None:
        if evidence.failures:
            return ChunkVerdict(evidence.chunk_index, False, score, "; ".join(evidence.failures))
        supported = evidence.match.phrase_supported or (
            similarity is not None
            and not evidence.match.novel_terms
            and similarity >= config.direct_rephrase_similarity
        )
    else:
        mass = evidence.unsupported_mass + config.hard_check_weight * len(evidence.failures)
        supported = mass < min(allowance, config.paraphrase_max_share * max(1, len(claim.term_set)))
    if supported:
        reason = "supported"
    else:
        reason = "; ".join(evidence.failures) or _describe_gap(claim, evidence.match)
    return ChunkVerdict(evidence.chunk_index, supported, score, reason)


def _describe_gap(claim: Analysis, match: PassageMatch) -> str:
    written = _written_forms(claim)
    if match.novel_terms:
        words = sorted(match.novel_terms, key=claim.terms.index)
        return "not in context: " + ", ".join(written[term] for term in words[:5])
    if match.outside_terms:
        words = sorted(match.outside_terms, key=claim.terms.index)
        return "not in the same passage: " + ", ".join(written[term] for term in words[:5])
    if match.missing_bigrams:
        first, second = min(match.missing_bigrams, key=lambda pair: claim.terms.index(pair[0]))
        return f"'{written[first]} {written[second]}' not stated together in context"
    return "not supported closely enough"


def _written_forms(claim: Analysis) -> dict[str, str]:
    """Stem -> the word as the claim wrote it, for readable reasons."""
    forms: dict[str, str] = {}
    for word in claim.words:
        if is_content_word(word):
            forms.setdefault(stem(word), word)
    return forms
