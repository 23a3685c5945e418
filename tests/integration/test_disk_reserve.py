"""A data directory with less free space than the reserve, through a real retrieval server (the
reserve set above the free space, as a full disk would leave it): the start says so, Search goes on,
Ingest is RESOURCE_EXHAUSTED "disk full" before it writes anything."""

from __future__ import annotations

import shutil

import grpc
import pytest
from structlog.testing import capture_logs

from glossator.v1 import retrieval_pb2
from services.retrieval.config import RetrievalSettings
from tests.integration.test_ingest_hardening import FINE, INDEXED, ingest, rejection, serving, top_hit

HARBOUR = retrieval_pb2.Document(source_path="harbour.md", content="# Harbour\n\nShips berth along the quay.")


async def test_a_full_disk_serves_read_only(tmp_path):
    async with serving(RetrievalSettings(port=0, data_dir=tmp_path, min_free_disk_bytes=0)) as retrieval:
        assert (await ingest(retrieval, "books", [FINE]))["lighthouse.md"].status == INDEXED

    beyond_free = shutil.disk_usage(tmp_path).free + 2**40
    full = RetrievalSettings(port=0, data_dir=tmp_path, min_free_disk_bytes=beyond_free)
    with capture_logs() as logs:
        async with serving(full) as retrieval:
            assert (await top_hit(retrieval, "books")).chunk.source_path == "lighthouse.md"
            options = retrieval_pb2.IngestOptions(collection="books")
            refused = await rejection(
                retrieval,
                retrieval_pb2.IngestRequest(options=options),
                retrieval_pb2.IngestRequest(document=HARBOUR),
            )
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert refused.details().startswith("disk full")
            stats = await retrieval.Stats(retrieval_pb2.StatsRequest(collection="books"), timeout=10)
            assert stats.documents == 1, "nothing was written"
            assert (await top_hit(retrieval, "books")).chunk.source_path == "lighthouse.md"
    assert [entry for entry in logs if entry["event"] == "disk_full_read_only"]


@pytest.mark.parametrize("reserve", [0, 2**20])
async def test_with_room_above_the_reserve_ingest_writes(tmp_path, reserve):
    async with serving(
        RetrievalSettings(port=0, data_dir=tmp_path, min_free_disk_bytes=reserve)
    ) as retrieval:
        assert (await ingest(retrieval, "books", [FINE]))["lighthouse.md"].status == INDEXED
