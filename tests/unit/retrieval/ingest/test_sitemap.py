"""The crawler against a real HTTP server on 127.0.0.1 serving files from a temporary folder."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from services.retrieval.ingest import (
    SitemapError,
    SiteUnreachable,
    SourceDocument,
    SourceError,
    crawl_sitemap,
    parse_document,
)

PAGE = """<html><head><title>{title} | Site</title></head><body>
<nav>Menu</nav><main><article><h1>{title}</h1><p>Text of {title}.</p>
<h2 id="details">Details</h2><p>More.</p></article></main><footer>Footer</footer></body></html>"""


class Site:
    def __init__(self, root: Path, server: ThreadingHTTPServer) -> None:
        self.root = root
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Condition()

    def keep_company(self, seconds: float) -> None:
        """Holds a page until another one is being served too (at most `seconds`): a crawler that
        fetches two at a time overlaps them however slowly a loaded machine starts the second
        (a fixed 0.05 s pause let them run one after the other, and most_in_flight was 1)."""
        with self.lock:
            self.lock.wait_for(lambda: self.in_flight >= 2, seconds)


def serve(site_box: list[Site]) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        """Serves the folder; holds pages a little and counts how many are served at once."""

        def do_GET(self) -> None:
            site = site_box[0]
            # Pages only: sitemaps and robots.txt are fetched beside them, outside the page limit.
            page = not self.path.endswith((".xml", ".txt"))
            with site.lock:
                site.in_flight += page
                site.most_in_flight = max(site.most_in_flight, site.in_flight)
                site.lock.notify_all()
            try:
                if self.path == "/slow.html":
                    time.sleep(2)
                elif self.path.endswith(".html"):
                    site.keep_company(0.5)
                super().do_GET()
            finally:
                with site.lock:
                    site.in_flight -= page

        def log_message(self, format: str, *args) -> None:
            pass

    return Handler


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:
        pass  # the crawler hanging up on purpose (timeouts, size limits) is not a server error


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    box: list[Site] = []
    server = QuietServer(("127.0.0.1", 0), partial(serve(box), directory=str(tmp_path)))
    box.append(Site(tmp_path, server))
    site = box[0]
    for name in ("one", "two", "three", "four", "five"):
        (tmp_path / f"{name}.html").write_text(PAGE.format(title=name.title()), encoding="utf-8")
    (tmp_path / "docs" / "six").mkdir(parents=True)
    (tmp_path / "docs" / "six" / "index.html").write_text(PAGE.format(title="Six"), encoding="utf-8")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    base = site.url
    urls = "".join(
        f"<url><loc>{base}/{name}</loc><image:image><image:loc>{base}/logo.png</image:loc></image:image></url>"
        for name in ("one.html", "two.html", "missing.html", "logo.png", "one.html", "docs/six")
    )
    (tmp_path / "pages.xml").write_text(
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
        f'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">{urls}</urlset>',
        encoding="utf-8",
    )
    more = "".join(f"<url><loc>{base}/{name}.html</loc></url>" for name in ("three", "four", "five"))
    (tmp_path / "more.xml.gz").write_bytes(gzip.compress(f"<urlset>{more}</urlset>".encode()))
    (tmp_path / "sitemap.xml").write_text(
        "<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        f"<sitemap><loc>{base}/pages.xml</loc></sitemap><sitemap><loc>{base}/gone.xml</loc></sitemap>"
        f"<sitemap><loc>{base}/more.xml.gz</loc></sitemap></sitemapindex>",
        encoding="utf-8",
    )
    (tmp_path / "slow.html").write_text(PAGE.format(title="Slow"), encoding="utf-8")
    (tmp_path / "slow.xml").write_text(
        f"<urlset><url><loc>{base}/slow.html</loc></url></urlset>", encoding="utf-8"
    )
    (tmp_path / "not-a-sitemap.xml").write_text("<html><body>hi</body></html>", encoding="utf-8")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield site
    server.shutdown()
    server.server_close()


async def crawl(url: str, **options) -> list[SourceDocument | SourceError]:
    return [item async for item in crawl_sitemap(url, **options)]


async def test_crawl_follows_the_index_and_keeps_sitemap_order(site: Site) -> None:
    # A rate above the pages' pace, so that two requests are in flight at once.
    items = await crawl(f"{site.url}/sitemap.xml", concurrency=2, timeout=5, requests_per_second=1000)
    base = site.url
    assert [(type(item).__name__, item.source_path) for item in items] == [
        ("SourceError", f"{base}/gone.xml"),
        ("SourceDocument", f"{base}/one.html"),
        ("SourceDocument", f"{base}/two.html"),
        ("SourceError", f"{base}/missing.html"),
        ("SourceError", f"{base}/logo.png"),
        ("SourceDocument", f"{base}/docs/six"),
        ("SourceDocument", f"{base}/three.html"),
        ("SourceDocument", f"{base}/four.html"),
        ("SourceDocument", f"{base}/five.html"),
    ]
    errors = [item.message for item in items if isinstance(item, SourceError)]
    assert errors == [
        f"cannot fetch sitemap {base}/gone.xml: HTTP 404",
        "cannot fetch the page: HTTP 404",
        "not an HTML page: image/png",
    ]
    six = next(item for item in items if item.source_path.endswith("/docs/six"))
    assert six.source_url == f"{base}/docs/six/"  # the server redirected; the page keeps its final URL
    assert six.format == "html"
    assert site.most_in_flight == 2  # pages were fetched two at a time, never more


async def test_crawled_pages_parse_with_their_own_urls(site: Site) -> None:
    items = await crawl(f"{site.url}/pages.xml", max_pages=1)
    assert len(items) == 1
    parsed = parse_document(items[0], base_url="https://unused.example/")
    assert parsed.title == "One"
    assert parsed.document_id == f"{site.url}/one.html"
    assert parsed.url_for(parsed.sections[-1].anchor) == f"{site.url}/one.html#details"
    assert "Menu" not in str(parsed.sections) and "Footer" not in str(parsed.sections)


async def test_limits_and_timeouts(site: Site) -> None:
    items = await crawl(f"{site.url}/pages.xml", max_bytes=100)
    assert {item.message for item in items if isinstance(item, SourceError)} >= {
        "page is over the limit of 100 bytes"
    }
    started = time.monotonic()
    items = await crawl(f"{site.url}/slow.xml", timeout=0.5)
    assert len(items) == 1
    assert items[0].message == "cannot fetch the page: the site stopped answering (timed out)"
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("path", "message"),
    [("absent.xml", "HTTP 404"), ("not-a-sitemap.xml", "not a sitemap: the root element is <html>")],
)
async def test_an_unreadable_sitemap_ends_the_crawl(site: Site, path: str, message: str) -> None:
    with pytest.raises(SitemapError, match=message):
        await crawl(f"{site.url}/{path}")


async def test_nothing_listens(unused_tcp_port: int) -> None:
    """The site is down: said as such, with its cause (not as a refusal of its robots.txt)."""
    with pytest.raises(SiteUnreachable) as caught:
        await crawl(f"http://127.0.0.1:{unused_tcp_port}/sitemap.xml", timeout=2)
    assert str(caught.value) == (
        f"cannot fetch sitemap http://127.0.0.1:{unused_tcp_port}/sitemap.xml: "
        f"cannot reach 127.0.0.1:{unused_tcp_port}: connection refused"
    )


async def test_a_missing_sitemap_is_not_an_unreachable_site(site: Site) -> None:
    """A 404 will not pass by retrying: it is a SitemapError of its own kind."""
    with pytest.raises(SitemapError) as missing:
        await crawl(f"{site.url}/absent.xml")
    assert not isinstance(missing.value, SiteUnreachable)
