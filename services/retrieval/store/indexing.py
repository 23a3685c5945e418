"""The indexing recipe: which text of a chunk its dense and sparse vectors are made from.

Both vectors read the same passage text: the document title and the chunk's heading path as one
header line, then the chunk text. The header puts the topic into every chunk of a long section
("Install > Linux" chunks match "install on linux"). Queries are used as typed: the embedding model
reads the raw query and the sparse encoder its terms (SparseEncoder.encode_query). The fusion
weights in store.query were tuned with exactly this recipe.
"""

from __future__ import annotations

from collections.abc import Sequence


def passage_text(title: str, section_path: Sequence[str], text: str) -> str:
    """`Title > H1 > H2` then a newline and the text; a heading equal to the one before it is dropped."""
    header: list[str] = []
    for part in (title, *section_path):
        part = " ".join(part.split())
        if part and (not header or header[-1].casefold() != part.casefold()):
            header.append(part)
    return f"{' > '.join(header)}\n{text}" if header else text
