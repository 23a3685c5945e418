"""Fixtures of the ingestion tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from services.common.embedding import local_embedding_model


@pytest.fixture(scope="session")
def count_tokens() -> Callable[[str], int]:
    """all-MiniLM-L6-v2's tokenizer, as the retrieval service counts chunk tokens."""
    return local_embedding_model().count_tokens
