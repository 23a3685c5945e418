"""YAML front matter of Markdown/MDX documents (the block between two `---` lines at the very top).

Broken front matter is a DocumentError naming the line and the YAML problem, never a crash: a
book with one bad page still ingests the rest.
"""

from __future__ import annotations

import datetime
import re

import yaml

from services.retrieval.ingest.documents import DocumentError, FrontMatter

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: ~10x faster
_OPENING = re.compile(r"\A---[ \t]*\r?\n")
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)


def split_front_matter(content: str) -> tuple[FrontMatter, str]:
    """Returns the front matter and the body after it (the whole content when there is none)."""
    opening = _OPENING.match(content)
    if not opening:
        return FrontMatter(), content
    closing = _CLOSING.search(content, opening.end())
    if not closing:
        raise DocumentError("front matter opened with '---' on line 1 is never closed by a '---' line")
    raw = content[opening.end() : closing.start()]
    body = content[closing.end() :].lstrip("\r\n")
    return _front_matter(_load(raw)), body


def _load(raw: str) -> dict:
    try:
        data = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +2: 0-based, after '---'
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise DocumentError(f"broken front matter{where}: {problem}") from error
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
    return str(value).strip()


def _number(data: dict, key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise DocumentError(f"front matter {key!r} must be a number, not {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError) as error:
        raise DocumentError(f"front matter {key!r} must be a number, not {value!r}") from error
