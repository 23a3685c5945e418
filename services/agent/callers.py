"""Who is asking, for what one caller must not take from the others: the sessions and stored bytes
its anonymous questions keep (sessions/), and its questions running at once (`RunningAsks`).

A caller is
- a named user (a JWT's subject, the user a gateway's service token names, or with auth off the
  request's user_id): `user:<id>`;
- an admin acting for nobody (the CLI or the suite's tools with the service token):
  `principal:<subject>`;
- anyone else, anonymous (a widget key's readers; every caller with auth off), by client address:
  the one the browser edge names in `x-glossator-client-address`, else the gRPC peer's, without
  its port, since one caller may open many connections: `address:[<widget>@]<ip>`.

The edge's header is believed only where forging it gains nothing: on widget-key calls (Envoy
overwrites it on every request with the address it rate-limits by, and where the edge runs only
its pods reach the agent: k8s/components/edge) and with auth off (a caller then names any user_id
it likes anyway). A bearer token's caller is its principal whatever the header says.

Questions at once are capped for the callers the server can tell apart from its operator: verified
users, widget readers, and with auth off the browsers the edge names. Not for the service token
acting for nobody, nor, with auth off, for direct callers (the loopback default: its user's own
benches and tools, which a claimed user_id would bypass anyway).
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote

import grpc

from services.common.auth import CLIENT_ADDRESS_HEADER, caller
from services.common.errors import ResourceExhausted


@dataclass(frozen=True)
class Caller:
    key: str
    capped: bool  # counted by RunningAsks


def caller_of(context: grpc.aio.ServicerContext, user: str) -> Caller:
    """The caller of this call; `user` is the user it acts for ("" for anonymous)."""
    identity = caller()
    if user:
        return Caller(f"user:{user}", capped=identity is not None)
    if identity is not None and not identity.via_widget_key:
        return Caller(f"principal:{identity.subject}", capped=False)
    named_by_edge = _edge_address(context)
    address = named_by_edge or peer_address(context.peer())
    if identity is None:
        return Caller(f"address:{address}", capped=bool(named_by_edge))
    return Caller(f"address:{identity.subject}@{address}", capped=True)


def peer_address(peer: str) -> str:
    """The address of a gRPC peer string without its port ("ipv4:10.0.0.7:51234" → "10.0.0.7",
    "ipv6:[::1]:5" → "::1"); other transports (unix sockets) as they are."""
    kind, _, rest = unquote(peer).partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0]
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]")
    return peer


def _edge_address(context: grpc.aio.ServicerContext) -> str:
    """The client address the edge names, normalised; "" without one, or with anything but an IP
    address (which is ignored rather than made a caller of its own)."""
    for key, value in context.invocation_metadata() or ():
        if key == CLIENT_ADDRESS_HEADER and isinstance(value, str):
            try:
                return str(ipaddress.ip_address(value.strip()))
            except ValueError:
                return ""
    return ""


class RunningAsks:
    """At most `limit` questions of one caller run at once (its streams included until their last
    reply is taken), on one event loop.

    Without it one reader took every place of the server: many connections (each allowed 32
    streams) of questions it never reads held all the server's calls until the write timeout, and
    then opened more; or simply enough questions at once to fill every answer slot.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._running: dict[str, int] = {}

    @contextmanager
    def slot(self, who: Caller, retry_after_seconds: float) -> Iterator[None]:
        if not who.capped:
            yield
            return
        running = self._running.get(who.key, 0)
        if running >= self.limit:
            wait = max(1, math.ceil(retry_after_seconds))
            raise ResourceExhausted(
                f"{running} questions of this caller are running, the most one caller may ask at once; "
                f"retry in {wait} s, when one is answered",
                retry_after_seconds=wait,
            )
        self._running[who.key] = running + 1
        try:
            yield
        finally:
            if self._running[who.key] == 1:
                del self._running[who.key]
            else:
                self._running[who.key] -= 1
