"""One entry point from a SourceDocument to its heading tree: checks, format dispatch, title, URL."""

from __future__ import annotations

import dataclasses
import posixpath
import re

from services.retrieval.ingest.documents import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_MAX_FRONT_MATTER_BYTES,
    MAX_URL_CHARS,
    Block,
    DocumentError,
    FrontMatter,
    ParsedDocument,
    SourceDocument,
    clip_label,
    derive_document_id,
    guess_format,
)
from services.retrieval.ingest.headings import build_sections
from services.retrieval.ingest.html import parse_html
from services.retrieval.ingest.markdown import parse_markdown
from services.retrieval.ingest.urls import document_url, link_problem, strip_number_prefix

# Control characters other than tab/newline/form feed/carriage return, and U+FFFD (what a lenient
# decoder puts in place of bytes that are not text).
_NON_TEXT = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_NON_TEXT_SHARE = 0.01
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# An inline resource (RFC 2397: data:[<type>][;<parameter>],<data>): pixels as text, nothing a
# reader asks about. Each part's class excludes the character that ends it, so a match is linear.
_DATA_URI = re.compile(r"\bdata:(?:[\w.+-]+/[\w.+-]+)?(?:;[\w.+=-]+)*,[\w+/=%.~-]*", re.ASCII)
# "[1]", "[2, 3]" written in a page: an answer quoting it would carry a citation marker the page
# chose (pointing at another source, or at none). Not a link's text ("[1](url)") nor a reference.
_CITATION_LIKE = re.compile(r"\[[ \t]*\d{1,4}(?:[ \t]*[,;][ \t]*\d{1,4})*[ \t]*\](?![(\[:])")
# A Markdown link (text, then its url up to a space or the closing parenthesis); linear as in
# services/common/text/display.py: no part can take the "[" that starts another try.
_MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\[\]\n]*)\]\(\s*((?:[^()\[\]\s]|\([^()\[\]\s]*\))*)[^()\[\]\n]*\)")


def parse_document(
    doc: SourceDocument,
    base_url: str = "",
    *,
    max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    max_front_matter_bytes: int = DEFAULT_MAX_FRONT_MATTER_BYTES,
) -> ParsedDocument:
    """Parses a document into sections of blocks; DocumentError says why one cannot be ingested."""
    _check_content(doc.content, max_bytes)
    document_format = doc.format or guess_format(doc.source_path)
    front_matter = FrontMatter()
    page_title = ""
    if document_format in ("markdown", "mdx"):
        front_matter, blocks = parse_markdown(doc.content, max_front_matter_bytes=max_front_matter_bytes)
    elif document_format == "html":
        page_title, blocks = parse_html(doc.content)
    else:
        blocks = _text_blocks(doc.content)
    url = document_url(doc.source_path, document_format, front_matter, base_url, doc.source_url)
    if problem := link_problem(url):  # a source path like "javascript:x.md" makes such a URL
        raise DocumentError(f"the document's URL {problem}")
    if len(url) > MAX_URL_CHARS:
        raise DocumentError(
            f"the document's URL is {len(url):,} characters, over the limit of {MAX_URL_CHARS:,}"
        )
    blocks = [_bounded_labels(_indexed_text(block)) for block in blocks]
    sections = build_sections(blocks)
    first_h1 = next((block.title for block in blocks if block.kind == "heading" and block.level == 1), "")
    return ParsedDocument(
        document_id=doc.document_id or derive_document_id(doc.source_path),
        source_path=doc.source_path,
        url=url,
        title=clip_label(
            front_matter.title or first_h1 or doc.title or page_title or _title_from_path(doc.source_path)
        ),
        format=document_format,
        sections=sections,
        category_labels=doc.category_labels,
        front_matter=front_matter,
    )


def _check_content(content: str, max_bytes: int) -> None:
    # A character is at most 4 UTF-8 bytes: only near the limit is the exact size worth computing.
    if len(content) * 4 > max_bytes and (size := len(content.encode("utf-8", "surrogatepass"))) > max_bytes:
        raise DocumentError(f"document is {size:,} bytes, over the limit of {max_bytes:,} bytes")
    if "\x00" in content:
        raise DocumentError("content holds NUL characters: binary data, not text")
    non_text = len(_NON_TEXT.findall(content))
    if non_text > max(8, _NON_TEXT_SHARE * len(content)):
        raise DocumentError(
            f"content looks binary: {non_text:,} of {len(content):,} characters are control characters "
            "or undecodable bytes"
        )


def _indexed_text(block: Block) -> Block:
    """The block as it is indexed: data URIs removed (a 32 KB inline image is one 32 KB word, whose
    chunk the validation service refused); in prose, citation-like "[n]" removed and links that
    are not http(s) or relative (javascript:...) reduced to their text. Code stays as written."""
    if block.kind == "heading":
        return block
    text = _DATA_URI.sub("", block.text) if "data:" in block.text else block.text
    if block.kind != "code":
        text = _MARKDOWN_LINK.sub(_safe_link, _CITATION_LIKE.sub("", text))
    return block if text == block.text else dataclasses.replace(block, text=text)


def _safe_link(link: re.Match[str]) -> str:
    return link.group(1) if link_problem(link.group(2)) else link.group(0)


def _bounded_labels(block: Block) -> Block:
    """A heading's title and anchor clipped for the chunks that repeat them; its text stays whole."""
    if block.kind != "heading":
        return block
    return dataclasses.replace(block, title=clip_label(block.title), anchor=clip_label(block.anchor))


def _text_blocks(content: str) -> list[Block]:
    paragraphs = _PARAGRAPH_BREAK.split(content.replace("\r\n", "\n"))
    return [Block(kind="text", text=paragraph.strip("\n")) for paragraph in paragraphs if paragraph.strip()]


def _title_from_path(source_path: str) -> str:
    """Last resort: the file name (or its folder's, for index pages) without number prefix."""
    path = derive_document_id(source_path).rstrip("/")
    stem = posixpath.splitext(posixpath.basename(path))[0]
    if stem.lower() in ("index", "readme") and "/" in path:
        stem = posixpath.basename(posixpath.dirname(path))
    return strip_number_prefix(stem).replace("-", " ").replace("_", " ").strip() or path
