"""Fixtures of the integration tests that several modules share."""

from __future__ import annotations

import pytest

from glossator.v1 import retrieval_pb2
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.retrieval.ingest import read_folder
from tests.integration.test_retrieval import BASE_URL, ROOT


@pytest.fixture(scope="module")
async def book(suite):
    """The suite with the project's docs ingested into the default collection (once per module;
    an ingest of unchanged documents skips them all)."""
    options = retrieval_pb2.IngestOptions(base_url=BASE_URL)
    async for _ in ingest(suite.retrieval, ingest_requests(options, async_iter(read_folder(ROOT / "docs")))):
        pass
    return suite
