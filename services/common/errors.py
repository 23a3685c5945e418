"""Domain errors and their gRPC statuses.

Domain code raises these; the server interceptor turns them into the matching status (with
google.rpc details), so servicers never build statuses by hand and nothing escapes as INTERNAL.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc


class GlossatorError(Exception):
    """Base of every error that maps to a gRPC status."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(GlossatorError):
    """Bad input; carries google.rpc BadRequest field violations."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, violations: list[FieldViolation], message: str | None = None) -> None:
        self.violations = violations
        summary = "; ".join(f"{v.field}: {v.description}" for v in violations)
        super().__init__(message or f"invalid request: {summary}")


class NotFound(GlossatorError):
    code = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(GlossatorError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class ResourceExhausted(GlossatorError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


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
