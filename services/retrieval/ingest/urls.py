"""Public URLs of documents: file paths mapped to routes the way Docusaurus's docs plugin does.

Route of a Markdown/MDX doc (Docusaurus 3, default number-prefix parser):
- every folder segment loses a number prefix ("01-", "2_", "003 - "; "2021-11-x" and "1.2-x" are
  kept, since they read as dates and versions); the file loses its extension and number prefix;
- index.md, README.md and <folder>/<folder>.md (case-insensitive, prefix included) are the folder's
  index: their route is the folder ("/guides/");
- front matter `id` replaces the file name; `slug` replaces the whole route when it starts with
  "/", else it is resolved against the folder (so "../x" and "nested/x" work as on the site).
The document URL is base_url (the docs root, e.g. "https://example.org/docs/") + route. Other
formats are served as files: base_url + their path. Without a base URL the URL is the document's
normalised source path, a relative URL a client can still resolve against its own site root.
An explicit source_url (a crawled page) always wins, without its fragment.

Every URL a citation links to is an absolute http(s) URL or a relative one (see link_problem):
a reader clicks it, so javascript:, data: and file: URLs are refused wherever they come from.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import quote, urldefrag, urlsplit

from services.retrieval.ingest.documents import FrontMatter, derive_document_id

_IGNORED_PREFIX = re.compile(r"^\d+[-_.]\d+")
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]+\s*(?P<rest>[^-_.\s].*)$", re.DOTALL)
_URL_SAFE = "/:@!$&'()*+,;=-._~"
_LINK_SCHEMES = ("http", "https")
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")  # browsers drop tabs and newlines: "java\tscript:"


def strip_number_prefix(segment: str) -> str:
    """Docusaurus's default number-prefix parser: "01-intro" -> "intro", "2021-11-notes" kept."""
    if _IGNORED_PREFIX.match(segment):
        return segment
    match = _NUMBER_PREFIX.match(segment)
    return match["rest"] if match else segment


def docusaurus_route(source_path: str, front_matter: FrontMatter) -> str:
    """The route ("/intro/setup") Docusaurus gives the doc at `source_path` (relative to docs/)."""
    path = derive_document_id(source_path)
    directory, file_name = posixpath.split(path)
    stem = posixpath.splitext(file_name)[0]
    folder = (
        "/"
        if not directory
        else "/" + "/".join(strip_number_prefix(part) for part in directory.split("/")) + "/"
    )
    if front_matter.slug.startswith("/"):
        return front_matter.slug
    if not front_matter.slug and _is_category_index(stem, directory):
        return folder
    return _resolve(front_matter.slug or front_matter.id or strip_number_prefix(stem), folder)


def document_url(
    source_path: str, document_format: str, front_matter: FrontMatter, base_url: str, source_url: str = ""
) -> str:
    """The public URL of a document, without a fragment (see the module docstring for the rules)."""
    if source_url:
        return urldefrag(source_url).url
    if not base_url:
        return derive_document_id(source_path)
    if document_format in ("markdown", "mdx"):
        route = docusaurus_route(source_path, front_matter)
    else:
        route = "/" + derive_document_id(source_path)
    return base_url.rstrip("/") + quote(route, safe=_URL_SAFE)


def link_problem(url: str) -> str:
    """Why `url` cannot be a citation's link, or "" when it can: an http(s) URL naming a host, or
    a relative URL (which has no scheme; "//host/path" keeps the page's own)."""
    if _CONTROL_CHARACTERS.search(url):
        return "must not contain control characters"
    try:
        parts = urlsplit(url.strip())  # the scheme comes back lower-cased
    except ValueError:  # e.g. "http://[::1" (an unclosed IPv6 host)
        return "is not a valid URL"
    if parts.scheme and parts.scheme not in _LINK_SCHEMES:
        return f"must be an http(s) URL or a relative URL, not a {parts.scheme}: URL"
    if parts.scheme and not parts.netloc:
        return "must name a host after http:// or https://"
    return ""


def _is_category_index(stem: str, directory: str) -> bool:
    parent = directory.rsplit("/", 1)[-1].lower() if directory else None
    return stem.lower() in ("index", "readme", parent)


def _resolve(relative: str, folder: str) -> str:
    """URL-style resolution of a relative slug against a folder route ending in "/"."""
    segments = folder.strip("/").split("/") if folder != "/" else []
    parts = relative.split("/")
    for part in parts:
        if part == "..":
            if segments:
                segments.pop()
        elif part not in (".", ""):
            segments.append(part)
    trailing = "/" if parts[-1] in ("", ".", "..") and segments else ""
    return "/" + "/".join(segments) + trailing
