"""Chat Completions requests as every OpenAI-compatible server accepts them.

The SDK sends an assistant message that made tool calls with `"content": null`, as OpenAI's API
allows; llama.cpp's server rejects it with HTTP 500 (and other servers differ). `CompatTransport`
rewrites the JSON body of each chat completions request on its way out, so the fix holds for every
request the SDK makes, streamed or not.
"""

from __future__ import annotations

import json
from typing import Any

import httpx


def compatible_body(body: dict[str, Any]) -> dict[str, Any]:
    """The request with every null message content replaced by an empty string."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, dict) and "content" in message and message["content"] is None:
                message["content"] = ""
    return body


class CompatTransport(httpx.AsyncBaseTransport):
    """Wraps a transport; chat completions bodies pass through `compatible_body`."""

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
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
