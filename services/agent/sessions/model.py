"""Session domain values: what a conversation is, independent of where it is stored.

They mirror glossator.v1 Session, Turn, Source and ToolCallRecord so the servicer translates field by
field. Turns are stored as JSON in every backend; `Turn.to_json` / `Turn.from_json` is that format.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from enum import StrEnum


class SessionState(StrEnum):
    CREATED = "created"
    ACTIVE = "active"
    INACTIVE = "inactive"
    EXPIRED = "expired"
    TERMINATED = "terminated"

    @property
    def ended(self) -> bool:
        """Ended sessions are read-only and left out of listings unless asked for."""
        return self in (SessionState.EXPIRED, SessionState.TERMINATED)


@dataclass(frozen=True, kw_only=True)
class Source:
    """A retrieved chunk an answer cites as [index]."""

    index: int
    chunk_id: str
    source_url: str = ""
    section_title: str = ""
    section_path: list[str] = field(default_factory=list)
    chunk_index: int = 0
    relevance_score: float = 0.0
    extracted_text: str = ""
    title: str = ""
    document_id: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolCallRecord:
    """A tool call of a turn, kept so the next run sees what was already looked up."""

    name: str
    arguments: str
    output: str


class Rating(StrEnum):
    UP = "up"
    DOWN = "down"


@dataclass(frozen=True, kw_only=True)
class Feedback:
    """A reader's rating of an answer; a later one replaces it."""

    rating: Rating
    comment: str
    submitted_at: datetime

    def to_dict(self) -> dict[str, str]:
        return {
            "rating": self.rating.value,
            "comment": self.comment,
            "submitted_at": self.submitted_at.isoformat(),
        }

    @classmethod
    def from_dict(cls, body: dict[str, str]) -> Feedback:
        return cls(
            rating=Rating(body["rating"]),
            comment=body["comment"],
            submitted_at=datetime.fromisoformat(body["submitted_at"]),
        )


@dataclass(frozen=True, kw_only=True)
class Grounding:
    """How validation judged a turn's answer (glossator.v1 GroundingSummary)."""

    status: str = ""  # validated | replaced | unavailable | skipped; "" for turns stored before it was kept
    is_grounded: bool = False
    grounding_score: float = 0.0
    claims: int = 0
    supported_claims: int = 0
    citations_found: int = 0
    citations_valid: int = 0
    # Grounded is not answered (ValidateResponse.answers_question); True for turns stored before
    # it was kept, and for an answer nobody validated (is_grounded is false there already).
    answers_question: bool = True

    @property
    def replaced(self) -> bool:
        """The model's answer failed validation and was replaced (policy enforce)."""
        return self.status == "replaced"

    @property
    def flagged(self) -> bool:
        """Delivered with a verdict of not grounded, or of not an answer (policy annotate)."""
        return self.status == "validated" and not (self.is_grounded and self.answers_question)


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One finished question and answer, with how it was judged: by validation, and by the reader.

    Turns stored before `not_covered`, `grounding` and `feedback` existed read with their defaults.
    """

    query_id: str
    query: str
    answer: str
    created_at: datetime
    sources: list[Source] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    user_context: dict[str, str] = field(default_factory=dict)
    selected_text: str = ""
    not_covered: bool = False
    grounding: Grounding = field(default_factory=Grounding)
    feedback: Feedback | None = None

    def to_json(self) -> str:
        body = asdict(self) | {
            "created_at": self.created_at.isoformat(),
            "feedback": self.feedback.to_dict() if self.feedback else None,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Turn:
        body = json.loads(text)
        return cls(
            **body
            | {
                "created_at": datetime.fromisoformat(body["created_at"]),
                "sources": [Source(**source) for source in body["sources"]],
                "tool_calls": [ToolCallRecord(**call) for call in body["tool_calls"]],
                "grounding": Grounding(**body.get("grounding", {})),
                "feedback": Feedback.from_dict(body["feedback"]) if body.get("feedback") else None,
            }
        )


@dataclass(frozen=True, kw_only=True)
class Session:
    """A conversation as callers see it; `state` is derived from its timestamps when it is read.

    turn_count counts every finished turn, including those dropped by the history cap; `turns` holds
    the kept ones, oldest first, and is empty unless asked for.
    """

    session_id: str
    user_id: str
    collection: str
    state: SessionState
    created_at: datetime
    last_active_at: datetime
    turn_count: int
    turns: list[Turn] = field(default_factory=list)
    quota_key: str = ""  # whom it counts against (sessions.lifecycle.quota_key); not on the wire
