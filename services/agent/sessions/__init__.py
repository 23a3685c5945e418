"""Conversation sessions of the agent service: domain values, lifecycle rules and two stores.

`await SqliteSessionStore.open(data_dir)` is the embedded default; `await RedisSessionStore.open(url)`
lets several agent replicas share their sessions. Both implement `SessionStore`.
"""

from services.agent.sessions.base import SessionStore, SweepResult
from services.agent.sessions.lifecycle import Clock, SessionConfig
from services.agent.sessions.model import (
    Feedback,
    Grounding,
    Rating,
    Session,
    SessionState,
    Source,
    ToolCallRecord,
    Turn,
)
from services.agent.sessions.redis import RedisSessionStore
from services.agent.sessions.sqlite import SqliteSessionStore

__all__ = [
    "Clock",
    "Feedback",
    "Grounding",
    "Rating",
    "RedisSessionStore",
    "Session",
    "SessionConfig",
    "SessionState",
    "SessionStore",
    "Source",
    "SqliteSessionStore",
    "SweepResult",
    "ToolCallRecord",
    "Turn",
]
