"""The sitemap crawl's manners (robots.txt, Crawl-delay, request rate, Retry-After) against real
HTTP servers on 127.0.0.1 that record when each request arrived."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise

import pytest

from services.retrieval.ingest import SitemapError, SourceDocument, SourceError, crawl_sitemap, politeness
from services.retrieval.ingest.politeness import retry_after_seconds

TOLERANCE = 0.03  # seconds: a request may reach the server this much sooner after the last than it left
# The server notes a request when its handler thread runs: on a loaded machine one arrival can be
# noted late and the next on time, so a single gap may look this much shorter than the spacing.
JITTER = 0.1
PAGE = b"<html><head><title>Page</title></head><body><main><h1>Page</h1><p>Text.</p></main></body></html>"
# Ours is the GlossatorBot group: were the product token not matched, `*` would forbid everything.
ROBOTS = """User-agent: *
Disallow: /

User-agent: GlossatorBot
Disallow: /private/
Crawl-delay: 0.2
"""


class Site:
    """A server whose answers are scripted by path, recording (arrival, path, User-Agent)."""

    def __init__(self, robots: str | int) -> None:
        self.robots = robots  # the robots.txt, or the status it is answered with
        self.sitemap: list[str] = []  # paths or URLs
        self.requests: list[tuple[float, str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def paths(self) -> list[str]:
        return [path for _, path, _ in self.requests]

    def arrivals(self, path: str | None = None) -> list[float]:
        return [at for at, seen, _ in self.requests if path in (None, seen)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site.lock:
                    site.requests.append((time.monotonic(), self.path, self.headers["User-Agent"]))
                    seen = site.paths().count(self.path)
                if self.path == "/robots.txt":
                    if isinstance(site.robots, int):
                        self.answer(site.robots)
                    else:
                        self.answer(200, site.robots.encode(), content_type="text/plain")
                elif self.path == "/sitemap.xml":
                    urls = "".join(
                        f"<url><loc>{url if '://' in url else site.url + url}</loc></url>"
                        for url in site.sitemap
                    )
                    self.answer(200, f"<urlset>{urls}</urlset>".encode(), content_type="application/xml")
                elif self.path == "/busy.html" and seen == 1:
                    self.answer(429, headers={"Retry-After": "1"})
                elif self.path == "/unavailable.html" and seen == 1:
                    self.answer(503)  # no Retry-After: the backoff decides
                elif self.path == "/down.html":
                    self.answer(503, headers={"Retry-After": "0"})
                elif self.path == "/patience.html" and seen == 1:
                    self.answer(429, headers={"Retry-After": "3600"})
                elif self.path == "/old.html":
                    self.answer(301, headers={"Location": "/private/moved.html"})
                else:
                    self.answer(200, PAGE)

            def answer(
                self,
                status: int,
                body: bytes = b"",
                headers: dict[str, str] | None = None,
                content_type="text/html",
            ) -> None:
                self.send_response(status)
                for name, value in {"Content-Type": content_type, **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                pass

        return Handler


@pytest.fixture
def start_site() -> Iterator[Callable[[str | int], Site]]:
    sites: list[Site] = []

    def start(robots: str | int) -> Site:
        site = Site(robots)
        threading.Thread(
            target=site.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        sites.append(site)
        return site

    yield start
    for site in sites:
        site.server.shutdown()
        site.server.server_close()


async def crawl(url: str, **options) -> dict[str, SourceDocument | SourceError]:
    return {item.source_path: item async for item in crawl_sitemap(url, **options)}


def assert_spaced(arrivals: list[float], interval: float) -> None:
    """Requests kept `interval` apart: on average (no scheduling delay makes a rate faster), and
    each gap within the handler threads' jitter (a limiter that does nothing leaves gaps of ~0)."""
    gaps = [later - earlier for earlier, later in pairwise(arrivals)]
    assert sum(gaps) / len(gaps) >= interval - TOLERANCE
    assert min(gaps) >= interval - JITTER


