"""The backend-neutral search plan: filters, the request batch, and the relevance scale."""

from __future__ import annotations

import pytest

from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import SearchFilters, SearchMode
from services.retrieval.store.query import (
    DENSE_OVERSAMPLING,
    MIN_PREFETCH,
    RRF_BEST_SCORE,
    SPARSE_WEIGHT,
    HasId,
    Match,
    MatchAny,
    Prefix,
    Where,
    filters_where,
    leg_score_requests,
    relevance,
    rrf_score,
    search_requests,
)


def test_filters_become_conditions_on_indexed_fields():
    assert filters_where(None) is None
    assert filters_where(SearchFilters()) is None
    where = filters_where(
        SearchFilters(
            source_url_prefix="https://ex.org/docs/",
            source_path_prefix="guide/",
            section="  Getting   STARTED ",
            document_ids=("a", "b"),
        )
    )
    assert where == Where(
        must=(
            Prefix("source_url", "https://ex.org/docs/"),
            Prefix("source_path", "guide/"),
            Match("section_keys", "getting started"),
            MatchAny("document_id", ("a", "b")),
        )
    )


def test_hybrid_is_one_fused_request_and_its_legs_score_only_the_ranked_points():
    sparse = SparseEncoder().encode_query("install linux")
    fused = search_requests(SearchMode.HYBRID, [1.0, 0.0], sparse, 5, None)
    assert [leg.using for leg in fused.legs] == ["dense", "sparse"]
    assert fused.fusion is not None and fused.fusion.weights == (1.0, SPARSE_WEIGHT)
    assert fused.with_payload
    assert all(leg.limit == MIN_PREFETCH for leg in fused.legs)
    assert fused.limit == 5
    dense_scores, sparse_scores = leg_score_requests(fused, ["p1", "p2"])
    for request, leg in zip((dense_scores, sparse_scores), fused.legs, strict=True):
        assert request.legs[0].vector == leg.vector and request.fusion is None
        assert (request.limit, request.with_payload) == (2, False)
        assert request.where == Where(must=(HasId(("p1", "p2")),))
    dense_only = search_requests(SearchMode.DENSE, [1.0, 0.0], sparse, 7, None)
    assert dense_only.fusion is None and dense_only.legs[0].limit == 7


def test_dense_legs_search_the_quantized_vectors_oversampled_and_sparse_legs_do_not():
    sparse = SparseEncoder().encode_query("install linux")
    fused = search_requests(SearchMode.HYBRID, [1.0, 0.0], sparse, 5, None)
    assert [leg.oversampling for leg in fused.legs] == [DENSE_OVERSAMPLING, None]
    rescored = leg_score_requests(fused, ["p1"])
    assert [r.legs[0].oversampling for r in rescored] == [DENSE_OVERSAMPLING, None]
    assert (
        search_requests(SearchMode.DENSE, [1.0, 0.0], sparse, 5, None).legs[0].oversampling
        == DENSE_OVERSAMPLING
    )
    assert search_requests(SearchMode.SPARSE, [1.0, 0.0], sparse, 5, None).legs[0].oversampling is None


def test_hybrid_relevance_anchors():
    assert relevance(SearchMode.HYBRID, RRF_BEST_SCORE) == pytest.approx(1.0)
    assert relevance(SearchMode.HYBRID, rrf_score(1, SPARSE_WEIGHT, 1)) == pytest.approx(0.79, abs=0.01)
    assert relevance(SearchMode.HYBRID, rrf_score(1, 1.0, 1)) == pytest.approx(0.61, abs=0.01)
    # min_relevance 0.3 keeps a chunk only the dense leg returned down to 4th place, not 5th.
    assert (
        relevance(SearchMode.HYBRID, rrf_score(1, 1.0, 4))
        >= 0.3
        > relevance(SearchMode.HYBRID, rrf_score(1, 1.0, 5))
    )
    assert relevance(SearchMode.HYBRID, 0.0) == 0.0


def test_single_leg_relevance_scales():
    assert relevance(SearchMode.DENSE, 1.0) == 1.0
    assert relevance(SearchMode.DENSE, 0.0) == 0.5
    assert relevance(SearchMode.DENSE, -1.0) == 0.0
    assert relevance(SearchMode.SPARSE, 10.0) == pytest.approx(0.5)
    assert relevance(SearchMode.SPARSE, 0.0) == 0.0
    assert 0.9 < relevance(SearchMode.SPARSE, 200.0) < 1.0
