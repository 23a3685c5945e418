"""The sparse lexical encoder: tokens, stable term ids, BM25 term weights."""

from __future__ import annotations

import os
import subprocess
import sys

from services.retrieval.sparse import SparseEncoder, term_id, tokenize
from services.retrieval.store import SparseVector


def test_tokenize_lowercases_normalises_and_drops_stop_words():
    assert tokenize("What is the Café in ZÜRICH?") == ["café", "zürich"]
    assert tokenize("snake_case and CamelCase") == ["snak", "cas", "camelcas"]
    assert tokenize("ﬁne-tuning in 1846") == ["fin", "tun", "1846"]  # NFKC folds the ligature
    assert tokenize("the of and to") == []
    assert tokenize("studies studied") == ["studi", "studi"]  # the text layer's one stemmer


def test_term_ids_are_stable_unsigned_32_bit_and_independent_of_hash_seed():
    assert 0 <= term_id("qdrant") < 2**32
    code = "from services.retrieval.sparse import term_id; print(term_id('qdrant'), term_id('café'))"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {"585620190 3603235629\n"}  # pinned: a change would orphan every stored sparse vector


def weight(vector: SparseVector, term: str) -> float:
    return dict(zip(vector.indices, vector.values, strict=True))[term_id(term)]


def test_document_weights_saturate_with_term_frequency():
    encoder = SparseEncoder()
    weights = {}
    for repeats in (1, 2, 8):
        vector = encoder.encode_document(" ".join(["vector"] * repeats + ["filler"] * (10 - repeats)))
        weights[repeats] = weight(vector, "vector")
    assert weights[1] < weights[2] < weights[8] < encoder.k1 + 1
    assert weights[2] < 2 * weights[1]


def test_longer_documents_weigh_each_occurrence_less():
    encoder = SparseEncoder()
    short = encoder.encode_document("qdrant engine")
    long = encoder.encode_document("qdrant engine " + " ".join(f"word{i}" for i in range(300)))
    assert weight(long, "qdrant") < weight(short, "qdrant")


def test_vectors_are_sorted_and_unique_and_queries_weigh_each_term_once():
    encoder = SparseEncoder()
    document = encoder.encode_document("Search search SEARCH engines rank documents")
    assert list(document.indices) == sorted(set(document.indices))
    assert len(document.indices) == 4
    query = encoder.encode_query("search the search engine")
    assert query.indices == tuple(sorted({term_id("search"), term_id("engin")}))
    assert query.values == (1.0, 1.0)
    assert encoder.encode_query("what is it").indices == ()
