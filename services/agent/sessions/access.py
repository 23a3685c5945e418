"""Session tokens: the proof of access to an anonymous session.

An anonymous session has no owner to check a caller against, so knowing its id must not be enough
to read it: the caller who started it gets a token with its first answer, and later questions,
GetSession and EndSession must present it. The token is an HMAC-SHA256 tag of the session id under
the storage's key (with its own label, so that no page token's tag can serve as one): nothing to
store, and every replica and restart accepts it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

_LABEL = b"glossator session token\0"
_TAG_BYTES = 24


class SessionTokens:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def issue(self, session_id: str) -> str:
        return base64.urlsafe_b64encode(self._tag(session_id)).rstrip(b"=").decode()

    def valid(self, session_id: str, token: str) -> bool:
        return hmac.compare_digest(self.issue(session_id).encode(), token.encode())

    def _tag(self, session_id: str) -> bytes:
        return hmac.new(self._key, _LABEL + session_id.encode(), hashlib.sha256).digest()[:_TAG_BYTES]
