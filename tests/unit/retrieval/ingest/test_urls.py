from __future__ import annotations

import pytest

from services.retrieval.ingest.documents import FrontMatter
from services.retrieval.ingest.urls import document_url, docusaurus_route, link_problem, strip_number_prefix

BASE = "https://example.org/docs/"


@pytest.mark.parametrize(
    ("segment", "stripped"),
    [
        ("01-intro", "intro"),
        ("2_setup", "setup"),
        ("003 - My Doc", "My Doc"),
        ("07_chapter_30_quiz", "chapter_30_quiz"),
        ("1.Theme API", "Theme API"),
        ("2021-11-notes", "2021-11-notes"),  # date-like: kept
        ("1.2-release", "1.2-release"),  # version-like: kept
        ("intro", "intro"),
        ("42", "42"),
    ],
)
def test_number_prefixes(segment: str, stripped: str) -> None:
    assert strip_number_prefix(segment) == stripped


@pytest.mark.parametrize(
    ("path", "front_matter", "route"),
    [
        ("01-guides/02-install.md", FrontMatter(), "/guides/install"),
        ("01-guides/index.md", FrontMatter(), "/guides/"),
        ("01-guides/README.md", FrontMatter(), "/guides/"),
        ("guides/Guides.mdx", FrontMatter(), "/guides/"),  # <folder>/<folder>.md is an index too
        ("intro.md", FrontMatter(), "/intro"),
        ("index.md", FrontMatter(), "/"),
        ("guides/install.md", FrontMatter(id="setup"), "/guides/setup"),
        ("guides/install.md", FrontMatter(slug="/start/here"), "/start/here"),
        ("guides/install.md", FrontMatter(slug="setup/linux"), "/guides/setup/linux"),
        ("guides/deep/install.md", FrontMatter(slug="../up"), "/guides/up"),
        ("guides/index.md", FrontMatter(id="overview"), "/guides/"),  # an index keeps its folder URL
        ("guides/index.md", FrontMatter(slug="welcome"), "/guides/welcome"),
        ("05-Python/32-gil/01-what-is.summary.md", FrontMatter(), "/Python/gil/what-is.summary"),
    ],
)
def test_docusaurus_routes(path: str, front_matter: FrontMatter, route: str) -> None:
    assert docusaurus_route(path, front_matter) == route


def test_document_urls() -> None:
    none = FrontMatter()
    assert (
        document_url("01-guides/02-install.md", "markdown", none, BASE)
        == "https://example.org/docs/guides/install"
    )
    assert (
        document_url("a/My Doc.md", "markdown", none, "https://x.org/docs") == "https://x.org/docs/a/My%20Doc"
    )
    assert document_url("static/page.html", "html", none, BASE) == "https://example.org/docs/static/page.html"
    # Without a base URL: the normalised source path, a relative URL.
    assert document_url("./01-guides\\02-install.md", "markdown", none, "") == "01-guides/02-install.md"
    # A crawled page keeps its own URL (without a fragment).
    assert document_url("https://s.org/a", "html", none, BASE, "https://s.org/a/#top") == "https://s.org/a/"


@pytest.mark.parametrize(
    "url",
    ["https://example.org/docs/", "HTTP://Example.org", "/docs/intro", "intro/setup.md#x", "//cdn.org/a", ""],
)
def test_http_and_relative_urls_are_links(url: str) -> None:
    assert link_problem(url) == ""


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("javascript:alert(1)", "must be an http(s) URL or a relative URL, not a javascript: URL"),
        ("JaVaScRiPt:alert(1)", "must be an http(s) URL or a relative URL, not a javascript: URL"),
        ("  javascript:alert(1)", "must be an http(s) URL or a relative URL, not a javascript: URL"),
        ("file:///etc/passwd", "must be an http(s) URL or a relative URL, not a file: URL"),
        ("data:text/html,<script>", "must be an http(s) URL or a relative URL, not a data: URL"),
        ("vbscript:msgbox", "must be an http(s) URL or a relative URL, not a vbscript: URL"),
        ("java\tscript:alert(1)", "must not contain control characters"),
        ("\x01javascript:alert(1)", "must not contain control characters"),
        ("https:/no-host", "must name a host after http:// or https://"),
        ("http://[::1", "is not a valid URL"),
    ],
)
def test_other_urls_are_not_links(url: str, problem: str) -> None:
    assert link_problem(url) == problem
