"""The edge's Envoy bootstrap, as rendered (Envoy itself validates it in tests/integration/test_edge.py)."""

from __future__ import annotations

import pytest

from services.edge.config import EdgeSettings
from services.edge.envoy_config import _bucket, render, retry_seconds


@pytest.mark.parametrize("per_minute", [1, 7, 60, 600, 1200, 5000, 100_000])
def test_a_bucket_refills_at_the_configured_rate_within_two_percent(per_minute) -> None:
    bucket = _bucket(per_minute)
    interval = float(bucket["fill_interval"].removesuffix("s"))
    assert interval >= 0.05 and bucket["max_tokens"] == per_minute
    assert bucket["tokens_per_fill"] * 60 / interval == pytest.approx(per_minute, rel=0.02)


def test_the_retry_delay_is_one_token_of_the_slower_bucket() -> None:
    assert retry_seconds(EdgeSettings(requests_per_minute_per_ip=3, requests_per_minute_per_key=600)) == 20
    assert retry_seconds(EdgeSettings(requests_per_minute_per_ip=600, requests_per_minute_per_key=600)) == 1


@pytest.mark.parametrize(
    "origin", ["docs.example.org", "https://docs.example.org/", "ftp://x", " https://a.b"]
)
def test_an_allowed_origin_must_be_an_origin(origin) -> None:
    with pytest.raises(ValueError, match="is not an origin"):
        EdgeSettings(allowed_origins=[origin])


def test_only_the_calls_a_page_needs_are_routed() -> None:
    routes = render(EdgeSettings())["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0][
        "typed_config"
    ]["route_config"]["virtual_hosts"][0]["routes"]
    paths = [r["match"].get("path") for r in routes if "route" in r]
    assert paths == [
        f"/glossator.v1.AgentService/{m}"
        for m in ("Ask", "AskStream", "GetSession", "EndSession", "SubmitFeedback")
    ]
    assert routes[-1]["direct_response"]["status"] == 404
