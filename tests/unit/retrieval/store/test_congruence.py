"""Both backends, fed the same real data, must rank alike: 200 SQuAD paragraphs and their questions.

Exact agreement is not required everywhere: the edge engine scores in float32 and may break ties
differently from qdrant-client's local mode, which computes in NumPy/Python.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.common.embedding import local_embedding_model
from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import Chunk, ChunkPoint, SearchMode, VectorStore
from services.retrieval.store.indexing import passage_text
from tests.unit.retrieval.store.helpers import COLLECTION, make_store

SQUAD = Path(__file__).resolve().parents[5] / "shared" / "eval" / "squad" / "dev-v1.1.dev-split.json"
PARAGRAPHS = 200

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning"),
    pytest.mark.skipif(not SQUAD.exists(), reason="needs ../shared/eval/squad"),
]


@pytest.fixture(scope="module")
def squad_sample():
    """Every tenth paragraph (so all articles appear) with its first question, embedded once."""
    rows = []
    for article in json.loads(SQUAD.read_text(encoding="utf-8"))["data"]:
        title = article["title"].replace("_", " ")
        rows += [
            (title, i, p["context"], p["qas"][0]["question"]) for i, p in enumerate(article["paragraphs"])
        ]
    rows = rows[::10][:PARAGRAPHS]
    model = local_embedding_model()
    passages = model.embed([passage_text(title, (), text) for title, _, text, _ in rows])
    questions = model.embed([q for *_, q in rows])
    return rows, passages, questions


def build(store: VectorStore, rows, passages) -> None:
    model = local_embedding_model()
    encoder = SparseEncoder()
    store.ensure_collection(COLLECTION, model.dimensions, model.name)
    now = datetime.now(UTC)
    points = []
    for n, ((title, index, text, _), vector) in enumerate(zip(rows, passages, strict=True)):
        chunk = Chunk(
            chunk_id=f"00000000-0000-4000-8000-{n:012d}",
            document_id=f"{title}#{index}",
            source_url=f"squad://{title}#{index}",
            source_path=f"{title}/{index:03d}",
            title=title,
            section_path=(),
            section_title="",
            anchor="",
            chunk_index=0,
            total_chunks=1,
            text=text,
            content_hash="",
            token_count=0,
            indexed_at=now,
        )
        points.append(ChunkPoint(chunk, vector, encoder.encode_document(passage_text(title, (), text))))
    store.upsert_chunks(COLLECTION, points)
    store.optimize(COLLECTION)


def test_edge_and_qdrant_client_rank_the_same_real_data_alike(squad_sample, tmp_path):
    rows, passages, questions = squad_sample
    encoder = SparseEncoder()
    stores = {backend: make_store(backend, tmp_path) for backend in ("edge", "qdrant")}
    try:
        for store in stores.values():
            build(store, rows, passages)
        report = {}
        for mode in SearchMode:
            top1_same = top5_same = 0
            recall5 = dict.fromkeys(stores, 0)
            for (title, index, _, question), vector in zip(rows, questions, strict=True):
                sparse = encoder.encode_query(question)
                ranked = {
                    backend: [h.chunk.document_id for h in store.search(COLLECTION, vector, sparse, mode, 5)]
                    for backend, store in stores.items()
                }
                top1_same += ranked["edge"][:1] == ranked["qdrant"][:1]
                top5_same += ranked["edge"] == ranked["qdrant"]
                for backend, ids in ranked.items():
                    recall5[backend] += f"{title}#{index}" in ids
            n = len(rows)
            report[mode.value] = {
                "top1_agreement": top1_same / n,
                "top5_identical": top5_same / n,
                **{f"recall@5_{b}": r / n for b, r in recall5.items()},
            }
        print("\nbackend congruence on", len(rows), "SQuAD paragraphs:", json.dumps(report, indent=1))
        for mode, figures in report.items():
            assert figures["top1_agreement"] >= 0.98, mode
            assert abs(figures["recall@5_edge"] - figures["recall@5_qdrant"]) <= 0.01, mode
            assert figures["recall@5_edge"] >= 0.8, mode  # a real ranking, not two agreeing failures
    finally:
        for store in stores.values():
            store.close()
