"""Crawling a live site by its sitemap.xml: the pages it lists, fetched politely with httpx.

Politeness: at most `concurrency` requests in flight, a per-request timeout, an honest
User-Agent, and what politeness.py adds: robots.txt and its Crawl-delay obeyed (a disallowed page
is a SourceError, not skipped in silence), a request rate per site, 429 and 503 retried after
their Retry-After. Pages come back in sitemap order whatever order they finish in, so a
crawl is reproducible. A page that cannot be fetched is a SourceError for that page; only a
sitemap that cannot be read at all (the one given) ends the crawl, with SitemapError.
"""

from __future__ import annotations

import asyncio
import codecs
import gzip
import re
from collections import deque
from collections.abc import AsyncIterator

import httpx
from lxml import etree

from services.retrieval.ingest.documents import DEFAULT_MAX_DOCUMENT_BYTES, SourceDocument, SourceError
from services.retrieval.ingest.politeness import (
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_REQUESTS_PER_SECOND,
    RETRY_STATUSES,
    USER_AGENT,
    Disallowed,
    Politeness,
    TooLarge,
    Unreachable,
    describe,
)

DEFAULT_TIMEOUT_SECONDS = 15.0
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps.org limit for one uncompressed sitemap
_MAX_SITEMAPS = 1000
_PAGE_TYPES = ("text/html", "application/xhtml+xml")
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([\w.:-]+)", re.IGNORECASE)


class SitemapError(Exception):
    """The sitemap given to crawl_sitemap cannot be fetched or is not a sitemap."""


class SiteUnreachable(SitemapError):
    """No answer came from the sitemap's site (refused, no such host, a timeout, a server error):
    a failure that may pass, unlike a sitemap that is missing or is not one."""


