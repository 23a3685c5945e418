"""How the sitemap crawl treats the sites it reads: robots.txt, a request rate, retries.

Protego reads robots.txt, aiolimiter spaces the requests and tenacity retries; this module is
only the policy that ties them to one crawl's httpx client:

- robots.txt (RFC 9309), read once per site (scheme, host and port) under the product token
  GlossatorBot. A robots.txt that is unavailable (4xx) allows everything; one that is unreachable
  (5xx, or a 429 still there after the retries, or a network error) disallows everything, as
  RFC 9309 §2.3.1.4 requires: a site that is down or overloaded has not said it may be crawled.
- one request at a time per interval per site: 1 / requests_per_second, or the site's
  Crawl-delay when that is longer. Every request the client sends waits its turn, redirects and
  retries included, because the wait is an httpx request hook.
- an answer 429 or 503 is retried, up to max_attempts in all, after its Retry-After (seconds or
  an HTTP-date) capped at MAX_RETRY_WAIT_SECONDS, or an exponential backoff when it has none.
  Anything else (other statuses, timeouts, network errors) is not retried.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from importlib.metadata import version
from types import TracebackType

import httpx
from aiolimiter import AsyncLimiter
from protego import Protego
from tenacity import AsyncRetrying, RetryCallState, retry_if_result, stop_after_attempt, wait_exponential

ROBOTS_TOKEN = "GlossatorBot"  # the product token robots.txt groups name us by
USER_AGENT = f"{ROBOTS_TOKEN}/{version('glossator')} (+https://glossator.dev)"
DEFAULT_REQUESTS_PER_SECOND = 4.0
DEFAULT_MAX_ATTEMPTS = 3
MAX_RETRY_WAIT_SECONDS = 30.0
MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 §2.5: at least 500 KiB are read; rules past it are ignored
RETRY_STATUSES = frozenset({429, 503})
_DELAY_SECONDS = re.compile(r"[0-9]+")
_BACKOFF = wait_exponential(multiplier=0.5, max=MAX_RETRY_WAIT_SECONDS)
_DISALLOW_ALL = Protego.parse("User-agent: *\nDisallow: /")


class Disallowed(Exception):
    """robots.txt forbids the URL (its message says why); raised from the request hook."""


class Unreachable(Exception):
    """The site cannot be reached at all (its robots.txt request found no server: refused, a host
    name that does not resolve, a timeout); the message is the cause, in a few words."""


class TooLarge(Exception):
    """The body is over the limit; head is what was read, which is all a robots.txt needs."""

    def __init__(self, head: bytes) -> None:
        super().__init__()
        self.head = head


async def read(client: httpx.AsyncClient, url: str, max_bytes: int) -> tuple[bytes, httpx.Response]:
    """The body (read no further than max_bytes) and the response."""
    async with client.stream("GET", url) as response:
        body = bytearray()
        async for part in response.aiter_bytes():
            body.extend(part)
            if len(body) > max_bytes:
                raise TooLarge(bytes(body[:max_bytes]))
        return bytes(body), response


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """The wait a Retry-After header asks for (RFC 9110 §10.2.3), None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC with no claim about the local zone
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _busy(got: tuple[bytes, httpx.Response]) -> bool:
    return got[1].status_code in RETRY_STATUSES


def _wait(state: RetryCallState) -> float:
    """The answer's own Retry-After, capped so that one site cannot stall the crawl for long."""
    _body, response = state.outcome.result()
    asked = retry_after_seconds(response.headers.get("retry-after"))
    return _BACKOFF(state) if asked is None else min(asked, MAX_RETRY_WAIT_SECONDS)


def _last_answer(state: RetryCallState) -> tuple[bytes, httpx.Response]:
    """Out of attempts: the last 429/503 is reported like any other failed answer."""
    return state.outcome.result()


@dataclass(frozen=True)
class _Site:
    rules: Protego
    refusal: str  # the message of a URL the rules disallow
    limiter: AsyncLimiter
    unreachable: str | None = None  # why no request reached the site, when none did


