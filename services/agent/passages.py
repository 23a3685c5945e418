"""The passages a run retrieved, as objects: what every answerer, the judge and the validator read.

A Search result becomes a numbered `Passage` once (its chunk, its place in the book, and the
sentences Search scored against the query, by their offsets in the chunk text). The model is
shown a rendering of them (`render`); nothing is ever parsed back out of that text, so the
offline answerer, the coverage judge and the fallback read exactly what was retrieved, and a
sentence's score is found by its span, not by matching its text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from glossator.v1 import common_pb2

NOTHING_MATCHED = "No passages of the book matched this search."


@dataclass(frozen=True)
class Passage:
    """One retrieved chunk under its source number."""

    number: int
    heading: str  # its place in the book: "Title > Section > Subsection"
    text: str
    chunk_id: str = ""
    url: str = ""
    # Similarity to the query of the chunk's prose sentences, by (start, end) in `text`, as
    # Search scored them (empty when it scored none: sparse mode, or an older index).
    sentence_scores: Mapping[tuple[int, int], float] = field(default_factory=dict, repr=False)
    # 0-based position of the chunk in its document.
    position: int = 0
    # Fetched because it goes on with blocks another passage announces (tools.py): only its
    # section's title is quoted, in that passage's list; it answers nothing on its own.
    continues: bool = False

    @classmethod
    def of(cls, number: int, scored: common_pb2.ScoredChunk, *, continues: bool = False) -> Passage:
        chunk = scored.chunk
        return cls(
            number=number,
            heading=heading_of(chunk),
            text=chunk.text.strip(),
            chunk_id=chunk.chunk_id,
            url=chunk.source_url,
            sentence_scores=_spans_in_stripped(chunk.text, scored.sentences),
            position=chunk.chunk_index,
            continues=continues,
        )

    def render(self) -> str:
        """How the model sees it: `[n] heading (url)`, then the text."""
        url = f" ({self.url})" if self.url else ""
        return f"[{self.number}] {self.heading}{url}\n{self.text}"


def heading_of(chunk: common_pb2.Chunk) -> str:
    """The source's place in the book, e.g. "Title > Section > Subsection" (a title is not repeated)."""
    path = list(chunk.section_path)
    if chunk.title and (not path or path[0] != chunk.title):
        path.insert(0, chunk.title)
    return " > ".join(path) or chunk.source_path or "untitled"


def render(passages: Iterable[Passage]) -> str:
    """A search's passages as the model reads them (the retrieval tool's output)."""
    blocks = [passage.render() for passage in passages]
    return "\n\n".join(blocks) if blocks else NOTHING_MATCHED


def _spans_in_stripped(
    text: str, sentences: Iterable[common_pb2.SentenceScore]
) -> dict[tuple[int, int], float]:
    """Search's sentence offsets, moved to the chunk text without its leading whitespace."""
    shift = len(text) - len(text.lstrip())
    return {(s.start - shift, s.end - shift): s.similarity for s in sentences}