async def crawl_sitemap(
    sitemap_url: str,
    *,
    concurrency: int = 4,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    max_pages: int | None = None,
    max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    requests_per_second: float = DEFAULT_REQUESTS_PER_SECOND,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> AsyncIterator[SourceDocument | SourceError]:
    """The pages listed by the sitemap (sitemap indexes followed), as HTML SourceDocuments whose
    source_path is the listed URL and source_url the URL the page was finally served from.

    requests_per_second is per site (a slower Crawl-delay wins); max_attempts counts the first."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    if max_pages is not None and max_pages < 1:
        raise ValueError(f"max_pages must be at least 1 (or None for all), not {max_pages}")
    politeness = Politeness(
        timeout=timeout, requests_per_second=requests_per_second, max_attempts=max_attempts
    )
    async with (
        politeness,
        httpx.AsyncClient(
            timeout=timeout,
            limits=httpx.Limits(max_connections=concurrency),
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
            event_hooks=politeness.event_hooks,
        ) as client,
    ):
        pages, failed_sitemaps = await _page_urls(client, politeness, sitemap_url, max_pages)
        for failure in failed_sitemaps:
            yield failure
        pending: deque[asyncio.Task[SourceDocument | SourceError]] = deque()
        try:
            for url in pages:
                pending.append(asyncio.create_task(_fetch_page(client, politeness, url, max_bytes)))
                if len(pending) >= concurrency:
                    yield await pending.popleft()
            while pending:
                yield await pending.popleft()
        finally:
            for task in pending:
                task.cancel()


async def _page_urls(
    client: httpx.AsyncClient, politeness: Politeness, sitemap_url: str, max_pages: int | None
) -> tuple[list[str], list[SourceError]]:
    """Page URLs in sitemap order (duplicates dropped) and the nested sitemaps that failed."""
    pages: dict[str, None] = {}
    failures: list[SourceError] = []
    queue = deque([sitemap_url])
    seen = {sitemap_url}
    while queue and len(seen) <= _MAX_SITEMAPS and (max_pages is None or len(pages) < max_pages):
        url = queue.popleft()
        try:
            kind, locations = _parse_sitemap(await _fetch_sitemap(client, politeness, url))
        except SitemapError as error:
            if url == sitemap_url:
                raise
            failures.append(SourceError(source_path=url, message=str(error)))
            continue
        if kind == "sitemapindex":
            fresh = [location for location in locations if location not in seen]
            seen.update(fresh)
            queue.extend(fresh)
        else:
            pages.update(dict.fromkeys(locations))
    urls = list(pages)
    return (urls if max_pages is None else urls[:max_pages]), failures


async def _fetch_sitemap(client: httpx.AsyncClient, politeness: Politeness, url: str) -> bytes:
    try:
        body, response = await politeness.get(client, url, MAX_SITEMAP_BYTES)
    except Unreachable as error:
        raise SiteUnreachable(f"cannot fetch sitemap {url}: {error}") from None
    except httpx.TransportError as error:
        raise SiteUnreachable(f"cannot fetch sitemap {url}: {describe(error)}") from None
    except httpx.HTTPError as error:
        raise SitemapError(f"cannot fetch sitemap {url}: {describe(error)}") from error
    except Disallowed as error:
        raise SitemapError(f"cannot fetch sitemap {url}: {error}") from error
    except TooLarge as error:
        raise SitemapError(f"sitemap {url} is over {MAX_SITEMAP_BYTES:,} bytes") from error
    if response.status_code >= 500 or response.status_code in RETRY_STATUSES:
        raise SiteUnreachable(f"cannot fetch sitemap {url}: HTTP {response.status_code}")
    if response.status_code != 200:
        raise SitemapError(f"cannot fetch sitemap {url}: HTTP {response.status_code}")
    if body[:2] == b"\x1f\x8b":
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError) as error:
            raise SitemapError(f"sitemap {url} is not valid gzip: {error}") from error
    return body


def _parse_sitemap(body: bytes) -> tuple[str, list[str]]:
    """("urlset" or "sitemapindex", the <loc> values) of a sitemap document."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as error:
        raise SitemapError(f"sitemap is not XML: {error}") from error
    kind = etree.QName(root).localname if root is not None else ""
    if kind not in ("urlset", "sitemapindex"):
        raise SitemapError(f"not a sitemap: the root element is <{kind or 'nothing'}>")
    entry = "{*}sitemap" if kind == "sitemapindex" else "{*}url"
    locations = []
    for element in root.iterfind(f"{entry}/{{*}}loc"):  # not image:loc and the like, deeper down
        location = (element.text or "").strip()
        if location.startswith(("http://", "https://")):
            locations.append(location)
    return kind, locations


async def _fetch_page(
    client: httpx.AsyncClient, politeness: Politeness, url: str, max_bytes: int
) -> SourceDocument | SourceError:
    try:
        body, response = await politeness.get(client, url, max_bytes)
    except httpx.HTTPError as error:
        return SourceError(source_path=url, message=f"cannot fetch the page: {describe(error)}")
    except (Disallowed, Unreachable) as error:
        return SourceError(source_path=url, message=str(error))
    except TooLarge:
        return SourceError(source_path=url, message=f"page is over the limit of {max_bytes:,} bytes")
    if response.status_code != 200:
        return SourceError(source_path=url, message=f"cannot fetch the page: HTTP {response.status_code}")
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type and media_type not in _PAGE_TYPES:
        return SourceError(source_path=url, message=f"not an HTML page: {media_type}")
    content = body.decode(_charset(response, body), errors="replace")
    return SourceDocument(source_path=url, source_url=str(response.url), content=content, format="html")


def _charset(response: httpx.Response, body: bytes) -> str:
    """The Content-Type charset, else a <meta charset> near the top of the page, else UTF-8."""
    declared = response.charset_encoding
    if not declared and (meta := _META_CHARSET.search(body[:4096])):
        declared = meta.group(1).decode("ascii")
    try:
        return codecs.lookup(declared).name if declared else "utf-8"
    except LookupError:
        return "utf-8"
