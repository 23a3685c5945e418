"""Client side: one channel factory and deadline propagation.

Channels keep connections alive and retry UNAVAILABLE through the gRPC service config (so a
restarting peer is absorbed transparently); every call carries a deadline, derived from the
incoming call's own deadline when there is one.
"""

from __future__ import annotations

import json

import grpc

from services.common.errors import DeadlineExceeded

# Leaves the caller time to turn a downstream timeout into its own answer.
_DEADLINE_MARGIN_S = 0.05


def retry_service_config(max_attempts: int = 4) -> str:
    """Service config retrying UNAVAILABLE with exponential backoff, for every method."""
    return json.dumps(
        {
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
            ]
        }
    )


def make_channel(target: str, max_message_bytes: int = 16 * 1024 * 1024) -> grpc.aio.Channel:
    """An insecure grpc.aio channel with keepalive and the UNAVAILABLE retry policy."""
    options = [
        ("grpc.enable_retries", 1),
        ("grpc.service_config", retry_service_config()),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
    ]
    return grpc.aio.insecure_channel(target, options=options)


def deadline_from(context: grpc.aio.ServicerContext | None, default_seconds: float) -> float:
    """Timeout for an outgoing call: the default, capped by what the incoming call has left."""
    remaining = context.time_remaining() if context is not None else None
    if remaining is None:
        return default_seconds
    if remaining <= _DEADLINE_MARGIN_S:
        raise DeadlineExceeded("the caller's deadline has passed")
    return min(default_seconds, remaining - _DEADLINE_MARGIN_S)
