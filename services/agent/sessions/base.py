"""The session store interface, and the flow every backend shares.

Backends implement a few storage primitives (`_insert`, `_fetch`, `_update`, `_update_turn`,
`_iter_user`, `_iter_turns`, `_least_recent_open`, `_stored_bytes`, `_idle_open`, `_purge`,
`_load_page_token_key`, `close`); ownership, lifecycle, the caps on open sessions and stored bytes,
history, paging and the sweep are written here once, so both backends behave the same by
construction and one test suite checks both.

Both caps count per quota key (`lifecycle.quota_key`): a named user, or one anonymous caller. When
every anonymous session counted as one user, one visitor's session-less questions ended everybody
else's sessions.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass, replace
from datetime import datetime

from services.agent.sessions.access import SessionTokens
from services.agent.sessions.lifecycle import Clock, Lifecycle, SessionConfig, SessionRecord, quota_key
from services.agent.sessions.model import Feedback, Session, Turn
from services.agent.sessions.paging import Cursor, PageTokens
from services.common.errors import NotFound, Reason, ResourceExhausted, Unavailable, Violations
from services.common.limits import RateLimit
from services.common.logging import get_logger

QUESTIONS = "questions in one session"
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100

log = get_logger("glossator.agent.sessions")
# Tries to start a session when the user's quota is full, each after ending the oldest open one
# (concurrent starts may take the room made).
_ROLL_OVER_ATTEMPTS = 3

Change = Callable[[SessionRecord], SessionRecord]
TurnChange = Callable[[Turn], Turn]


@dataclass(frozen=True)
class SweepResult:
    expired: int
    """Sessions newly stored as EXPIRED."""
    purged: int
    """Ended sessions deleted, with their turns, after the retention period."""


def not_found(session_id: str) -> NotFound:
    """The one answer for a missing session and for another user's, so ids leak nothing."""
    return NotFound(f"session {session_id} not found")


def unavailable(backend: str, where: str, cause: object) -> Unavailable:
    """The error a storage failure becomes: the client learns that the store failed, and only the
    log learns where it is (host, URL or path) and why."""
    log.warning("session_store_unavailable", backend=backend, where=where, error=str(cause))
    return Unavailable(
        "session store unavailable",
        reason=Reason.DEPENDENCY_UNAVAILABLE,
        metadata={"service": "sessions"},
    )


