"""RateLimit: a token bucket per key that says when a refused caller may try again; and the widget
key settings that the agent's rate limit protects."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.common.auth import AuthSettings
from services.common.errors import ResourceExhausted
from services.common.limits import RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_minutes_worth_passes_at_once_then_one_token_per_interval() -> None:
    clock = Clock()
    limit = RateLimit(3, "questions", clock=clock)
    for _ in range(3):
        limit.take("s1")
    with pytest.raises(ResourceExhausted) as refused:
        limit.take("s1")
    assert refused.value.retry_after_seconds == 20
    assert refused.value.message == "more than 3 questions a minute: try again in 20 s"
    limit.take("s2")  # each key has its own bucket
    clock.now += 15
    with pytest.raises(ResourceExhausted) as refused:
        limit.take("s1")
    assert refused.value.retry_after_seconds == 5  # a refusal spends nothing: the wait shrinks
    clock.now += 5
    limit.take("s1")


def test_the_oldest_buckets_are_dropped_past_max_keys() -> None:
    limit = RateLimit(1, "calls", max_keys=2, clock=Clock())
    limit.take("a")
    limit.take("b")
    limit.take("c")  # drops a's bucket: a starts full again
    limit.take("a")
    with pytest.raises(ResourceExhausted):
        limit.take("c")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"widget_keys": {"k" * 20: ["https://docs.example.org"]}}, "needs GLOSSATOR_AUTH_TOKEN"),
        ({"token": "t" * 20, "widget_keys": {"short": ["https://docs.example.org"]}}, "at least 16"),
        ({"token": "t" * 20, "widget_keys": {"k" * 20: []}}, "needs the origins"),
        ({"token": "t" * 20, "widget_keys": {"k" * 20: ["docs.example.org"]}}, "is not an origin"),
        (
            {"token": "t" * 20, "widget_keys": {"k" * 20: ["https://docs.example.org/path"]}},
            "is not an origin",
        ),
    ],
)
def test_widget_keys_are_long_bound_to_origins_and_need_the_service_token(fields, problem) -> None:
    with pytest.raises(ValidationError, match=problem):
        AuthSettings(**fields)