async def test_robots_txt_crawl_delay_and_retries(start_site) -> None:
    site = start_site(ROBOTS)
    site.sitemap = [
        "/a.html",
        "/private/secret.html",
        "/old.html",
        "/busy.html",
        "/unavailable.html",
        "/down.html",
    ]
    items = await crawl(f"{site.url}/sitemap.xml", concurrency=4, requests_per_second=1000, max_attempts=3)

    assert [type(item).__name__ for item in items.values()] == [
        "SourceDocument",
        "SourceError",
        "SourceError",
        "SourceDocument",
        "SourceDocument",
        "SourceError",
    ]
    # Disallowed pages are reported, and never requested, not even when reached by a redirect.
    assert items[f"{site.url}/private/secret.html"].message == "disallowed by robots.txt"
    assert items[f"{site.url}/old.html"].message == "disallowed by robots.txt"
    assert not any(path.startswith("/private/") for path in site.paths())
    # 429 and 503 are retried (after the Retry-After asked for); a 503 that stays gives up.
    busy = site.arrivals("/busy.html")
    assert len(busy) == 2 and busy[1] - busy[0] >= 1 - TOLERANCE
    assert len(site.arrivals("/unavailable.html")) == 2
    assert items[f"{site.url}/down.html"].message == "cannot fetch the page: HTTP 503"
    assert len(site.arrivals("/down.html")) == 3
    # robots.txt was read once, and every request, retries included, kept the Crawl-delay.
    assert site.paths().count("/robots.txt") == 1 and site.paths()[0] == "/robots.txt"
    assert_spaced(site.arrivals(), 0.2)
    assert {agent for _, _, agent in site.requests} == {politeness.USER_AGENT}
    assert politeness.USER_AGENT.startswith("GlossatorBot/")


async def test_the_request_rate_spaces_requests_and_a_missing_robots_txt_allows_all(start_site) -> None:
    site = start_site(404)
    site.sitemap = ["/a.html", "/b.html", "/private/c.html"]
    items = await crawl(f"{site.url}/sitemap.xml", concurrency=3, requests_per_second=5)
    assert all(isinstance(item, SourceDocument) for item in items.values())
    assert len(site.requests) == 5
    assert_spaced(site.arrivals(), 0.2)


async def test_an_unreachable_robots_txt_disallows_the_whole_site(start_site) -> None:
    down = start_site(500)
    with pytest.raises(
        SitemapError, match=r"disallowed by robots\.txt: .*/robots\.txt cannot be read \(HTTP 500\)"
    ):
        await crawl(f"{down.url}/sitemap.xml")
    assert down.paths() == ["/robots.txt"]  # 500 is not retried, and nothing else was asked for

    home = start_site(404)
    home.sitemap = ["/a.html", f"{down.url}/b.html"]
    items = await crawl(f"{home.url}/sitemap.xml", requests_per_second=1000)
    assert isinstance(items[f"{home.url}/a.html"], SourceDocument)
    assert items[f"{down.url}/b.html"].message == (
        f"disallowed by robots.txt: {down.url}/robots.txt cannot be read (HTTP 500), "
        "which RFC 9309 counts as disallowing all"
    )
    assert down.paths() == ["/robots.txt"] * 2  # one crawl, one robots.txt per site


async def test_retry_after_is_capped(start_site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(politeness, "MAX_RETRY_WAIT_SECONDS", 0.3)
    site = start_site(404)
    site.sitemap = ["/patience.html"]
    started = time.monotonic()
    items = await crawl(f"{site.url}/sitemap.xml", requests_per_second=1000)
    assert isinstance(items[f"{site.url}/patience.html"], SourceDocument)
    assert time.monotonic() - started < 2  # not the hour the server asked for


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 7 ", 7.0),
        ("Wed, 21 Oct 2015 07:28:30 GMT", 30.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # already past
        ("soon", None),
        ("-5", None),
        ("1.5", None),  # delay-seconds are whole
        (None, None),
    ],
)
def test_retry_after_in_seconds_or_http_date(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header, now=datetime(2015, 10, 21, 7, 28, tzinfo=UTC)) == seconds
