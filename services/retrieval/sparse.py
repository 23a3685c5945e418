"""Sparse lexical vectors for Qdrant's IDF modifier: BM25 with the IDF left to the engine.

A chunk's vector holds, per term, BM25's saturated and length-normalised term frequency; the
collection's sparse vector is created with `Modifier.IDF`, so Qdrant multiplies each query term by
the IDF it measures over the collection's own chunks. The dot product is then exactly BM25, and the
IDF stays right as documents come and go without re-encoding anything.

Term ids are the first four bytes of a BLAKE2b digest of the term: stable across processes and
machines (Python's own `hash` is salted per process), and collisions among the few hundred thousand
terms of a book are negligible in a 2^32 space.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from services.common.text.lists import word_list
from services.common.text.words import stem
from services.retrieval.store.base import SparseVector

# Runs of letters and digits; anything else splits words: "don't" -> "don", "t"; "snake_case" -> "snake", "case".
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# Function words carry no topic; questions' wh-words and auxiliaries are among them. The list and
# the stemmer make the stored vectors: a change to either needs a new ingest RULES_VERSION.
STOP_WORDS = word_list("search_stopwords")


def tokenize(text: str) -> list[str]:
    """Lower-cased, NFKC-normalised words without stop words, stemmed."""
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return [stem(w) for w in words if w not in STOP_WORDS]


def term_id(term: str) -> int:
    """Stable unsigned 32-bit id of a term (Qdrant's sparse index is keyed by u32)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "little")


@dataclass(frozen=True)
class SparseEncoder:
    """BM25 term weights without IDF.

    k1 saturates repeated terms; b scales how much a long chunk is penalised against
    avg_doc_terms, a fixed typical chunk length in (non-stop-word) terms: the encoder is
    stateless, so a chunk's vector never changes when other chunks are added.
    """

    k1: float = 1.2
    b: float = 0.75
    avg_doc_terms: float = 100.0

    def encode_document(self, text: str) -> SparseVector:
        counts = Counter(term_id(t) for t in tokenize(text))
        length_norm = self.k1 * (1.0 - self.b + self.b * sum(counts.values()) / self.avg_doc_terms)
        return _vector({tid: tf * (self.k1 + 1.0) / (tf + length_norm) for tid, tf in counts.items()})

    def encode_query(self, text: str) -> SparseVector:
        """Each distinct query term once: a repeated word in a question is rarely emphasis."""
        return _vector(dict.fromkeys((term_id(t) for t in tokenize(text)), 1.0))


def _vector(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices=tuple(indices), values=tuple(weights[i] for i in indices))