class SessionStore(ABC):
    """Sessions bound to a user; every read and write checks the owner."""

    def __init__(self, config: SessionConfig, clock: Clock) -> None:
        self.config = config
        self.lifecycle = Lifecycle(config)
        self._clock = clock
        self._page_tokens: PageTokens | None = None
        self._session_tokens: SessionTokens | None = None
        self._question_rate = RateLimit(
            max(1, config.questions_per_minute), QUESTIONS, clock=lambda: clock().timestamp()
        )

    # Storage primitives, one implementation per backend.

    @abstractmethod
    async def _insert(self, record: SessionRecord, active_since: datetime) -> bool:
        """Stores a new session unless its quota key already has `max_open_per_user` sessions open
        and active since `active_since` (older ones have expired); False then.

        The count and the insert are one transaction, so concurrent creations cannot overshoot.
        """

    @abstractmethod
    async def _fetch(self, session_id: str, turns: int) -> tuple[SessionRecord, list[Turn]] | None:
        """The record and its newest `turns` kept turns, oldest first, read together; None if missing."""

    @abstractmethod
    async def _update(
        self, session_id: str, change: Change, turn: Turn | None = None
    ) -> tuple[SessionRecord, SessionRecord]:
        """Applies `change` to the stored record atomically and returns (before, after).

        The result is stored, with `turn` appended and the oldest turns beyond max_turns dropped, in
        one transaction, unless `change` returned the record unchanged. The record's stored_bytes
        follow (the turn's JSON added, the dropped turns' taken off); when its quota key would then
        keep more than `max_stored_bytes_per_user`, `storage_full` is raised instead. An exception
        raised by `change` writes nothing. A missing session raises `not_found`.
        """

    @abstractmethod
    async def _update_turn(self, session_id: str, query_id: str, change: TurnChange) -> Turn | None:
        """Replaces the kept turn `query_id` of the session by `change(turn)` atomically, its
        session's stored_bytes following the size change (never refused for room: a rating is at
        most a short comment); returns the turn as it was before, or None (nothing written) when
        the session does not keep that turn."""

    @abstractmethod
    def _iter_user(self, user_id: str, after: Cursor | None) -> AsyncIterator[SessionRecord]:
        """The user's sessions after `after`: most recently active first, ties by descending id."""

    @abstractmethod
    def _iter_turns(self, active_since: datetime) -> AsyncIterator[tuple[SessionRecord, Turn]]:
        """Every kept turn of every session active at or after `active_since` (any owner, any
        state), with its session's record; in no particular order."""

    @abstractmethod
    async def _least_recent_open(self, key: str, active_since: datetime, count: int) -> list[str]:
        """Ids of the quota key's `count` least recently active sessions not ended and active since
        `active_since`, least recent first."""

    async def _forget_open(self, key: str, session_id: str) -> None:  # noqa: B027 (a no-op by default)
        """Drops an ended or forgotten session from the quota key's open ones: only a backend that
        keeps that index apart from the records has anything to do."""

    @abstractmethod
    async def _stored_bytes(self, key: str) -> int:
        """The bytes of turns kept by the quota key's sessions not yet forgotten (`stored_bytes`)."""

    @abstractmethod
    async def _idle_open(self, before: datetime) -> list[str]:
        """Ids of the sessions not yet closed whose last activity is before `before`."""

    @abstractmethod
    async def _purge(self, closed_before: datetime) -> int:
        """Deletes the sessions closed before `closed_before`, with their turns; returns how many."""

    @abstractmethod
    async def _load_page_token_key(self) -> bytes:
        """The key that signs page tokens and session tokens, made once and kept in the storage, so
        that every process using it, now or after a restart, shares it."""

    @abstractmethod
    async def close(self) -> None: ...

    async def _take_question_token(self, session_id: str) -> None:
        """One token of the session's question bucket, or ResourceExhausted. Here in this process's
        memory; a backend shared by several processes overrides it to count in the storage."""
        self._question_rate.take(session_id)

    # The shared flow.

    async def create(self, user_id: str, collection: str, key: str = "") -> Session:
        """Starts a session of `user_id` counted against the quota key `key` (default: the user's).

        At the quota of open sessions the key's own least recently active ones are ended to make
        room, rather than the question refused: every question asked without a session starts one
        (a reader's one-off questions, a page reloaded), open sessions only free themselves when
        they expire a day later, and a refusal would lock the caller (or everyone behind its
        address) out until then. Ending is confined to the key's sessions, which stay readable.
        Past the storage quota it is refused (`check_room`).
        """
        now = self._clock()
        record = SessionRecord(
            session_id=str(uuid.uuid4()),
            user_id=user_id,
            collection=collection,
            created_at=now,
            last_active_at=now,
            quota_key=key or quota_key(user_id),
        )
        await self.check_room(record.quota_key)
        for _ in range(_ROLL_OVER_ATTEMPTS):
            if await self._insert(record, active_since=now - self.config.expire_after):
                return self._session(record, now)
            await self._end_least_recent(record.quota_key, now)
        raise ResourceExhausted(
            f"too many sessions are being started at once for this caller (at most "
            f"{self.config.max_open_per_user} open); retry in a moment"
        )

    async def check_room(self, key: str) -> None:
        """RESOURCE_EXHAUSTED (`storage_full`) when the quota key keeps its quota of bytes already:
        checked before a question runs, so that it is refused before an answer is computed (the
        write of its turn checks again, atomically)."""
        stored = await self._stored_bytes(key)
        if stored >= self.config.max_stored_bytes_per_user:
            raise self.storage_full(stored)

    def storage_full(self, stored: int) -> ResourceExhausted:
        """Refused, not made room for by deleting older turns: those are answers already delivered
        and acknowledged, which their reader and the book's authors (feedback, the coverage report)
        still read; deleting them early would let a flood of questions erase them. Only the caller
        at its quota is refused; room comes back as its ended sessions pass retention."""
        quota = self.config.max_stored_bytes_per_user
        return ResourceExhausted(
            f"the session history kept for this caller has reached its quota ({stored / 2**20:.1f} of "
            f"{quota / 2**20:.1f} MiB): no new question can be stored until ended sessions are "
            f"deleted, {self.config.retention.days} days after they end",
            reason=Reason.SESSION_STORAGE_FULL,
            metadata={"quota_bytes": str(quota), "stored_bytes": str(stored)},
            retryable=False,
        )

    async def _end_least_recent(self, key: str, now: datetime) -> None:
        """Ends the quota key's least recently active open sessions: a tenth of the quota at once,
        so that questions starting sessions together find room instead of each ending the same one."""
        count = max(1, self.config.max_open_per_user // 10)
        for session_id in await self._least_recent_open(key, now - self.config.expire_after, count):
            with suppress(NotFound):
                await self._update(session_id, lambda record: self.lifecycle.after_end(record, now))
            # Ended now, or before, or forgotten by its TTL: either way it holds no room, even where
            # the index still lists it (an entry the record no longer matches must not lock the
            # caller out until the index expires).
            await self._forget_open(key, session_id)
            log.info("session_rolled_over", session_id=session_id)

    async def get(self, session_id: str, user_id: str, *, with_turns: bool = True) -> Session:
        """The session with its kept turns (oldest first), or without them for a cheaper read."""
        record, turns = await self._owned(session_id, user_id, self.config.max_turns if with_turns else 0)
        return self._session(record, self._clock(), turns)

    async def owner(self, session_id: str) -> str | None:
        """The user id owning the session, None when there is no such session: a caller reaching
        it without the owner's id can be told which id (user or session token) it is missing."""
        found = await self._fetch(session_id, 0)
        return None if found is None else found[0].user_id

    async def history(self, session_id: str, user_id: str, limit: int | None = None) -> list[Turn]:
        """The newest `limit` kept turns (all when None), oldest first: the next run's context."""
        if limit is not None and limit < 0:
            violations = Violations()
            violations.add("limit", f"must not be negative (got {limit})")
            violations.raise_if_any()
        wanted = self.config.max_turns if limit is None else min(limit, self.config.max_turns)
        _, turns = await self._owned(session_id, user_id, wanted)
        return turns

    async def append_turn(self, session_id: str, user_id: str, turn: Turn) -> Session:
        """Stores a finished turn and (re)activates the session; ended sessions are read-only.

        Returns the session without its turns.
        """
        now = self._clock()
        change = self._as_owner(user_id, self.lifecycle.after_turn, now)
        _, record = await self._update(session_id, change, turn)
        return self._session(record, now)

    async def rate(
        self, session_id: str, user_id: str, query_id: str, feedback: Feedback
    ) -> tuple[Session, Feedback | None]:
        """Stores the reader's feedback with the turn `query_id` (ended sessions too: it changes no
        answer); returns the session (without turns) and the feedback replaced, if any. A query the
        session does not keep (never asked there, or dropped by the history cap) is not found, as
        another user's session is."""
        record, _ = await self._owned(session_id, user_id, 0)  # a session's owner never changes
        before = await self._update_turn(session_id, query_id, lambda turn: replace(turn, feedback=feedback))
        if before is None:
            raise NotFound(f"query {query_id} not found in session {session_id}")
        return self._session(record, self._clock()), before.feedback

    async def turns_since(self, since: datetime) -> AsyncIterator[tuple[SessionRecord, Turn]]:
        """Every kept turn finished at or after `since`, of every user: what the coverage report
        reads (an admin's view; no owner check)."""
        async with aclosing(self._iter_turns(since)) as turns:
            async for record, turn in turns:
                if turn.created_at >= since:
                    yield record, turn

    async def take_question(self, session_id: str) -> None:
        """Counts a question asked in the session against `config.questions_per_minute` (0: no
        limit): over it, RESOURCE_EXHAUSTED saying when to try again. Call it once the caller is
        known to own the session, so that nobody spends another's budget."""
        if self.config.questions_per_minute:
            await self._take_question_token(session_id)

    async def end(self, session_id: str, user_id: str) -> Session:
        """Terminates the session (idempotent); returns it without its turns."""
        now = self._clock()
        _, record = await self._update(session_id, self._as_owner(user_id, self.lifecycle.after_end, now))
        return self._session(record, now)

    async def sweep(self) -> SweepResult:
        """Stores EXPIRED for sessions idle past expire_after, then deletes those ended before retention.

        Meant to run periodically. States read in between are right anyway (they are derived); the
        sweep makes expiry durable and frees the storage of sessions past retention.
        """
        now = self._clock()
        expired = 0
        for session_id in await self._idle_open(now - self.config.expire_after):
            try:
                before, after = await self._update(session_id, lambda r: self.lifecycle.after_sweep(r, now))
            except NotFound:
                continue  # deleted since it was listed
            expired += before != after
        purged = await self._purge(now - self.config.retention)
        return SweepResult(expired=expired, purged=purged)

    # Helpers.

    async def _tokens(self) -> PageTokens:
        if self._page_tokens is None:
            self._page_tokens = PageTokens(await self._load_page_token_key())
        return self._page_tokens

    async def session_tokens(self) -> SessionTokens:
        """Issues and checks the tokens of anonymous sessions, under the same stored key."""
        if self._session_tokens is None:
            self._session_tokens = SessionTokens(await self._load_page_token_key())
        return self._session_tokens

    async def _owned(self, session_id: str, user_id: str, turns: int) -> tuple[SessionRecord, list[Turn]]:
        found = await self._fetch(session_id, turns)
        if found is None or found[0].user_id != user_id:
            raise not_found(session_id)
        return found

    @staticmethod
    def _as_owner(
        user_id: str, transition: Callable[[SessionRecord, datetime], SessionRecord], now: datetime
    ) -> Change:
        """The change `transition` makes at `now`, refused (as not found) unless user_id owns it."""

        def change(record: SessionRecord) -> SessionRecord:
            if record.user_id != user_id:
                raise not_found(record.session_id)
            return transition(record, now)

        return change

    def _session(self, record: SessionRecord, now: datetime, turns: Sequence[Turn] = ()) -> Session:
        return Session(
            session_id=record.session_id,
            user_id=record.user_id,
            collection=record.collection,
            state=self.lifecycle.state(record, now),
            created_at=record.created_at,
            last_active_at=record.last_active_at,
            turn_count=record.turn_count,
            turns=list(turns),
            quota_key=record.quota_key,
        )

    # Named after the RPC; defined last so that `list[...]` above still reads as the builtin.
    async def list(
        self, user_id: str, page_size: int = 0, page_token: str = "", include_ended: bool = False
    ) -> tuple[list[Session], str]:
        """One page of the user's own sessions, most recently active first, without turns.

        page_size 0 means 20 (at most 100). Returns the page and the token of the next one ("" at the
        end). Expired and terminated sessions are left out unless include_ended.
        """
        violations = Violations()
        violations.check(
            0 <= page_size <= MAX_PAGE_SIZE, "page_size", f"must be between 0 and {MAX_PAGE_SIZE}"
        )
        after = None
        if page_token:
            tokens = await self._tokens()
            try:
                after = tokens.decode(page_token, user_id)
            except (ValueError, TypeError):
                violations.add("page_token", "is not a token this service returned for this user")
        violations.raise_if_any()

        size = page_size or DEFAULT_PAGE_SIZE
        now = self._clock()
        page: list[Session] = []
        async with aclosing(self._iter_user(user_id, after)) as records:
            async for record in records:
                session = self._session(record, now)
                if include_ended or not session.state.ended:
                    page.append(session)
                if len(page) > size:
                    break
        if len(page) > size:
            return page[:size], (await self._tokens()).encode(Cursor.after(page[size - 1]), user_id)
        return page, ""
