"""Word vectors: a claim word the chunk never states weighs by how far it is from the chunk's words."""

from __future__ import annotations

import pytest

from services.common.text.words import Analysis
from services.validation.evidence import ChunkEvidence, rank_passages
from services.validation.grounding_config import GroundingConfig
from services.validation.lexical import lexical_evidence
from services.validation.word_vectors import distances, unit_vectors

CHUNK = "Police said the officer was hit by a car while leaving the station on holiday."


def novel_distance(claim: str) -> float:
    chunk = ChunkEvidence(0, CHUNK, window_sentences=1, phrase_gap=2)
    analysis = Analysis(claim)
    evidence = lexical_evidence(analysis, chunk, rank_passages(analysis, chunk, 3), GroundingConfig())
    return evidence.novel_distance(analysis)


def test_a_synonym_is_nearer_than_a_new_fact():
    chunk_words = unit_vectors(["hit", "holiday"])
    synonyms = distances(["struck", "vacation"], chunk_words)
    new_facts = distances(["celebrated", "burial"], chunk_words)
    assert max(synonyms) < min(new_facts)


def test_a_word_the_chunk_states_is_at_no_distance_and_an_empty_chunk_at_the_most():
    assert distances(["hit"], unit_vectors(["hit"])) == [pytest.approx(0.0, abs=1e-6)]
    assert distances(["hit"], unit_vectors([])) == [1.0]


def test_a_reworded_claim_is_less_novel_than_one_adding_facts():
    quoted = novel_distance("The officer was hit by a car.")
    reworded = novel_distance("The officer was struck by a car.")
    fabricated = novel_distance("The officer was arrested by a senator.")
    assert quoted == 0.0
    assert 0.0 < reworded < 1.0 < fabricated
