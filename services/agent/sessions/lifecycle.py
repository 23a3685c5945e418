"""Session lifecycle rules, written once for every backend.

Only the two ending states are stored (`closed`); CREATED, ACTIVE, INACTIVE and a not yet swept
EXPIRED are derived from the stored timestamps at read time with an injectable clock, so every
replica agrees on a session's state without writing on every read, and tests can move time.

    CREATED --first turn--> ACTIVE --idle > inactive_after--> INACTIVE --next turn--> ACTIVE
    any open state --idle > expire_after--> EXPIRED (read-only; `sweep` persists it)
    any state --end--> TERMINATED (read-only)

A session that never got a turn stays CREATED until it expires.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from services.agent.sessions.model import SessionState
from services.common.errors import FailedPrecondition

Clock = Callable[[], datetime]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_micros(moment: datetime) -> int:
    """Integer microseconds since the epoch: exact, sortable, and a valid Redis sorted-set score."""
    return (moment - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    return _EPOCH + micros * _MICROSECOND


def quota_key(user_id: str, anonymous_caller: str = "") -> str:
    """Whom a session counts against: its user, or for an anonymous session the caller that
    started it (`services/agent/callers.py`). The prefixes keep a user named like a caller apart."""
    return f"anonymous:{anonymous_caller}" if anonymous_caller else f"user:{user_id}"


@dataclass(frozen=True)
class SessionConfig:
    """Idle times of the lifecycle, the history cap, the caps on a user's open sessions and stored
    bytes, how long ended sessions are kept, and how many questions a session may ask a minute.

    Both caps count per quota key (`quota_key`): a named user's sessions together, and an anonymous
    caller's (one address, one principal) together, never all anonymous sessions as one."""

    inactive_after: timedelta = timedelta(minutes=30)
    expire_after: timedelta = timedelta(hours=24)
    max_turns: int = 100
    max_open_per_user: int = 100
    max_stored_bytes_per_user: int = 64 * 1024 * 1024
    retention: timedelta = timedelta(days=30)
    questions_per_minute: int = 0  # per session; 0: no limit

    def __post_init__(self) -> None:
        if not timedelta(0) < self.inactive_after < self.expire_after:
            raise ValueError("need 0 < inactive_after < expire_after")
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if self.max_open_per_user < 1:
            raise ValueError("max_open_per_user must be at least 1")
        if self.max_stored_bytes_per_user < 1:
            raise ValueError("max_stored_bytes_per_user must be at least 1")
        if self.retention < timedelta(0):
            raise ValueError("retention must not be negative")
        if self.questions_per_minute < 0:
            raise ValueError("questions_per_minute must not be negative")


@dataclass(frozen=True, kw_only=True)
class SessionRecord:
    """What a backend stores of a session besides its turns."""

    session_id: str
    user_id: str
    collection: str
    created_at: datetime
    last_active_at: datetime
    turn_count: int = 0
    closed: SessionState | None = None
    closed_at: datetime | None = None
    # Whom the session counts against (`quota_key`), and the bytes of its kept turns as stored.
    quota_key: str = ""
    stored_bytes: int = 0

    def __post_init__(self) -> None:
        if not self.quota_key:
            object.__setattr__(self, "quota_key", quota_key(self.user_id))

    def to_fields(self) -> dict[str, str | int | None]:
        """Flat fields shared by both backends: SQLite columns and Redis hash fields."""
        return {
            "session_id": self.session_id,
            "user_id": self.user_id,
            "collection": self.collection,
            "created_at": to_micros(self.created_at),
            "last_active_at": to_micros(self.last_active_at),
            "turn_count": self.turn_count,
            "closed": self.closed.value if self.closed else None,
            "closed_at": to_micros(self.closed_at) if self.closed_at else None,
            "quota_key": self.quota_key,
            "stored_bytes": self.stored_bytes,
        }

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> SessionRecord:
        """Reads `to_fields` back; Redis gives every value as a string and omits the empty ones (and
        sessions stored before quota keys have none: they count against their user)."""
        closed, closed_at = fields.get("closed"), fields.get("closed_at")
        return cls(
            session_id=fields["session_id"],
            user_id=fields["user_id"],
            collection=fields["collection"],
            created_at=from_micros(int(fields["created_at"])),
            last_active_at=from_micros(int(fields["last_active_at"])),
            turn_count=int(fields["turn_count"]),
            closed=SessionState(closed) if closed else None,
            closed_at=from_micros(int(closed_at)) if closed_at else None,
            quota_key=fields.get("quota_key") or "",
            stored_bytes=int(fields.get("stored_bytes") or 0),
        )


class Lifecycle:
    """The state rules; each transition returns the record to store (unchanged when there is none)."""

    def __init__(self, config: SessionConfig) -> None:
        self.config = config

    def state(self, record: SessionRecord, now: datetime) -> SessionState:
        if record.closed:
            return record.closed
        idle = now - record.last_active_at
        if idle > self.config.expire_after:
            return SessionState.EXPIRED
        if record.turn_count == 0:
            return SessionState.CREATED
        if idle > self.config.inactive_after:
            return SessionState.INACTIVE
        return SessionState.ACTIVE

    def after_turn(self, record: SessionRecord, now: datetime) -> SessionRecord:
        state = self.state(record, now)
        if state.ended:
            raise FailedPrecondition(
                f"session {record.session_id} is {state.value} and read-only; start a new session"
            )
        return replace(record, last_active_at=now, turn_count=record.turn_count + 1)

    def after_end(self, record: SessionRecord, now: datetime) -> SessionRecord:
        if record.closed is SessionState.TERMINATED:
            return record
        return replace(record, closed=SessionState.TERMINATED, closed_at=now)

    def after_sweep(self, record: SessionRecord, now: datetime) -> SessionRecord:
        """Persists EXPIRED, dated when the session expired rather than when a sweep noticed it."""
        if record.closed or self.state(record, now) is not SessionState.EXPIRED:
            return record
        return replace(
            record,
            closed=SessionState.EXPIRED,
            closed_at=record.last_active_at + self.config.expire_after,
        )

    def forget_at(self, record: SessionRecord) -> datetime:
        """When the session may be deleted: `retention` after it ended, or after it will expire."""
        ended_at = record.closed_at or record.last_active_at + self.config.expire_after
        return ended_at + self.config.retention
