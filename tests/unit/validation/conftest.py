"""Fixtures of the validation domain tests: the real embedding model, loaded once per session."""

from __future__ import annotations

import numpy as np
import pytest

from services.common.embedding import local_embedding_model
from services.validation.grounding import OfflineChecker
from services.validation.grounding_config import GroundingConfig


class CountingModel:
    """The real model, counting embed calls and texts (to check batching and lazy embedding)."""

    def __init__(self, model) -> None:
        self._model = model
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self._model.embed(texts)


@pytest.fixture(scope="session")
def embedding_model():
    return local_embedding_model()


@pytest.fixture
def counting_model(embedding_model) -> CountingModel:
    return CountingModel(embedding_model)


@pytest.fixture
def checker(counting_model) -> OfflineChecker:
    return OfflineChecker(GroundingConfig(), counting_model)
