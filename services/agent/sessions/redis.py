"""Redis session store, for several agent replicas sharing their sessions.

Keys, under a configurable prefix p (default "glossator:sessions:"):
  p + "session:{id}"               hash  the SessionRecord fields (timestamps in epoch microseconds)
  p + "session:{id}:turns"         list  the kept turns as JSON, oldest first, LTRIMmed to max_turns
  p + "user:{user_id}"             zset  the user's session ids by last activity: the listing
  p + "open-by-quota:{key}"        zset  the quota key's sessions not ended, by last activity: their cap
  p + "stored:{key}"               hash  the quota key's sessions with turns: "{stored_bytes} {forget_at}"
                                         (epoch microseconds), summed for the storage quota
  p + "open"                       zset  ids of sessions not ended, by last activity: what sweep expires
  p + "closed"                     zset  ids of ended sessions, by end time: what sweep purges
  p + "page-token-key"             string  the key that signs ListSessions page tokens, in hex
  p + "questions:{id}"             hash  the session's question bucket (tokens, at ms), for a minute

Every write is one MULTI transaction; a read-modify-write WATCHes what it read (the session hash,
with its turns and its quota key's stored bytes when a turn is appended, or the quota key's open
sessions when creating one) and runs again when another replica changed it first.
The session keys expire at `Lifecycle.forget_at`, so Redis forgets ended sessions after the
retention period even when no sweep runs; the indexes are pruned of such ids when they are met.
Not for Redis Cluster: one transaction spans keys of different slots.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import RedisError

from services.agent.sessions.base import (
    QUESTIONS,
    Change,
    SessionStore,
    TurnChange,
    log,
    not_found,
    unavailable,
)
from services.agent.sessions.lifecycle import (
    Clock,
    SessionConfig,
    SessionRecord,
    to_micros,
    utc_now,
)
from services.agent.sessions.model import Turn
from services.agent.sessions.paging import KEY_BYTES, Cursor
from services.common.errors import Unavailable
from services.common.limits import over_rate

DEFAULT_KEY_PREFIX = "glossator:sessions:"
# A session's question bucket (services/common/limits.RateLimit's rule), updated atomically here so
# that every replica spends from the same one. KEYS[1] the bucket; ARGV per_minute, now in ms.
# Returns {1 if a token was taken, the tokens left as a string (Lua numbers become integers)}.
_TAKE_TOKEN = """
local per_minute, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(stored[1]) or per_minute, tonumber(stored[2]) or now
tokens = math.min(per_minute, tokens + math.max(0, now - at) * per_minute / 60000)
local taken = 0
if tokens >= 1 then tokens = tokens - 1; taken = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], 60000)
return {taken, tostring(tokens)}
"""

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
        password: str | None = None,
    ) -> None:
        """`password` AUTHs every connection, unless the URL carries one of its own."""
        super().__init__(config or SessionConfig(), clock)
        # A few quick retries ride out a failover; then callers get Unavailable within a second or
        # two instead of redis-py's default of ten retries.
        self._redis = Redis.from_url(
            url,
            password=password,
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
        self._page_token_key = f"{key_prefix}page-token-key"

    @classmethod
    async def open(
        cls,
        url: str,
        config: SessionConfig | None = None,
        *,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        clock: Clock = utc_now,
        timeout_seconds: float = 2.0,
        password: str | None = None,
    ) -> RedisSessionStore:
        """Connects and pings, so a wrong URL, a wrong password or a server that is down shows at
        startup, and warns when the server would lose the sessions on a restart."""
        store = cls(
            url,
            config,
            key_prefix=key_prefix,
            clock=clock,
            timeout_seconds=timeout_seconds,
            password=password,
        )
        try:
            with store._errors():
                await store._redis.ping()
        except Unavailable:
            await store.close()
            raise
        await store._warn_unless_durable()
        return store

    async def _warn_unless_durable(self) -> None:
        """Logs loudly when Redis writes nothing to disk: its restart would lose acknowledged turns."""
        try:
            appendonly = (await self._redis.config_get("appendonly")).get("appendonly")
            save = (await self._redis.config_get("save")).get("save")
        except RedisError as exc:  # CONFIG renamed away or denied by an ACL, as managed services do
            log.warning(
                "session_store_durability_unknown",
                where=self._where,
                error=str(exc),
                advice="could not read CONFIG appendonly/save: make sure this Redis persists its data "
                "(appendonly yes, or RDB snapshots with save), or a restart loses every session",
            )
            return
        if appendonly != "yes" and not save:
            log.warning(
                "session_store_not_durable",
                where=self._where,
                appendonly=appendonly,
                save=save,
                advice="this Redis keeps sessions in memory only (neither appendonly nor save is on): "
                "a restart loses every session and acknowledged turn; set appendonly yes",
            )

    async def close(self) -> None:
        await self._redis.aclose()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except RedisError as exc:
            raise unavailable("redis", self._where, exc) from exc

    def _session_key(self, session_id: str) -> str:
        return f"{self._prefix}session:{session_id}"

    def _turns_key(self, session_id: str) -> str:
        return f"{self._prefix}session:{session_id}:turns"

    def _user_key(self, user_id: str) -> str:
        return f"{self._prefix}user:{user_id}"

    def _open_by_quota_key(self, key: str) -> str:
        return f"{self._prefix}open-by-quota:{key}"

    def _stored_key(self, key: str) -> str:
        return f"{self._prefix}stored:{key}"

    def _stage(self, pipe: Pipeline, record: SessionRecord, turn: Turn | None) -> None:
        """Queues every write that storing `record` (and appending `turn`) takes, indexes included."""
        session_id = record.session_id
        key, turns_key = self._session_key(session_id), self._turns_key(session_id)
        user_key, quota_open_key = self._user_key(record.user_id), self._open_by_quota_key(record.quota_key)
        last_active = to_micros(record.last_active_at)
        forget_at = self.lifecycle.forget_at(record)
        ttl = max(forget_at - self._clock(), _MIN_TTL)
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
        if record.stored_bytes:
            stored_key = self._stored_key(record.quota_key)
            pipe.hset(stored_key, session_id, f"{record.stored_bytes} {to_micros(forget_at)}")
            pipe.pexpire(stored_key, self.config.expire_after + self.config.retention)
        if record.closed_at is not None:
            pipe.zrem(self._open_key, session_id)
            pipe.zrem(quota_open_key, session_id)
            pipe.zadd(self._closed_key, {session_id: to_micros(record.closed_at)})
        else:
            pipe.zadd(self._open_key, {session_id: last_active})
            pipe.zadd(quota_open_key, {session_id: last_active})
            # Open sessions are staged at their last activity (now): all expired by then.
            pipe.pexpire(quota_open_key, self.config.expire_after)

    async def _insert(self, record: SessionRecord, active_since: datetime) -> bool:
        open_key = self._open_by_quota_key(record.quota_key)
        since = to_micros(active_since)

        async def attempt(pipe: Pipeline) -> bool:
            open_sessions = await pipe.zcount(open_key, since, "+inf")
            pipe.multi()
            if open_sessions >= self.config.max_open_per_user:
                return False
            pipe.zremrangebyscore(open_key, "-inf", f"({since}")  # expired: they count no more
            self._stage(pipe, record, None)
            return True

        with self._errors():
            return await self._redis.transaction(attempt, open_key, value_from_callable=True)

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

        async def attempt(pipe: Pipeline) -> tuple[SessionRecord, SessionRecord]:
            fields = await pipe.hgetall(key)
            if not fields:
                await pipe.zrem(self._open_key, session_id)  # forgotten by its TTL
                raise not_found(session_id)
            before = SessionRecord.from_fields(fields)
            after = change(before)
            if turn is not None and after != before:
                after = await self._with_turn_bytes(pipe, after, turn)
            pipe.multi()
            if after != before:
                self._stage(pipe, after, turn)
            return before, after

        with self._errors():
            return await self._redis.transaction(attempt, key, value_from_callable=True)

    async def _with_turn_bytes(self, pipe: Pipeline, record: SessionRecord, turn: Turn) -> SessionRecord:
        """The record with `turn`'s bytes added and those of the turn it pushes out of the kept ones
        taken off; `storage_full` when its quota key keeps its quota already. Watches what it reads."""
        turns_key, stored_key = self._turns_key(record.session_id), self._stored_key(record.quota_key)
        await pipe.watch(turns_key, stored_key)
        stored, _ = self._tally(await pipe.hgetall(stored_key))
        if stored >= self.config.max_stored_bytes_per_user:
            raise self.storage_full(stored)
        kept = await pipe.llen(turns_key)
        dropped = (
            await pipe.lrange(turns_key, 0, kept - self.config.max_turns)
            if kept >= self.config.max_turns
            else []
        )
        change = len(turn.to_json().encode()) - sum(len(body.encode()) for body in dropped)
        return replace(record, stored_bytes=record.stored_bytes + change)

    def _tally(self, entries: dict[str, str]) -> tuple[int, list[str]]:
        """The bytes of a quota key's `stored` hash, and the ids of the sessions Redis has
        forgotten since (their forget_at passed), which count no more."""
        now = to_micros(self._clock())
        stored, forgotten = 0, []
        for session_id, entry in entries.items():
            size, forget_at = entry.split()
            if int(forget_at) < now:
                forgotten.append(session_id)
            else:
                stored += int(size)
        return stored, forgotten

    async def _stored_bytes(self, key: str) -> int:
        stored_key = self._stored_key(key)
        with self._errors():
            stored, forgotten = self._tally(await self._redis.hgetall(stored_key))
            if forgotten:
                await self._redis.hdel(stored_key, *forgotten)
        return stored

    async def _least_recent_open(self, key: str, active_since: datetime, count: int) -> list[str]:
        with self._errors():
            return await self._redis.zrange(
                self._open_by_quota_key(key),
                to_micros(active_since),
                "+inf",
                byscore=True,
                offset=0,
                num=count,
            )

    async def _forget_open(self, key: str, session_id: str) -> None:
        with self._errors():
            await self._redis.zrem(self._open_by_quota_key(key), session_id)

    async def _update_turn(self, session_id: str, query_id: str, change: TurnChange) -> Turn | None:
        key, turns_key = self._session_key(session_id), self._turns_key(session_id)

        async def attempt(pipe: Pipeline) -> Turn | None:
            fields = await pipe.hgetall(key)
            bodies = await pipe.lrange(turns_key, 0, -1)
            pipe.multi()
            for position, body in enumerate(bodies):
                turn = Turn.from_json(body)
                if fields and turn.query_id == query_id:
                    # WATCHed: a turn appended (and the list trimmed) meanwhile makes this run again.
                    changed = change(turn).to_json()
                    pipe.lset(turns_key, position, changed)
                    record = SessionRecord.from_fields(fields)
                    grown = len(changed.encode()) - len(body.encode())
                    self._stage(pipe, replace(record, stored_bytes=record.stored_bytes + grown), None)
                    return turn
            return None

        with self._errors():
            return await self._redis.transaction(attempt, key, turns_key, value_from_callable=True)

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

    async def _take_question_token(self, session_id: str) -> None:
        per_minute = self.config.questions_per_minute
        now_ms = to_micros(self._clock()) // 1000
        with self._errors():
            taken, tokens = await self._redis.eval(
                _TAKE_TOKEN, 1, f"{self._prefix}questions:{session_id}", per_minute, now_ms
            )
        if not taken:
            raise over_rate(per_minute, QUESTIONS, float(tokens))

    async def _iter_turns(self, active_since: datetime) -> AsyncIterator[tuple[SessionRecord, Turn]]:
        since = to_micros(active_since)
        with self._errors():
            # Open sessions by last activity; ended ones by their end, which is not before it.
            ids = await self._redis.zrange(self._open_key, since, "+inf", byscore=True)
            ids += await self._redis.zrange(self._closed_key, since, "+inf", byscore=True)
        for start in range(0, len(ids), _BATCH):
            with self._errors():
                async with self._redis.pipeline(transaction=False) as pipe:
                    for session_id in ids[start : start + _BATCH]:
                        pipe.hgetall(self._session_key(session_id))
                        pipe.lrange(self._turns_key(session_id), 0, -1)
                    replies = await pipe.execute()
            for fields, bodies in zip(replies[::2], replies[1::2], strict=True):
                if fields:  # forgotten since it was listed
                    record = SessionRecord.from_fields(fields)
                    for body in bodies:
                        yield record, Turn.from_json(body)

    async def _idle_open(self, before: datetime) -> list[str]:
        with self._errors():
            return await self._redis.zrange(self._open_key, "-inf", f"({to_micros(before)}", byscore=True)

    async def _load_page_token_key(self) -> bytes:
        with self._errors():
            await self._redis.set(self._page_token_key, secrets.token_hex(KEY_BYTES), nx=True)
            return bytes.fromhex(await self._redis.get(self._page_token_key))

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