class Politeness:
    """One crawl's robots.txt rules, rate limits and retries, for the sites it meets.

    `async with Politeness(...) as politeness`, then give `event_hooks=politeness.event_hooks` to
    the crawl's client and fetch with `politeness.get`. robots.txt is read with a client of its own,
    which the hook does not see (it would wait on itself).
    """

    def __init__(
        self,
        *,
        timeout: float,
        requests_per_second: float = DEFAULT_REQUESTS_PER_SECOND,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        if requests_per_second <= 0:
            raise ValueError(f"requests_per_second must be positive, not {requests_per_second}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {max_attempts}")
        self._interval = 1 / requests_per_second
        self._robots_client = httpx.AsyncClient(
            timeout=timeout, headers={"User-Agent": USER_AGENT}, follow_redirects=True
        )
        self._sites: dict[str, _Site] = {}
        self._site_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.get = AsyncRetrying(
            stop=stop_after_attempt(max_attempts),
            wait=_wait,
            retry=retry_if_result(_busy),
            retry_error_callback=_last_answer,
        ).wraps(read)
        self.event_hooks = {"request": [self._before_request]}

    async def __aenter__(self) -> Politeness:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._robots_client.aclose()

    async def _before_request(self, request: httpx.Request) -> None:
        site = await self._site(request.url.copy_with(path="/robots.txt", query=None, fragment=None))
        if site.unreachable:  # not a refusal of robots.txt: there was no one to ask
            raise Unreachable(site.unreachable)
        if not site.rules.can_fetch(str(request.url), ROBOTS_TOKEN):
            raise Disallowed(site.refusal)
        await site.limiter.acquire()

    async def _site(self, robots_url: httpx.URL) -> _Site:
        key = str(robots_url)
        async with self._site_locks[key]:  # one robots.txt request per site, however many pages wait
            if key not in self._sites:
                self._sites[key] = await self._visit(robots_url)
        return self._sites[key]

    async def _visit(self, robots_url: httpx.URL) -> _Site:
        """Reads the site's robots.txt and starts its limiter, counting that request."""
        try:
            rules, unavailable = await self._robots(robots_url)
        except httpx.TransportError as error:
            host = robots_url.netloc.decode("ascii")
            return _Site(
                _DISALLOW_ALL,
                "",
                AsyncLimiter(1, self._interval),
                f"cannot reach {host}: {network_cause(error)}",
            )
        refusal = "disallowed by robots.txt"
        if unavailable:
            refusal += (
                f": {robots_url} cannot be read ({unavailable}), which RFC 9309 counts as disallowing all"
            )
        interval = max(self._interval, rules.crawl_delay(ROBOTS_TOKEN) or 0.0)
        limiter = AsyncLimiter(1, interval)  # a bucket of one: evenly spaced, no bursts
        await limiter.acquire()
        return _Site(rules, refusal, limiter)

    async def _robots(self, robots_url: httpx.URL) -> tuple[Protego, str | None]:
        """The rules, and why robots.txt is unavailable when it is (then the rules disallow all).
        A site that cannot be reached at all raises httpx.TransportError."""
        try:
            body, response = await self.get(self._robots_client, str(robots_url), MAX_ROBOTS_BYTES)
        except TooLarge as error:
            return Protego.parse(error.head.decode("utf-8", errors="replace")), None
        except httpx.TransportError:
            raise
        except httpx.HTTPError as error:
            return _DISALLOW_ALL, describe(error)
        if response.status_code >= 500 or response.status_code in RETRY_STATUSES:
            return _DISALLOW_ALL, f"HTTP {response.status_code}"
        return Protego.parse(body.decode("utf-8", errors="replace") if response.is_success else ""), None


def describe(error: httpx.HTTPError) -> str:
    if isinstance(error, httpx.TransportError):
        return network_cause(error)
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def network_cause(error: httpx.TransportError) -> str:
    """Why no answer came, in a few words: the refusal, the name lookup or the timeout that httpx
    wraps (its own message is often "All connection attempts failed")."""
    if isinstance(error, httpx.ConnectTimeout):
        return "the connection timed out"
    if isinstance(error, httpx.TimeoutException):
        return "the site stopped answering (timed out)"
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"the host name does not resolve ({cause.strerror})"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[0].lower() + cause.strerror[1:]
        cause = cause.__cause__ or cause.__context__
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
