"""Domain errors and their gRPC statuses.

Domain code raises these; the server interceptor turns them into the matching status (with
google.rpc details), so servicers never build statuses by hand and nothing escapes as INTERNAL.

An error may name its `reason` (a `Reason` constant): the status then carries a
google.rpc.ErrorInfo of domain `ERROR_DOMAIN` with the reason and `metadata`, which clients
(the CLI) read to give advice that fits. `retryable=False` tells gRPC clients with a retry
policy not to retry the call (trailer `grpc-retry-pushback-ms: -1`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import grpc

ERROR_DOMAIN = "glossator.dev"


class Reason:
    """ErrorInfo reasons of domain glossator.dev (UPPER_SNAKE_CASE, stable: clients match on them)."""

    # The LLM endpoint refused the request for good (HTTP 400/401/403/404/422): its settings are
    # wrong. FAILED_PRECONDITION; metadata endpoint, model, http_status.
    LLM_REJECTED = "LLM_REJECTED"
    # The LLM endpoint is down, failing (5xx) or too slow. UNAVAILABLE, retryable=False;
    # metadata endpoint, model (and http_status when it answered).
    LLM_UNAVAILABLE = "LLM_UNAVAILABLE"
    # The stream failed after part of the answer was sent: that partial text is void.
    # metadata may carry `cause` (the code name of the underlying failure).
    ANSWER_VOID = "ANSWER_VOID"
    # The retrieval or validation service cannot be reached. metadata `service`.
    DEPENDENCY_UNAVAILABLE = "DEPENDENCY_UNAVAILABLE"
    # The collection a call names was never ingested (NOT_FOUND). metadata `collection`.
    COLLECTION_NOT_FOUND = "COLLECTION_NOT_FOUND"
    # The session history kept for the caller (a user, or an anonymous caller) is at its quota:
    # no new question is stored until ended sessions pass retention. RESOURCE_EXHAUSTED,
    # retryable=False; metadata quota_bytes, stored_bytes.
    SESSION_STORAGE_FULL = "SESSION_STORAGE_FULL"


class GlossatorError(Exception):
    """Base of every error that maps to a gRPC status.

    `reason` (a `Reason` constant) and `metadata` become a google.rpc.ErrorInfo detail;
    `retryable=False` asks clients' retry policies not to retry the call.
    """

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        retryable: bool = True,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})
        self.retryable = retryable


class InvalidArgument(GlossatorError):
    """Bad input; carries google.rpc BadRequest field violations."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(
        self,
        violations: list[FieldViolation],
        message: str | None = None,
        *,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        retryable: bool = True,
    ) -> None:
        self.violations = violations
        summary = "; ".join(f"{v.field}: {v.description}" for v in violations)
        super().__init__(
            message or f"invalid request: {summary}", reason=reason, metadata=metadata, retryable=retryable
        )


class Unauthenticated(GlossatorError):
    """No bearer token, or one that is not valid (wrong, expired, from another issuer)."""

    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(GlossatorError):
    """A verified caller without the role the call needs (a reader calling Ingest)."""

    code = grpc.StatusCode.PERMISSION_DENIED


class NotFound(GlossatorError):
    code = grpc.StatusCode.NOT_FOUND


def collection_not_found(name: str, advice: str = "") -> NotFound:
    """The one way every service says a collection does not exist, with a reason clients match on."""
    return NotFound(
        f"collection {name!r} does not exist{advice}",
        reason=Reason.COLLECTION_NOT_FOUND,
        metadata={"collection": name},
    )


class FailedPrecondition(GlossatorError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(GlossatorError):
    """The call lost to a concurrent one (another ingest holds the collection); a later retry can succeed."""

    code = grpc.StatusCode.ABORTED


class ResourceExhausted(GlossatorError):
    """Over a limit. With `retry_after_seconds` the status says when to retry: google.rpc.RetryInfo,
    a `retry-after` trailer in seconds (what a browser client reads through the edge) and gRPC's
    `grpc-retry-pushback-ms`."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(
        self,
        message: str,
        *,
        retry_after_seconds: int | None = None,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        retryable: bool = True,
    ) -> None:
        super().__init__(message, reason=reason, metadata=metadata, retryable=retryable)
        self.retry_after_seconds = retry_after_seconds


class Unavailable(GlossatorError):
    """A dependency (vector store, another service, a model endpoint) cannot be reached."""

    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(GlossatorError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


@dataclass(frozen=True)
class FieldViolation:
    field: str
    description: str


@dataclass
class Violations:
    """Collects every problem of a request, so the caller learns them all at once.

    >>> v = Violations(); v.check(len(q) <= 1000, "query", "at most 1000 characters"); v.raise_if_any()
    """

    items: list[FieldViolation] = field(default_factory=list)

    def add(self, field_name: str, description: str) -> None:
        self.items.append(FieldViolation(field_name, description))

    def check(self, ok: bool, field_name: str, description: str) -> bool:
        if not ok:
            self.add(field_name, description)
        return ok

    def raise_if_any(self) -> None:
        if self.items:
            raise InvalidArgument(list(self.items))

    def text(self, field_name: str, value: str, *, max_chars: int, required: bool = True) -> str:
        """Checks a free-text field; returns it stripped."""
        stripped = value.strip()
        if required and not stripped:
            self.add(field_name, "must not be empty")
        elif len(value) > max_chars:
            self.add(field_name, f"must be at most {max_chars} characters (got {len(value)})")
        return stripped

    def in_range(self, field_name: str, value: float, low: float, high: float) -> bool:
        return self.check(low <= value <= high, field_name, f"must be between {low} and {high} (got {value})")
