"""The verdict on one claim against one chunk: lexical coverage, semantic similarity, hard checks.

Two regimes, chosen per answer:
- a direct answer (one sentence) must be supported phrase by phrase: every content word inside
  one passage, and every adjacent pair of them there in the same order and close together
  (GroundingConfig.phrase_gap). A one-line answer quotes or closely rephrases its
  source; when its words come from different places it is usually a recombination, the commonest
  hallucination of short answers. A rephrasing that keeps every word but changes their order is
  accepted when the embedding model finds it very close to the passage. Any failed hard check
  (number, name, negation) fails it: one wrong date is the whole answer. When the question asks
  for the passage in other words ("Explain this in simpler words"), a reworded sentence ("a
  crucial concept" for "a critical concept") is accepted on the same closeness to the passage, the
  hard checks still failing it.
- the claims of a longer answer may paraphrase: the trained claim model
  (services.validation.claim_model) turns the same word evidence into a doubt, and the answer's
  claims share a doubt budget. Summaries name people and days their source
  leaves to its byline, so there a failed hard check is evidence to weigh, not a veto; in an
  answer to a question a number or a name the book lacks fails its claim all the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from services.common.text.words import Analysis
from services.validation.claim_model import ClaimModel, claim_features
from services.validation.evidence import PassageMatch
from services.validation.grounding_config import GroundingConfig
from services.validation.lexical import LexicalEvidence


@dataclass(frozen=True)
class ChunkVerdict:
    chunk_index: int
    supported: bool
    score: float
    reason: str
    doubt: float = 0.0  # −log P(supported) by the claim model; 0 for a direct answer


def wants_similarity(evidence: LexicalEvidence, direct: bool, rephrasing: bool) -> bool:
    """Only a direct answer whose words alone cannot decide (all there, but not as the same
    phrases, or reworded where the question asks for that) is compared by embedding; the claim
    model of longer answers reads words only."""
    if not direct or evidence.failures or evidence.match.phrase_supported:
        return False
    return rephrasing or not evidence.match.novel_terms


def judge_claim(
    claim: Analysis,
    evidence: LexicalEvidence,
    similarity: float | None,
    model: ClaimModel | None,
    config: GroundingConfig,
    *,
    rephrasing: bool,
    answering: bool = False,
) -> ChunkVerdict:
    """model: the claim model for a claim of a longer answer; None for a direct answer.
    rephrasing: the question asks for other words (services.common.text.question.asks_for_other_words).
    answering: the answer answers a question (a summary answers none)."""
    if model is not None:
        doubt = model.doubt(claim_features(claim, evidence))
        if not could_paraphrase(claim, evidence, config) or (answering and _states_unknown_facts(evidence)):
            return ChunkVerdict(
                evidence.chunk_index, False, math.exp(-doubt), describe_gap(claim, evidence), math.inf
            )
        supported = doubt <= model.doubt_budget
        reason = "supported" if supported else describe_gap(claim, evidence)
        return ChunkVerdict(evidence.chunk_index, supported, math.exp(-doubt), reason, doubt)
    score = evidence.coverage
    if similarity is not None:
        score = (1 - config.semantic_weight) * score + config.semantic_weight * max(0.0, similarity)
    if evidence.failures:
        return ChunkVerdict(evidence.chunk_index, False, score, "; ".join(evidence.failures))
    supported = evidence.match.phrase_supported or (
        similarity is not None
        and (rephrasing or not evidence.match.novel_terms)
        and similarity >= config.direct_rephrase_similarity
    )
    return ChunkVerdict(
        evidence.chunk_index, supported, score, "supported" if supported else describe_gap(claim, evidence)
    )


def _states_unknown_facts(evidence: LexicalEvidence) -> bool:
    """A number or a name the chunk and its page never state, in an answer to a question: "Honda
    ASIMO was developed from 1986 to 2018" where the book gives 2000-2018. A summary may name the
    people and days its source leaves to its byline, so for it these stay evidence to weigh; an
    answer's facts come from the book or nowhere."""
    return bool(evidence.hard_checks.numbers or evidence.hard_checks.names)


def could_paraphrase(claim: Analysis, evidence: LexicalEvidence, config: GroundingConfig) -> bool:
    """False when most of the claim is what the chunk never says (its unsupported mass, with a
    unit per failed hard check, reaches paraphrase_max_share of its content words): "Its keeper was
    Thomas Walsh" rephrases nothing. HaluEval's fabricated summary sentences are long and mostly
    supported, so the claim model never learnt this about short ones; it is a rule, not a weight."""
    if evidence.hard_checks.vetoes:
        return False
    mass = evidence.unsupported_mass + len(evidence.failures)
    return mass < config.paraphrase_max_share * max(1, len(claim.term_set))


def describe_gap(claim: Analysis, evidence: LexicalEvidence) -> str:
    """Why the evidence falls short, in words a reader can check."""
    return "; ".join(evidence.failures) or _describe_gap(claim, evidence.match)


def _describe_gap(claim: Analysis, match: PassageMatch) -> str:
    # A claim word may stand in the match as the chunk's form of it (evidence.derived_partner).
    written = claim.written_forms

    def place(term: str) -> int:
        return claim.terms.index(term) if term in written else len(claim.terms)

    if match.novel_terms:
        words = sorted(match.novel_terms, key=place)
        return "not in context: " + ", ".join(written.get(term, term) for term in words[:5])
    if match.outside_terms:
        words = sorted(match.outside_terms, key=place)
        return "not in the same passage: " + ", ".join(written.get(term, term) for term in words[:5])
    if match.missing_bigrams:
        first, second = min(match.missing_bigrams, key=lambda pair: place(pair[0]))
        return f"'{written.get(first, first)} {written.get(second, second)}' not stated together in context"
    return "not supported closely enough"
