"""SQuAD v1.1 for the retrieval and answer evaluations: every paragraph a document of its own,
ingested through Ingest into the evaluation's collection."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import ingest
from services.commands.progress import Progress

EVAL_COLLECTION = "eval-squad"


@dataclass(frozen=True)
class SquadQuestion:
    question: str
    document_id: str
    answers: tuple[str, ...] = ()


def load_squad(path: Path) -> tuple[list[retrieval_pb2.Document], list[SquadQuestion]]:
    """Every paragraph as its own text document, and every question with its paragraph's id."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    documents, questions = [], []
    for article in data:
        title = article["title"].replace("_", " ")
        for index, paragraph in enumerate(article["paragraphs"]):
            document_id = f"squad/{article['title']}/{index}"
            documents.append(
                retrieval_pb2.Document(
                    document_id=document_id,
                    source_path=f"{document_id}.txt",
                    content=paragraph["context"],
                    format=retrieval_pb2.DOCUMENT_FORMAT_TEXT,
                    title=title,
                )
            )
            questions.extend(
                SquadQuestion(qa["question"], document_id, tuple(a["text"] for a in qa["answers"]))
                for qa in paragraph["qas"]
            )
    return documents, questions


async def _documents(documents: list[retrieval_pb2.Document], collection: str) -> AsyncIterator:
    yield retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection=collection))
    for document in documents:
        yield retrieval_pb2.IngestRequest(document=document)


async def ingest_squad(
    stub: retrieval_pb2_grpc.RetrievalServiceStub,
    documents: list[retrieval_pb2.Document],
    collection: str,
    progress: Progress | None = None,
) -> tuple[retrieval_pb2.IngestProgress | None, float]:
    """Ingests the paragraphs (idempotent: a second run skips them all); returns summary and seconds."""
    started = time.perf_counter()
    summary = None
    async for reply in ingest(stub, _documents(documents, collection)):
        summary = reply.summary if reply.HasField("summary") else summary
        if progress is not None:
            progress.update(reply.progress.documents_done, f"{reply.progress.documents_unchanged} unchanged")
    return summary, time.perf_counter() - started
