"""Chat Completions requests as every OpenAI-compatible server accepts them.

The SDK sends an assistant message that made tool calls with `"content": null`, as OpenAI's API
allows; llama.cpp's server rejects it with HTTP 500 (and other servers differ). `CompatTransport`
rewrites the JSON body of each chat completions request on its way out, so the fix holds for every
request the SDK makes, streamed or not.

A streamed completion that ends (`data: [DONE]`, or the connection closing) before any chunk gave
a finish_reason was cut short: llama-cpp-python's server does that to a streaming request as soon
as another request arrives. The SDK would take the text so far as the whole answer (and a 200 that
is no event stream at all, a proxy's login page, as an empty one); the transport raises
`BrokenStream` instead, so the run fails with a status that says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

# A chunk that finishes its choice ("finish_reason": "stop" | "length" | "tool_calls" | ...).
_FINISHED_RE = re.compile(rb'"finish_reason"\s*:\s*"')
_DONE = b"data: [DONE]"
# Bytes of one network read kept to find a marker split across two reads.
_OVERLAP = 64


class BrokenStream(Exception):
    """A streamed completion that is not one the model finished (see the module docstring)."""


_CUT_SHORT = (
    "it ended the answer before the model finished it (no finish_reason); llama-cpp-python's server "
    "does that when another request arrives: let the agent alone use it, one call at a time "
    "(GLOSSATOR_AGENT_LLM_MAX_CONCURRENT_CALLS=1), or start it with --interrupt_requests false"
)


def compatible_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request with every null message content replaced by an empty string."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and "content" in message and message["content"] is None:
                message["content"] = ""
    return body


class CompatTransport(httpx.AsyncBaseTransport):
    """Wraps a transport; chat completions bodies pass through `compatible_body`, and a streamed
    completion's bytes through `FinishWatch`."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/chat/completions"):
            body = compatible_body(json.loads(await request.aread()))
            request = httpx.Request(
                request.method,
                request.url,
                headers=[(k, v) for k, v in request.headers.items() if k.lower() != "content-length"],
                content=json.dumps(body).encode(),
                extensions=request.extensions,
            )
            response = await self._inner.handle_async_request(request)
            if not body.get("stream") or response.status_code != 200:
                return response
            kind = response.headers.get("content-type", "")
            if not kind.startswith("text/event-stream"):
                await response.aclose()
                raise BrokenStream(f"it answered a streamed request with {kind or 'no content type'}")
            if response.headers.get("content-encoding", "identity") != "identity":
                return response  # the watch reads events as sent: compressed ones it cannot
            return httpx.Response(
                response.status_code,
                headers=response.headers,
                stream=FinishWatch(response.stream),
                extensions=response.extensions,
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class FinishWatch(httpx.AsyncByteStream):
    """A streamed completion's bytes, passed on as they come; raises BrokenStream where it ends
    unfinished (at `[DONE]`, before passing that read on, or where the bytes stop). What it saw is
    kept across iterations: the client reads up to `[DONE]`, then drains the rest in a second one."""

    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self._inner = inner
        self._finished = False
        self._tail = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for data in self._inner:
            window = self._tail + data
            self._finished = self._finished or _FINISHED_RE.search(window) is not None
            if not self._finished and _DONE in window:
                raise BrokenStream(_CUT_SHORT)
            self._tail = window[-_OVERLAP:]
            yield data
        if not self._finished:
            raise BrokenStream(_CUT_SHORT)

    async def aclose(self) -> None:
        await self._inner.aclose()
