"""Retrieval quality of the vector store on SQuAD: recall@1/5/10 and MRR@10 per search mode.

Every paragraph of the split is indexed as its own document (title = the article title, underscores
read as spaces) through the store, with the indexing recipe the service uses
(store.indexing.passage_text, SparseEncoder); then every question is asked in dense, sparse and
hybrid mode, and a hit counts when the question's own paragraph is among the top k.

    .venv/bin/python bench/retrieval_quality.py [--limit N] [--json] [--backend edge|qdrant]
        [--runtime onnx-int8|onnx-float32|torch] [--half all|tune|report]

--half asks only the questions of every other article (tune: the 1st, 3rd, ...; report: the 2nd,
4th, ...; every paragraph is indexed either way): fit search parameters on one, report the other.

Paragraph and question embeddings are cached under --cache-dir (default /tmp/glossator-bench), keyed
by the texts and the model, so tuning runs do not embed again. The data is read from ../shared/eval
and never copied into the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench.harness import HALVES
from services.common.embedding import EmbeddingSettings, LocalEmbeddingModel, load_embedding_model
from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import (
    Chunk,
    ChunkPoint,
    DocumentRecord,
    SearchMode,
    VectorStore,
    open_store,
)
from services.retrieval.store.indexing import passage_text

DEFAULT_SQUAD = Path(__file__).resolve().parents[2] / "shared/eval/squad/dev-v1.1.dev-split.json"
COLLECTION = "squad"
KS = (1, 5, 10)
MIN_RELEVANCE = 0.3
UPSERT_BATCH = 256


@dataclass(frozen=True)
class Paragraph:
    title: str
    index: int
    text: str

    @property
    def document_id(self) -> str:
        return f"{self.title}#{self.index}"


@dataclass(frozen=True)
class Question:
    text: str
    paragraph: int  # position in the paragraph list
    article: int


def load_squad(path: Path) -> tuple[list[Paragraph], list[Question]]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    paragraphs: list[Paragraph] = []
    questions: list[Question] = []
    for number, article in enumerate(data):
        title = article["title"].replace("_", " ")
        for index, paragraph in enumerate(article["paragraphs"]):
            questions.extend(Question(qa["question"], len(paragraphs), number) for qa in paragraph["qas"])
            paragraphs.append(Paragraph(title, index, paragraph["context"]))
    return paragraphs, questions


def spread(items: list[Question], limit: int | None) -> list[Question]:
    """An evenly spaced sample, so a limited run still covers every article."""
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def cached_embeddings(
    model: LocalEmbeddingModel, texts: list[str], cache_dir: Path, label: str
) -> np.ndarray:
    digest = hashlib.sha256("\x1f".join([model.name, *texts]).encode()).hexdigest()[:16]
    path = cache_dir / f"{label}-{digest}.npy"
    if path.exists():
        return np.load(path)
    started = time.perf_counter()
    vectors = model.embed(texts)
    print(f"embedded {len(texts)} {label} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def index(
    store: VectorStore,
    model: LocalEmbeddingModel,
    paragraphs: list[Paragraph],
    vectors: np.ndarray,
    encoder: SparseEncoder,
) -> None:
    store.ensure_collection(COLLECTION, model.dimensions, model.name)
    now = datetime.now(UTC)
    points = []
    for paragraph, vector in zip(paragraphs, vectors, strict=True):
        content_hash = hashlib.sha256(paragraph.text.encode()).hexdigest()
        chunk = Chunk(
            chunk_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"squad://{paragraph.document_id}/0/{content_hash}")),
            document_id=paragraph.document_id,
            source_url=f"squad://{paragraph.title}#{paragraph.index}",
            source_path=f"{paragraph.title}/{paragraph.index:03d}",
            title=paragraph.title,
            section_path=(),
            section_title="",
            anchor="",
            chunk_index=0,
            total_chunks=1,
            text=paragraph.text,
            content_hash=content_hash,
            token_count=0,
            indexed_at=now,
        )
        sparse = encoder.encode_document(passage_text(chunk.title, chunk.section_path, chunk.text))
        points.append(ChunkPoint(chunk, vector, sparse))
    for start in range(0, len(points), UPSERT_BATCH):
        store.upsert_chunks(COLLECTION, points[start : start + UPSERT_BATCH])
    for point in points:
        chunk = point.chunk
        record = DocumentRecord(
            chunk.document_id,
            chunk.source_path,
            chunk.source_url,
            chunk.title,
            chunk.content_hash,
            (chunk.chunk_id,),
            now,
        )
        store.put_document_record(COLLECTION, record)
    store.optimize(COLLECTION)


def evaluate(
    store: VectorStore,
    paragraphs: list[Paragraph],
    questions: list[Question],
    question_vectors: np.ndarray,
    encoder: SparseEncoder,
) -> dict[str, dict[str, float]]:
    report: dict[str, dict[str, float]] = {}
    sparse_queries = [encoder.encode_query(q.text) for q in questions]
    for mode in SearchMode:
        ranks: list[int] = []
        kept: list[bool] = []
        latencies: list[float] = []
        for question, dense, sparse in zip(questions, question_vectors, sparse_queries, strict=True):
            started = time.perf_counter()
            hits = store.search(COLLECTION, dense, sparse, mode, max(KS))
            latencies.append((time.perf_counter() - started) * 1000)
            gold = paragraphs[question.paragraph].document_id
            rank = next((i for i, h in enumerate(hits, 1) if h.chunk.document_id == gold), 0)
            ranks.append(rank)
            kept.append(rank > 0 and hits[rank - 1].relevance >= MIN_RELEVANCE)
        report[mode.value] = summarise(ranks, kept, latencies)
    return report


def summarise(ranks: list[int], kept: list[bool], latencies: list[float]) -> dict[str, float]:
    n = len(ranks)
    figures = {f"recall@{k}": sum(1 for r in ranks if 0 < r <= k) / n for k in KS}
    figures["mrr@10"] = sum(1 / r for r in ranks if r) / n
    figures[f"recall@10_min_relevance_{MIN_RELEVANCE}"] = sum(kept) / n
    ordered = sorted(latencies)
    figures["search_ms_p50"] = statistics.median(ordered)
    figures["search_ms_p99"] = ordered[min(n - 1, int(0.99 * n))]
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", type=Path, default=DEFAULT_SQUAD)
    parser.add_argument("--limit", type=int, default=None, help="ask at most N questions (evenly spread)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--backend", choices=("edge", "qdrant"), default="edge")
    parser.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "glossator-bench")
    parser.add_argument("--runtime", choices=("onnx-int8", "onnx-float32", "torch"), default=None)
    parser.add_argument("--half", choices=tuple(HALVES), default="all", help="whose questions to ask")
    args = parser.parse_args(argv)

    settings = EmbeddingSettings()
    model = load_embedding_model(args.runtime or settings.runtime, settings)
    paragraphs, questions = load_squad(args.squad)
    questions = spread([q for q in questions if q.article % 2 in HALVES[args.half]], args.limit)
    encoder = SparseEncoder()
    paragraph_vectors = cached_embeddings(
        model, [passage_text(p.title, (), p.text) for p in paragraphs], args.cache_dir, "squad-paragraphs"
    )
    question_vectors = cached_embeddings(
        model, [q.text for q in questions], args.cache_dir, "squad-questions"
    )

    with tempfile.TemporaryDirectory(prefix="glossator-squad-") as directory:
        # qdrant: qdrant-client's local mode, the same requests a server gets, executed in Python.
        store = open_store(args.backend, edge_dir=directory, qdrant_url=":memory:")
        try:
            started = time.perf_counter()
            index(store, model, paragraphs, paragraph_vectors, encoder)
            index_s = time.perf_counter() - started
            report = evaluate(store, paragraphs, questions, question_vectors, encoder)
        finally:
            store.close()

    meta = {
        "backend": args.backend,
        "runtime": model.runtime,
        "half": args.half,
        "paragraphs": len(paragraphs),
        "questions": len(questions),
        "index_s": index_s,
    }
    if args.json:
        print(json.dumps({**report, "meta": meta}, indent=2))
        return 0
    print(
        f"{len(questions)} questions ({args.half}) over {len(paragraphs)} paragraphs, "
        f"backend {args.backend}, {model.runtime}"
    )
    header = ["mode", "r@1", "r@5", "r@10", "MRR@10", f"r@10 rel>={MIN_RELEVANCE}", "p50 ms", "p99 ms"]
    print("  ".join(f"{h:>10}" for h in header))
    for mode, f in report.items():
        cells = [f[k] for k in ("recall@1", "recall@5", "recall@10", "mrr@10")]
        cells.append(f[f"recall@10_min_relevance_{MIN_RELEVANCE}"])
        row = [f"{mode:>10}", *(f"{c:10.3f}" for c in cells)]
        row += [f"{f['search_ms_p50']:10.2f}", f"{f['search_ms_p99']:10.2f}"]
        print("  ".join(row))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
