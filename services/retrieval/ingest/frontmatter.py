"""YAML front matter of Markdown/MDX documents (the block between two `---` lines at the very top).

Broken front matter is a DocumentError naming the line and the YAML problem, never a crash: a
book with one bad page still ingests the rest. Front matter is loaded within bounds (size here,
then no anchors or aliases, a node count and a depth, see bounded_yaml), and errors name a value's
type, never the value: a page must not cost more to reject than it is worth.
"""

from __future__ import annotations

import datetime
import re

from services.retrieval.ingest.bounded_yaml import YamlRefused, load_bounded_yaml
from services.retrieval.ingest.documents import DEFAULT_MAX_FRONT_MATTER_BYTES, DocumentError, FrontMatter

_OPENING = re.compile(r"\A---[ \t]*\r?\n")
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_MAX_NUMBER_BITS = 256


def split_front_matter(
    content: str, *, max_bytes: int = DEFAULT_MAX_FRONT_MATTER_BYTES
) -> tuple[FrontMatter, str]:
    """Returns the front matter and the body after it (the whole content when there is none)."""
    opening = _OPENING.match(content)
    if not opening:
        return FrontMatter(), content
    closing = _CLOSING.search(content, opening.end())
    if not closing:
        raise DocumentError("front matter opened with '---' on line 1 is never closed by a '---' line")
    raw = content[opening.end() : closing.start()]
    # A character is at most 4 UTF-8 bytes: only near the limit is the exact size worth computing.
    if len(raw) > max_bytes // 4 and (size := len(raw.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise DocumentError(f"front matter is {size:,} bytes, over the limit of {max_bytes:,} bytes")
    body = content[closing.end() :].lstrip("\r\n")
    return _front_matter(_load(raw)), body


def _load(raw: str) -> dict:
    try:
        data = load_bounded_yaml(raw, first_line=2)  # line 1 is the opening '---'
    except YamlRefused as refusal:
        raise DocumentError(f"front matter {refusal}") from refusal
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DocumentError(f"front matter must be a mapping of keys to values, not {type(data).__name__}")
    return data


def _front_matter(data: dict) -> FrontMatter:
    return FrontMatter(
        title=_text(data, "title"),
        slug=_text(data, "slug"),
        id=_text(data, "id"),
        description=_text(data, "description"),
        sidebar_position=_number(data, "sidebar_position"),
    )


def _text(data: dict, key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float | datetime.date):
        raise DocumentError(f"front matter {key!r} must be text, not {type(value).__name__}")
    # YAML reads `0xfff...` as an int: past Python's int-to-text limit str() raises ValueError (and
    # it costs quadratic time below it). A title that long is no number anyone meant.
    if isinstance(value, int) and value.bit_length() > _MAX_NUMBER_BITS:
        raise DocumentError(
            f"front matter {key!r} is a number of {value.bit_length():,} bits: quote it as text"
        )
    return str(value).strip()


def _number(data: dict, key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DocumentError(f"front matter {key!r} must be a number, not {type(value).__name__}")
    try:
        return float(value)
    except ValueError as error:
        raise DocumentError(f"front matter {key!r} must be a number, not text") from error
    except OverflowError as error:  # an int of hundreds of digits
        raise DocumentError(f"front matter {key!r} must be a number a float can hold") from error
