"""Domain types of ingestion: what comes in (SourceDocument), what parsing makes of it
(ParsedDocument: a heading tree of blocks) and what goes out (ChunkDraft, a Chunk without indexed_at).

They mirror glossator.v1.Document and glossator.v1.Chunk field for field, so the servicer only copies
attributes; nothing here imports protobuf.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

DEFAULT_MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
"""Larger documents are refused (the retrieval settings' max_document_bytes says the same)."""

DEFAULT_MAX_FRONT_MATTER_BYTES = 64 * 1024
"""Larger front matter fails its document (the retrieval settings' max_front_matter_bytes)."""

MAX_LABEL_CHARS = 200
"""Longest title, heading title or anchor a chunk carries: they are copied into every chunk of
their document or section (a 500 KB H1 made a 0.54 MB page 506 MB on disk). The full heading
stays once, in the text of the chunk it opens."""

MAX_URL_CHARS = 2048
"""Longest document URL (a front matter slug makes it; every chunk carries it)."""

STORED_SIZE_FACTOR = 4
STORED_SIZE_ALLOWANCE = 16 * 1024
"""A document's chunks may store at most this multiple of its characters, plus the allowance
(the labels and URL of a few chunks of a short page)."""

MAX_ERROR_CHARS = 300
"""Longest error message sent to a client about one document or field."""

FORMATS = ("markdown", "mdx", "html", "text", "")
"""Allowed SourceDocument.format values; "" means: guess from the source path's extension."""

_EXTENSION_FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "mdx",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
}


class DocumentError(ValueError):
    """A document that cannot be ingested (binary, too large, broken front matter...).

    Reported for that one document; a run never stops because of it.
    """


def clip_label(label: str) -> str:
    """The label cut to MAX_LABEL_CHARS."""
    return label if len(label) <= MAX_LABEL_CHARS else label[: MAX_LABEL_CHARS - 1] + "…"


def clip_error(message: str) -> str:
    """The message cut to MAX_ERROR_CHARS: an error names a problem, and whatever it quotes (a
    path, a YAML tag, a client's own read_error) must not make it longer than that."""
    if len(message) <= MAX_ERROR_CHARS:
        return message
    return message[: MAX_ERROR_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceDocument:
    """One document as read from disk or fetched, before parsing (mirrors glossator.v1.Document).

    Empty document_id: derived from source_path; empty source_url: mapped from the base URL;
    empty format: guessed from the extension; title: used when the content has none.
    """

    document_id: str = ""
    source_path: str
    source_url: str = ""
    content: str
    format: str = ""
    category_labels: tuple[str, ...] = ()
    title: str = ""

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise DocumentError(f"unknown format {self.format!r}; expected one of {FORMATS}")
        object.__setattr__(self, "category_labels", tuple(self.category_labels))


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceError:
    """A document that could not even be read or fetched (undecodable bytes, HTTP 404...).

    Sources yield it in place of the SourceDocument so that one bad file never stops a run.
    """

    source_path: str
    message: str

    @property
    def document_id(self) -> str:
        return derive_document_id(self.source_path)


BlockKind = Literal["heading", "text", "code", "table"]


@dataclass(frozen=True, slots=True)
class Block:
    """A unit of content the chunker never cuts through unless it must: a heading line, a prose
    block (paragraph, list, quote, admonition), a fenced code block or a table.

    text is Markdown as it goes into the chunk text; headings also carry their level, their plain
    title and, when the source gives one ({#custom-id}, an HTML id attribute), their explicit anchor.
    """

    kind: BlockKind
    text: str
    level: int = 0
    title: str = ""
    anchor: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """The blocks under one heading of level 1-3 (deeper headings stay inside as blocks).

    path holds the heading titles from the top (H1 > H2 > H3); anchor is the innermost heading's
    fragment as the site renders it. The part before the first heading has an empty path and anchor.
    """

    path: tuple[str, ...]
    anchor: str
    blocks: tuple[Block, ...]

    @property
    def title(self) -> str:
        return self.path[-1] if self.path else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FrontMatter:
    """The Docusaurus front matter keys ingestion uses; every other key is ignored."""

    title: str = ""
    slug: str = ""
    id: str = ""
    description: str = ""
    sidebar_position: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedDocument:
    """A document cut along its heading tree, with the identity and URL its chunks will carry."""

    document_id: str
    source_path: str
    url: str
    title: str
    format: str
    sections: tuple[Section, ...]
    category_labels: tuple[str, ...] = ()
    front_matter: FrontMatter = FrontMatter()

    def url_for(self, anchor: str) -> str:
        """Public URL of a section: the document URL with the heading's fragment."""
        return f"{self.url}#{anchor}" if anchor else self.url


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkDraft:
    """A chunk ready to embed and store: every glossator.v1.Chunk field but indexed_at."""

    chunk_id: str
    document_id: str
    source_url: str
    source_path: str
    title: str
    section_path: tuple[str, ...]
    section_title: str
    anchor: str
    chunk_index: int
    total_chunks: int
    text: str
    content_hash: str
    token_count: int


def guess_format(source_path: str) -> str:
    """Format from the file extension (URLs without one are HTML pages); DocumentError if unknown."""
    path = urlsplit(source_path).path if _is_url(source_path) else source_path
    extension = posixpath.splitext(path.lower())[1]
    if extension in _EXTENSION_FORMATS:
        return _EXTENSION_FORMATS[extension]
    if _is_url(source_path):
        return "html"
    raise DocumentError(
        f"cannot tell the format of {source_path!r} from its extension; "
        f"give one of {', '.join(sorted(set(_EXTENSION_FORMATS.values())))}"
    )


def derive_document_id(source_path: str) -> str:
    """The document id when none is given: the normalised source path.

    File paths become relative POSIX paths (backslashes turned to slashes, "./", doubled and
    trailing slashes and "." segments removed, ".." resolved; case kept, since file systems are
    case-sensitive). URLs get a lower-case scheme and host and lose their fragment. So
    "./intro//setup.md", "intro\\setup.md" and "intro/setup.md" are one document, and the id stays
    readable in listings and filters.
    """
    path = source_path.strip()
    if _is_url(path):
        parts = urlsplit(path)
        return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))
    path = path.replace("\\", "/")
    normalised = posixpath.normpath(path).lstrip("/")
    if normalised in ("", "."):
        raise DocumentError(f"source path {source_path!r} does not name a document")
    return normalised


_URL_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def _is_url(path: str) -> bool:
    return bool(_URL_PATTERN.match(path))
