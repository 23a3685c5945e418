"""The server interceptor every Glossator server runs.

Per call it binds request_id / rpc / peer to the log context (request_id from `x-request-id`
metadata when it is 1-128 characters of [A-Za-z0-9._:-], else made up: it lands in every log
line, so a client must not choose what it looks like) and returns the request_id in trailing
metadata, records Prometheus count, latency, status code and calls in flight, and turns domain
errors into gRPC statuses with google.rpc details. An unexpected exception is answered INTERNAL
with the request_id, never with the exception text. Each call ends in one log line, `rpc_done`:
a failed one carries its code, message, reason and ms (an unexpected exception its traceback).

It also enforces the server's limit of concurrent RPCs (RESOURCE_EXHAUSTED past it) and, when
auth is on, verifies the caller's bearer token and role (UNAUTHENTICATED, PERMISSION_DENIED),
except for health and reflection: probes carry no token, and a server full of slow calls must
still tell its prober how it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import grpc
import structlog
from google.rpc import error_details_pb2, status_pb2
from grpc._cython.cygrpc import ExecuteBatchError  # what a write to a call its client left raises
from grpc_status import rpc_status

from services.common.auth import Authenticator, role_for
from services.common.errors import (
    ERROR_DOMAIN,
    DeadlineExceeded,
    FieldViolation,
    GlossatorError,
    InvalidArgument,
    ResourceExhausted,
)
from services.common.infrastructure_rpcs import INFRASTRUCTURE_SERVICES
from services.common.limits import ConcurrencyLimit
from services.common.metrics import rpc_finished, rpc_started

REQUEST_ID_KEY = "x-request-id"
# Seconds until a refused call may pass (HTTP's Retry-After): readable through the browser edge,
# whose Connect bridge drops grpc-* trailers.
RETRY_AFTER_KEY = "retry-after"
# gRPC's retry pushback trailer: a negative value tells the client's retry policy not to retry.
RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
_SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# By (request streaming, response streaming).
_HANDLER_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}
log = structlog.get_logger("glossator.rpc")


def _sent_request_id(context: grpc.aio.ServicerContext) -> str | bytes | None:
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_KEY:
            return value
    return None


def status_for(error: GlossatorError) -> grpc.Status:
    """The grpc.Status (code, message, google.rpc details in trailers) of a domain error.

    Details: BadRequest for InvalidArgument, ErrorInfo (domain glossator.dev) when the error has
    a reason, RetryInfo (with `retry-after` and a matching pushback) when it says when to retry. A non-retryable error also carries `grpc-retry-pushback-ms: -1`, which stops the
    caller's retry policy (our channels retry UNAVAILABLE) from trying again.
    """
    status = status_pb2.Status(code=error.code.value[0], message=error.message)
    if isinstance(error, InvalidArgument):
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in error.violations
            ]
        )
        status.details.add().Pack(bad_request)
    if error.reason:
        info = error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata)
        status.details.add().Pack(info)
    retry_after = error.retry_after_seconds if isinstance(error, ResourceExhausted) else None
    if retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromSeconds(retry_after)
        status.details.add().Pack(retry)
    rich = rpc_status.to_status(status)
    trailing = tuple(rich.trailing_metadata)
    if not error.retryable:
        trailing += ((RETRY_PUSHBACK_KEY, "-1"),)
    elif retry_after is not None:
        trailing += ((RETRY_AFTER_KEY, str(retry_after)), (RETRY_PUSHBACK_KEY, str(retry_after * 1000)))
    return _Status(rich.code, rich.details, trailing)


@dataclass(frozen=True)
class _Status(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


class _Call:
    """Bookkeeping of one RPC: context binding, error translation, metrics."""

    def __init__(self, service: str, method: str, context: grpc.aio.ServicerContext) -> None:
        self.service, self.method, self.context = service, method, context
        sent = _sent_request_id(context)
        safe = isinstance(sent, str) and _SAFE_REQUEST_ID.fullmatch(sent) is not None
        self.request_id = sent if safe else uuid.uuid4().hex
        self.start = time.perf_counter()
        self.code = grpc.StatusCode.OK
        self.cancelled = False
        # What rpc_done says of a failure: message and reason, and exc_info when unexpected.
        self.failure: dict[str, Any] = {}
        rpc_started(service, method)
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(
            request_id=self.request_id, rpc=f"{service}/{method}", peer=context.peer()
        )
        if sent is not None and not safe:
            log.info("request_id_ignored", reason="not 1-128 characters of A-Z a-z 0-9 . _ : -")
        context.set_trailing_metadata(((REQUEST_ID_KEY, self.request_id),))

    async def fail(self, error: BaseException) -> None:
        """Ends the call as the error deserves (always raises): aborts and cancellations go on
        as they are, domain errors become their status, anything else INTERNAL."""
        if isinstance(error, grpc.aio.AbortError):
            raise error
        if _is_cancellation(error) or self.context.cancelled():
            # Also whatever the handler meets once its client cancelled (a read of a call the
            # server then stopped under it): the call ended with the client, not in error.
            self.cancelled = True
            raise error
        trailer = ((REQUEST_ID_KEY, self.request_id),)
        if isinstance(error, GlossatorError):
            status = status_for(error)
            self.code = status.code
            self.failure = {"message": error.message, "reason": error.reason or None}
            await self.context.abort(status.code, status.details, tuple(status.trailing_metadata) + trailer)
        self.code = grpc.StatusCode.INTERNAL
        self.failure = {"message": str(error), "reason": None, "exc_info": error}
        await self.context.abort(
            grpc.StatusCode.INTERNAL, f"internal error (request_id={self.request_id})", trailer
        )

    def finish_soon(self) -> None:
        """Metrics and the closing log line wait for the next turn of the event loop, when gRPC
        has the reply: the caller does not wait for them."""
        asyncio.get_running_loop().call_soon(self._finish)

    def _finish(self) -> None:
        code = grpc.StatusCode.CANCELLED if self.cancelled else (self.context.code() or self.code)
        if not isinstance(code, grpc.StatusCode):
            code = self.code
        elapsed = time.perf_counter() - self.start
        rpc_finished(self.service, self.method, code.name, elapsed)
        write = log.error if "exc_info" in self.failure else log.info
        write("rpc_done", code=code.name, ms=round(elapsed * 1000, 2), **self.failure)


class ObservabilityInterceptor(grpc.aio.ServerInterceptor):
    """`authenticator` None: auth off. `admin_methods`: full method names only admins may call."""

    def __init__(
        self,
        max_concurrent_rpcs: int,
        authenticator: Authenticator | None = None,
        admin_methods: frozenset[str] = frozenset(),
        write_timeout_seconds: float = 30.0,
    ) -> None:
        # A method's handler is the same object on every call; so is its wrapped twin.
        self._wrapped: dict[grpc.RpcMethodHandler, grpc.RpcMethodHandler] = {}
        self._limit = ConcurrencyLimit(max_concurrent_rpcs, "calls")
        self._authenticator = authenticator
        self._admin_methods = admin_methods
        self._write_timeout_seconds = write_timeout_seconds

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        wrapped = self._wrapped.get(handler)
        if wrapped is None:
            method = handler_call_details.method
            guard = self._guard(method)
            wrapped = self._wrapped[handler] = _observed_handler(
                handler, method, self._limit, guard, self._write_timeout_seconds
            )
        return wrapped

    def _guard(self, full_method: str) -> Guard:
        """What a call of this method must pass before it runs: the token and role check, if any."""
        service = full_method.lstrip("/").partition("/")[0]
        authenticator = self._authenticator
        if authenticator is None or service in INFRASTRUCTURE_SERVICES:
            return _open
        role = role_for(full_method, self._admin_methods)

        def check(context: grpc.aio.ServicerContext) -> None:
            authenticator.authorize(context.invocation_metadata() or (), role)

        return check


Slot = Callable[[], AbstractContextManager[None]]
Guard = Callable[[grpc.aio.ServicerContext], None]


def _open(_context: grpc.aio.ServicerContext) -> None:
    """Anyone may call (auth off, or health and reflection)."""


def _observed_handler(
    handler: grpc.RpcMethodHandler,
    full_method: str,
    limit: ConcurrencyLimit,
    guard: Guard,
    write_timeout_seconds: float,
) -> grpc.RpcMethodHandler:
    """The handler with per-call bookkeeping, the guard, the RPC limit and the interceptor's own
    request decoding."""
    service, _, method = full_method.lstrip("/").partition("/")
    slot = contextlib.nullcontext if service in INFRASTRUCTURE_SERVICES else limit.slot
    # The interceptor decodes requests itself, so that undecodable bytes (bad UTF-8, a wrong
    # message) are INVALID_ARGUMENT with a reason rather than gRPC's bare UNKNOWN.
    decode = _decoder(handler.request_deserializer, streaming=handler.request_streaming)
    behavior = handler.unary_unary or handler.stream_unary or handler.unary_stream or handler.stream_stream
    factory = _HANDLER_FACTORIES[handler.request_streaming, handler.response_streaming]
    if handler.response_streaming:
        wrapped = _wrap_stream(
            behavior,
            decode,
            slot,
            guard,
            service,
            method,
            request_streaming=handler.request_streaming,
            write_timeout_seconds=write_timeout_seconds,
        )
    else:
        wrapped = _wrap_unary(behavior, decode, slot, guard, service, method)
    return factory(wrapped, request_deserializer=None, response_serializer=handler.response_serializer)


def _decode_one(deserialize: Callable[[bytes], Any], raw: bytes) -> Any:
    try:
        return deserialize(raw)
    except Exception as error:
        raise InvalidArgument([FieldViolation("request", f"cannot be decoded: {error}")]) from error


def _decoder(deserialize: Callable[[bytes], Any] | None, *, streaming: bool) -> Callable[[Any], Any]:
    """Turns the raw request (or stream of them) into messages, lazily for streams."""
    if deserialize is None:
        return lambda request: request

    async def decode_stream(raw_messages: AsyncIterator[bytes]) -> AsyncIterator[Any]:
        async for raw in raw_messages:
            yield _decode_one(deserialize, raw)

    if streaming:
        return decode_stream
    return lambda raw: _decode_one(deserialize, raw)


def _wrap_unary(
    behavior: Callable[..., Awaitable[Any]],
    decode: Callable[[Any], Any],
    slot: Slot,
    guard: Guard,
    service: str,
    method: str,
):
    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        call = _Call(service, method, context)
        try:
            guard(context)
            with slot():
                return await behavior(decode(request), context)
        except BaseException as error:
            await call.fail(error)
        finally:
            call.finish_soon()

    return unary


def _wrap_stream(
    behavior: Callable[..., AsyncIterator[Any]],
    decode: Callable[[Any], Any],
    slot: Slot,
    guard: Guard,
    service: str,
    method: str,
    *,
    request_streaming: bool,
    write_timeout_seconds: float,
):
    async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        """Writes with context.write, each write bounded in time: a yielded reply waits on HTTP/2
        flow control for as long as the client keeps its window shut. It stays an async generator
        (that yields nothing) because interceptors before it, OpenTelemetry's, iterate the handler."""
        call = _Call(service, method, context)
        accepted = False
        try:
            guard(context)
            with slot():
                if request_streaming:
                    # Headers now say "accepted": a client that waits for them before writing never
                    # has a write race an early refusal (grpc/grpc#36066 turns that into INTERNAL).
                    await context.send_initial_metadata(())
                    accepted = True
                async with contextlib.aclosing(behavior(decode(request), context)) as items:
                    async for item in items:
                        try:
                            async with asyncio.timeout(write_timeout_seconds):
                                await context.write(item)
                        except TimeoutError:
                            raise DeadlineExceeded(
                                f"the client took no reply for {write_timeout_seconds:g} s"
                            ) from None
                        except ExecuteBatchError as error:  # core refused the write: the call is over
                            raise asyncio.CancelledError() from error  # (its client left), not a fault
        except BaseException as error:
            if accepted and not _is_cancellation(error):
                await _drain(request, DRAIN_BEFORE_ERROR_SECONDS)
            await call.fail(error)
        finally:
            call.finish_soon()
        for nothing in ():  # the generator's yield, never reached: the replies went out above
            yield nothing

    return stream


# A refusal after the headers (the first message read: a collection of another model, no room for
# a new one) ends a call the client may still be writing to; gRPC core then reports INTERNAL to
# that client instead of the status (grpc/grpc#36066). Reading what it still sends, for at most
# this long, lets the status arrive.
DRAIN_BEFORE_ERROR_SECONDS = 2.0


async def _drain(requests: Any, seconds: float) -> None:
    """Reads and drops the client's remaining messages until it half-closes or `seconds` pass."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(seconds):
            async for _ in requests:
                pass


def _is_cancellation(error: BaseException) -> bool:
    return isinstance(error, asyncio.CancelledError | GeneratorExit | KeyboardInterrupt)
