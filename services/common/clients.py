"""Client side: one channel factory and deadline propagation.

Channels keep connections alive and retry UNAVAILABLE through the gRPC service config (so a
restarting peer is absorbed transparently); every call carries a deadline, derived from the
incoming call's own deadline when there is one, and the `x-request-id` of the call being served,
and, when tracing is on, the W3C trace context. A channel made with `ChannelSecurity` dials TLS
(verifying the server, presenting a client certificate for mTLS) and sends a bearer token on
every call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import structlog

from services.common.auth import AUTHORIZATION_KEY, AuthSettings, caller
from services.common.errors import DeadlineExceeded
from services.common.interceptors import REQUEST_ID_KEY
from services.common.tls import TlsSettings, channel_credentials
from services.common.tracing import client_interceptors

TokenSource = Callable[[], str | None]

# Leaves the caller time to turn a downstream timeout into its own answer.
_DEADLINE_MARGIN_S = 0.05


def channel_service_config(max_attempts: int = 4) -> str:
    """Service config: round_robin over the target's addresses, and UNAVAILABLE retried with
    exponential backoff, for every method."""
    return json.dumps(
        {
            # Every address the target resolves to gets calls: `dns:///` a headless Service, or
            # `ipv4:host:port,host:port`; one address works as before.
            "loadBalancingConfig": [{"round_robin": {}}],
            "methodConfig": [
                {
                    "name": [{}],
                    "waitForReady": False,
                    "retryPolicy": {
                        "maxAttempts": max_attempts,
                        "initialBackoff": "0.1s",
                        "maxBackoff": "1s",
                        "backoffMultiplier": 2,
                        "retryableStatusCodes": ["UNAVAILABLE"],
                    },
                }
            ],
        }
    )


@dataclass(frozen=True)
class ChannelSecurity:
    """How a client channel authenticates: TLS when the settings dial it, a bearer token per call."""

    tls: TlsSettings | None = None
    token: TokenSource | None = None

    @classmethod
    def for_client(cls, auth: AuthSettings, tls: TlsSettings) -> ChannelSecurity:
        """A client's own credentials: the shared service token, if any."""
        token = auth.token.get_secret_value() if auth.token else None
        return cls(tls if tls.dials_tls else None, (lambda: token) if token else None)

    @classmethod
    def for_service(cls, auth: AuthSettings, tls: TlsSettings) -> ChannelSecurity:
        """A service calling another: the shared service token, or else the token of the call being
        served (so a JWT deployment needs no service token: the agent searches as its caller)."""
        if auth.token is not None:
            return cls.for_client(auth, tls)

        def forwarded() -> str | None:
            identity = caller()
            return identity.bearer if identity is not None else None

        return cls(tls if tls.dials_tls else None, forwarded if auth.enabled else None)

    @classmethod
    def from_env(cls) -> ChannelSecurity:
        return cls.for_client(AuthSettings(), TlsSettings())


def make_channel(
    target: str, max_message_bytes: int = 16 * 1024 * 1024, security: ChannelSecurity | None = None
) -> grpc.aio.Channel:
    """A grpc.aio channel with keepalive, the UNAVAILABLE retry policy and `security`'s credentials."""
    security = security or ChannelSecurity()
    options = [
        ("grpc.enable_retries", 1),
        ("grpc.service_config", channel_service_config()),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        # Its own connections: with grpc's process-wide pool a new channel shares the backoff of
        # an older channel whose server went away, and fails fast against a restarted one.
        ("grpc.use_local_subchannel_pool", 1),
    ]
    interceptors = [*client_interceptors(), *(kind(security.token) for kind in _METADATA_INTERCEPTORS)]
    if security.tls is None:
        return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
    if security.tls.server_name:
        options.append(("grpc.ssl_target_name_override", security.tls.server_name))
    credentials = channel_credentials(security.tls)
    return grpc.aio.secure_channel(target, credentials, options=options, interceptors=interceptors)


class _OutgoingMetadata:
    """Adds to a call's metadata the request id of the call being served (so the services a call
    reaches log under the caller's `x-request-id`), unless the call names one itself, and
    `authorization: Bearer <token>` when the source has a token."""

    def __init__(self, token: TokenSource | None) -> None:
        self._token = token

    def _with_metadata(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        request_id = structlog.contextvars.get_contextvars().get("request_id")
        token = self._token() if self._token is not None else None
        if not request_id and not token:
            return details
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        if request_id and REQUEST_ID_KEY not in metadata:
            metadata[REQUEST_ID_KEY] = request_id
        if token:
            metadata[AUTHORIZATION_KEY] = f"Bearer {token}"
        return grpc.aio.ClientCallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
        )


# grpc.aio files an interceptor under one kind of call only, so each kind has its own class.
class _UnaryUnaryMetadata(_OutgoingMetadata, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(self._with_metadata(client_call_details), request)


class _UnaryStreamMetadata(_OutgoingMetadata, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(self._with_metadata(client_call_details), request)


class _StreamUnaryMetadata(_OutgoingMetadata, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return await continuation(self._with_metadata(client_call_details), request_iterator)


class _StreamStreamMetadata(_OutgoingMetadata, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return await continuation(self._with_metadata(client_call_details), request_iterator)


_METADATA_INTERCEPTORS = (
    _UnaryUnaryMetadata,
    _UnaryStreamMetadata,
    _StreamUnaryMetadata,
    _StreamStreamMetadata,
)


def deadline_from(context: grpc.aio.ServicerContext | None, default_seconds: float) -> float:
    """Timeout for an outgoing call: the default, capped by what the incoming call has left."""
    remaining = context.time_remaining() if context is not None else None
    if remaining is None:
        return default_seconds
    if remaining <= _DEADLINE_MARGIN_S:
        raise DeadlineExceeded("the caller's deadline has passed")
    return min(default_seconds, remaining - _DEADLINE_MARGIN_S)
