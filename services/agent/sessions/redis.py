"""Redis session store, for several agent replicas sharing their sessions.

Keys, under a configurable prefix p (default "glossator:sessions:"):
  p + "session:{id}"         hash  the SessionRecord fields (timestamps in epoch microseconds)
  p + "session:{id}:turns"   list  the kept turns as JSON, oldest first, LTRIMmed to max_turns
  p + "user:{user_id}"       zset  the user's session ids by last activity: the listing
  p + "open"                 zset  ids of sessions not ended, by last activity: what sweep expires
  p + "closed"               zset  ids of ended sessions, by end time: what sweep purges

Every write is one MULTI transaction; a read-modify-write WATCHes the session hash and retries when
another replica changed it first. The session keys expire at `Lifecycle.forget_at`, so Redis forgets
ended sessions after the retention period even when no sweep runs; the indexes are pruned of such
ids when they are met. Not for Redis Cluster: one transaction spans keys of different slots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import RedisError, WatchError

from services.agent.sessions.base import Change, Cursor, SessionStore, not_found
from services.agent.sessions.lifecycle import (
    Clock,
    SessionConfig,
    SessionRecord,
    to_micros,
    utc_now,
)
from services.agent.sessions.model import Turn
from services.common.errors import Unavailable

DEFAULT_KEY_PREFIX = "glossator:sessions:"

_BATCH = 50
_MIN_TTL = timedelta(milliseconds=1)


class RedisSessionStore(SessionStore):
    """Use `await RedisSessionStore.open(url)`; the constructor does no I/O."""

    def __init__(
        self,
        url: str,
        config: SessionConfig | None = None,
        *,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        clock: Clock = utc_now,
        timeout_seconds: float = 2.0,
    ) -> None:
        super().__init__(config or SessionConfig(), clock)
        # A few quick retries ride out a failover; then callers get Unavailable within a second or
        # two instead of redis-py's default of ten retries.
        self._redis = Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=timeout_seconds,
            socket_timeout=timeout_seconds,
            retry=Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.05), retries=3),
        )
        server = self._redis.connection_pool.connection_kwargs
        self._where = server.get("path") or f"{server.get('host')}:{server.get('port')}/{server.get('db')}"
        self._prefix = key_prefix
        self._open_key = f"{key_prefix}open"
        self._closed_key = f"{key_prefix}closed"

    @classmethod
    async def open(
        cls,
        url: str,
        config: SessionConfig | None = None,
        *,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        clock: Clock = utc_now,
        timeout_seconds: float = 2.0,
    ) -> RedisSessionStore:
        """Connects and pings, so a wrong URL or a server that is down shows at startup."""
        store = cls(url, config, key_prefix=key_prefix, clock=clock, timeout_seconds=timeout_seconds)
        try:
            with store._errors():
                await store._redis.ping()
        except Unavailable:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        await self._redis.aclose()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except RedisError as exc:
            raise Unavailable(f"session store Redis at {self._where} is unavailable: {exc}") from exc

    def _session_key(self, session_id: str) -> str:
        return f"{self._prefix}session:{session_id}"

    def _turns_key(self, session_id: str) -> str:
        return f"{self._prefix}session:{session_id}:turns"

    def _user_key(self, user_id: str) -> str:
        return f"{self._prefix}user:{user_id}"

    def _stage(self, pipe: Pipeline, record: SessionRecord, turn: Turn | None) -> None:
        """Queues every write that storing `record` (and appending `turn`) takes, indexes included."""
        session_id = record.session_id
        key, turns_key = self._session_key(session_id), self._turns_key(session_id)
        user_key = self._user_key(record.user_id)
        last_active = to_micros(record.last_active_at)
        ttl = max(self.lifecycle.forget_at(record) - self._clock(), _MIN_TTL)
        fields = {name: value for name, value in record.to_fields().items() if value is not None}
        pipe.hset(key, mapping=fields)
        if turn is not None:
            pipe.rpush(turns_key, turn.to_json())
            pipe.ltrim(turns_key, -self.config.max_turns, -1)
        pipe.pexpire(key, ttl)
        pipe.pexpire(turns_key, ttl)
        pipe.zadd(user_key, {session_id: last_active})
        # No member outlives this: an open session is forgotten at most expire_after + retention
        # after its last activity, an ended one at most retention after now.
        pipe.pexpire(user_key, self.config.expire_after + self.config.retention)
        if record.closed_at is not None:
            pipe.zrem(self._open_key, session_id)
            pipe.zadd(self._closed_key, {session_id: to_micros(record.closed_at)})
        else:
            pipe.zadd(self._open_key, {session_id: last_active})

    async def _insert(self, record: SessionRecord) -> None:
        with self._errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                self._stage(pipe, record, None)
                await pipe.execute()

    async def _fetch(self, session_id: str, turns: int) -> tuple[SessionRecord, list[Turn]] | None:
        with self._errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(self._session_key(session_id))
                if turns:  # LRANGE -0 -1 would be the whole list
                    pipe.lrange(self._turns_key(session_id), -turns, -1)
                replies = await pipe.execute()
        fields, bodies = replies[0], replies[1] if turns else []
        if not fields:
            return None
        return SessionRecord.from_fields(fields), [Turn.from_json(body) for body in bodies]

    async def _update(
        self, session_id: str, change: Change, turn: Turn | None = None
    ) -> tuple[SessionRecord, SessionRecord]:
        key = self._session_key(session_id)
        with self._errors():
            async with self._redis.pipeline(transaction=True) as pipe:
                while True:
                    await pipe.watch(key)
                    fields = await pipe.hgetall(key)
                    if not fields:
                        await pipe.zrem(self._open_key, session_id)  # forgotten by its TTL
                        raise not_found(session_id)
                    before = SessionRecord.from_fields(fields)
                    after = change(before)
                    if after == before:
                        return before, after
                    pipe.multi()
                    self._stage(pipe, after, turn)
                    try:
                        await pipe.execute()
                    except WatchError:
                        continue  # another writer was first; read again
                    return before, after

    async def _iter_user(self, user_id: str, after: Cursor | None) -> AsyncIterator[SessionRecord]:
        key = self._user_key(user_id)
        with self._errors():
            top: str | int = "+inf"
            if after is not None:
                # Sessions tied with the cursor's activity come first, then strictly older ones.
                tied = await self._redis.zrange(key, after.last_active_us, after.last_active_us, byscore=True)
                rest_of_tie = sorted((i for i in tied if i < after.session_id), reverse=True)
                for record in await self._load(key, rest_of_tie):
                    yield record
                top = f"({after.last_active_us}"
            offset = 0
            while True:
                ids = await self._redis.zrange(
                    key, top, "-inf", desc=True, byscore=True, offset=offset, num=_BATCH
                )
                records = await self._load(key, ids)
                for record in records:
                    yield record
                if len(ids) < _BATCH:
                    return
                offset += len(records)  # the ids of forgotten sessions were removed from the set

    async def _load(self, user_key: str, session_ids: list[str]) -> list[SessionRecord]:
        """The records of these ids, in order; ids whose session Redis forgot leave the user's set."""
        if not session_ids:
            return []
        async with self._redis.pipeline(transaction=False) as pipe:
            for session_id in session_ids:
                pipe.hgetall(self._session_key(session_id))
            rows = await pipe.execute()
        gone = [session_id for session_id, fields in zip(session_ids, rows, strict=True) if not fields]
        if gone:
            await self._redis.zrem(user_key, *gone)
        return [SessionRecord.from_fields(fields) for fields in rows if fields]

    async def _idle_open(self, before: datetime) -> list[str]:
        with self._errors():
            return await self._redis.zrange(self._open_key, "-inf", f"({to_micros(before)}", byscore=True)

    async def _purge(self, closed_before: datetime) -> int:
        with self._errors():
            ids = await self._redis.zrange(
                self._closed_key, "-inf", f"({to_micros(closed_before)}", byscore=True
            )
            if not ids:
                return 0
            async with self._redis.pipeline(transaction=False) as pipe:
                for session_id in ids:
                    pipe.hget(self._session_key(session_id), "user_id")
                owners = await pipe.execute()
            async with self._redis.pipeline(transaction=True) as pipe:
                for session_id, user_id in zip(ids, owners, strict=True):
                    pipe.delete(self._session_key(session_id), self._turns_key(session_id))
                    if user_id is not None:
                        pipe.zrem(self._user_key(user_id), session_id)
                pipe.zrem(self._closed_key, *ids)
                await pipe.execute()
        return len(ids)
