"""Prose sentences' stored, quantised vectors."""

from __future__ import annotations

import numpy as np

from services.retrieval.store import SentenceVectors
from services.retrieval.store.layout import encode_sentences, sentence_scores


def test_quantised_sentence_vectors_give_back_the_cosine_within_a_hundredth():
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = rng.normal(size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    spans = tuple((i * 10, i * 10 + 9) for i in range(5))
    payload = encode_sentences(SentenceVectors(spans, vectors))
    assert len(payload["sentence_vectors"]) < 5 * 384 * 4 / 2  # int8 in base64, not float32
    scores = sentence_scores(payload, query)
    assert [(s.start, s.end) for s in scores] == list(spans)
    assert np.allclose([s.similarity for s in scores], vectors @ query, atol=0.01)
    assert sentence_scores(payload, None) == () and sentence_scores({}, query) == ()
