"""How far a word a claim adds is from every word of its chunk: a synonym, or something new.

A summary rewords its source: "struck" for "hit", "departing" for "leaving", "vacation" for
"holiday". Counted as words the chunk never states, these look like the words a fabricated
sentence adds ("celebrated his death", "a private burial"). The local embedding model's input
word vectors tell them apart without running the model: the nearest words of "struck" among
its 30,522 word pieces are "strikes", "hit" and "smacked", those of "departing" "departure" and
"leaving". A word's vector is the mean of its pieces' vectors, as the tokenizer cuts it; a claim
word's distance is 1 less its cosine with the nearest content word of the chunk.

The vectors are the model's export's (services.common.model_files: written from the packaged
weights, as the image bakes it), read by memory map: no model is loaded, and a check stays a few
milliseconds.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

from services.common.embedding import configured_export, export_tokenizer


@cache
def _embedding_rows() -> np.ndarray:
    """The word-piece embedding matrix, memory-mapped."""
    return np.load(configured_export().word_vectors_path, mmap_mode="r")


@lru_cache(maxsize=1 << 16)
def word_vector(word: str) -> np.ndarray:
    """The word's unit vector: the mean of its word pieces' input embeddings."""
    ids = export_tokenizer().encode(word, add_special_tokens=False).ids
    vector = np.asarray(_embedding_rows()[ids], dtype=np.float32).mean(axis=0)
    return vector / max(float(np.linalg.norm(vector)), 1e-9)


def unit_vectors(words: list[str]) -> np.ndarray:
    """One row per word (an empty (0, d) matrix for none)."""
    if not words:
        return np.empty((0, _embedding_rows().shape[1]), dtype=np.float32)
    return np.stack([word_vector(word) for word in words])


def distances(words: list[str], vectors: np.ndarray) -> list[float]:
    """For each word, 1 less its cosine with the nearest of `vectors` (1 when there are none)."""
    if not words or not len(vectors):
        return [1.0] * len(words)
    # einsum, not @: a matrix product goes to OpenBLAS, whose threads spin against whatever else
    # runs on 2 shared cores (15 ms against einsum's 0.4 ms for 3 words and 2,000 chunk words).
    nearest = np.einsum("id,jd->ij", unit_vectors(words), vectors).max(axis=1)
    return [float(np.clip(1.0 - similarity, 0.0, 1.0)) for similarity in nearest]
