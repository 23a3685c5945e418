"""ListSessions page tokens: opaque, signed, and strictly read back.

A token is base64url of an HMAC-SHA256 tag followed by the position as compact JSON. The tag covers
the position and the user id, so a token is only good for the listing that returned it: anything
malformed, altered, out of range or another user's is refused as bad input before it reaches the
storage (a huge number once overflowed SQLite). The key lives in the session storage itself, so
every replica and every restart accepts the tokens of the others.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import uuid
from dataclasses import dataclass

from services.agent.sessions.lifecycle import SessionRecord, to_micros
from services.agent.sessions.model import Session

KEY_BYTES = 32
_TAG_BYTES = 16
# A real token is about 120 characters; anything much longer is not one of ours.
_MAX_TOKEN_CHARS = 256
_TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")
# Exact as a Redis sorted-set score (a double) and as a SQLite integer; reached in the year 2255.
_MAX_MICROS = 2**53


@dataclass(frozen=True)
class Cursor:
    """A place in a user's listing: just after this session, in (last activity, id) descending order.

    Keyset paging rather than offsets: a session created between two pages shifts nothing, so no
    session is listed twice; one reactivated meanwhile moves to the front, ahead of the cursor.
    """

    last_active_us: int
    session_id: str

    @classmethod
    def after(cls, item: Session | SessionRecord) -> Cursor:
        return cls(to_micros(item.last_active_at), item.session_id)


class PageTokens:
    """Turns cursors into tokens for one user's listing and back, with the storage's key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def encode(self, cursor: Cursor, user_id: str) -> str:
        position = json.dumps([cursor.last_active_us, cursor.session_id], separators=(",", ":")).encode()
        token = base64.urlsafe_b64encode(self._tag(position, user_id) + position)
        return token.rstrip(b"=").decode()

    def decode(self, token: str, user_id: str) -> Cursor:
        """The cursor `encode` made for this user; ValueError for anything else."""
        if len(token) > _MAX_TOKEN_CHARS or not _TOKEN_ALPHABET.fullmatch(token):
            raise ValueError("not base64url")
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))  # binascii.Error is a ValueError
        tag, position = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        if not hmac.compare_digest(tag, self._tag(position, user_id)):
            raise ValueError("bad signature")
        last_active_us, session_id = json.loads(position)
        # type() rather than isinstance: JSON true is not a time.
        if type(last_active_us) is not int or not 0 <= last_active_us < _MAX_MICROS:
            raise ValueError("time out of range")
        if type(session_id) is not str or str(uuid.UUID(session_id)) != session_id:
            raise ValueError("not a session id")
        return Cursor(last_active_us, session_id)

    def _tag(self, position: bytes, user_id: str) -> bytes:
        signed = position + b"\0" + user_id.encode()  # JSON has no NUL: the split is unambiguous
        return hmac.new(self._key, signed, hashlib.sha256).digest()[:_TAG_BYTES]
