"""The coverage report: what a book is missing, read from the turns the session stores keep.

Per collection over a window: how many questions were asked and how they went, the most asked
questions (compared without case, spacing and closing punctuation, so "What is X?" and "what is
x" count together), the questions declined as not covered, the answers readers rated down, and
the answers validation replaced (policy enforce) or flagged as not grounded (policy annotate).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from datetime import datetime

from services.agent.sessions import Rating, Turn
from services.agent.sessions.lifecycle import SessionRecord

# user_context keys a client may name the reader's page with (the widget sends page_url).
PAGE_URL_KEYS = ("page_url", "url")
_SPACES = re.compile(r"\s+")
_CLOSING = re.compile(r"[\s?!.…]+$")


def question_key(query: str) -> str:
    return _CLOSING.sub("", _SPACES.sub(" ", query.strip().casefold()))


@dataclass(frozen=True)
class ReportedTurn:
    session_id: str
    turn: Turn

    @property
    def page_url(self) -> str:
        return next((self.turn.user_context[k] for k in PAGE_URL_KEYS if k in self.turn.user_context), "")


@dataclass
class AskedQuestion:
    query: str  # as first asked
    count: int
    first_asked_at: datetime
    last_asked_at: datetime


@dataclass
class CollectionCoverage:
    collection: str
    questions: int = 0
    not_covered: int = 0
    rated_up: int = 0
    rated_down: int = 0
    replaced: int = 0
    flagged: int = 0
    asked: dict[str, AskedQuestion] = field(default_factory=dict)
    declined: list[ReportedTurn] = field(default_factory=list)
    rated_down_answers: list[ReportedTurn] = field(default_factory=list)
    replaced_or_flagged: list[ReportedTurn] = field(default_factory=list)

    def add(self, session_id: str, turn: Turn) -> None:
        self.questions += 1
        reported = ReportedTurn(session_id, turn)
        key = question_key(turn.query)
        asked = self.asked.setdefault(key, AskedQuestion(turn.query, 0, turn.created_at, turn.created_at))
        asked.count += 1
        if turn.created_at < asked.first_asked_at:
            asked.query, asked.first_asked_at = turn.query, turn.created_at
        asked.last_asked_at = max(asked.last_asked_at, turn.created_at)
        if turn.not_covered:
            self.not_covered += 1
            self.declined.append(reported)
        rating = turn.feedback.rating if turn.feedback else None
        self.rated_up += rating is Rating.UP
        if rating is Rating.DOWN:
            self.rated_down += 1
            self.rated_down_answers.append(reported)
        self.replaced += turn.grounding.replaced
        self.flagged += turn.grounding.flagged
        if turn.grounding.replaced or turn.grounding.flagged:
            self.replaced_or_flagged.append(reported)

    def most_asked(self, limit: int) -> list[AskedQuestion]:
        ranked = sorted(self.asked.values(), key=lambda q: (-q.count, -q.last_asked_at.timestamp(), q.query))
        return ranked[:limit]

    @staticmethod
    def newest(turns: list[ReportedTurn], limit: int) -> list[ReportedTurn]:
        return sorted(turns, key=lambda r: r.turn.created_at, reverse=True)[:limit]


async def coverage(
    turns: AsyncIterable[tuple[SessionRecord, Turn]], collection: str = ""
) -> list[CollectionCoverage]:
    """The report of every collection (or only `collection`), by collection name."""
    report: dict[str, CollectionCoverage] = {}
    async for record, turn in turns:
        if collection and record.collection != collection:
            continue
        report.setdefault(record.collection, CollectionCoverage(record.collection)).add(
            record.session_id, turn
        )
    return [report[name] for name in sorted(report)]
