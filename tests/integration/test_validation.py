"""Validate through the real server: verdicts, citations, and the documented input limits."""

from __future__ import annotations

import grpc
import pytest

from glossator.v1 import common_pb2, validation_pb2
from tests.grpc_helpers import field_violations

BRIDGE = "The Sydney Harbour Bridge was opened in 1932. It carries rail, vehicle and pedestrian traffic."


def chunks(*texts: str) -> list[common_pb2.Chunk]:
    return [common_pb2.Chunk(chunk_id=f"c{i}", text=text) for i, text in enumerate(texts, start=1)]


async def validate(suite, **fields) -> validation_pb2.ValidateResponse:
    return await suite.validation.Validate(validation_pb2.ValidateRequest(**fields), timeout=30)


async def rejected(suite, **fields) -> dict[str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await validate(suite, **fields)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return field_violations(caught.value)


async def test_a_grounded_answer_and_a_fabricated_one(suite):
    grounded = await validate(suite, response="The bridge was opened in 1932 [1].", context=chunks(BRIDGE))
    assert grounded.is_grounded and grounded.grounding_score == 1.0
    assert (grounded.citations_found, grounded.citations_valid) == (1, 1)
    wrong = await validate(suite, response="The bridge was opened in 1846 [1].", context=chunks(BRIDGE))
    assert not wrong.is_grounded
    assert "1846" in wrong.claims[0].reason
    assert [span.text for span in wrong.unsupported_spans] == ["The bridge was opened in 1846 [1]."]


async def test_with_no_context_nothing_is_supported_and_only_a_refusal_is_grounded(suite):
    claimed = await validate(suite, query="When did the bridge open?", response="The bridge opened in 1932.")
    assert not claimed.is_grounded and claimed.grounding_score == 0.0
    assert claimed.claims[0].reason == "no context chunk mentions it"
    declined = await validate(suite, response="The book does not cover this question.")
    assert declined.is_grounded and declined.is_refusal


async def test_citation_markers_pointing_nowhere_are_counted_invalid_not_rejected(suite):
    reply = await validate(suite, response="The bridge was opened in 1932 [7].", context=chunks(BRIDGE))
    assert (reply.citations_found, reply.citations_valid) == (1, 0)
    assert any("[7]" in note for note in reply.notes)


async def test_the_context_limit_is_100_chunks(suite):
    at_limit = await validate(
        suite, response="The bridge was opened in 1932.", context=chunks(*[BRIDGE] * 100)
    )
    assert at_limit.is_grounded
    violations = await rejected(
        suite, response="The bridge was opened in 1932.", context=chunks(*[BRIDGE] * 200)
    )
    assert violations == {"context": "at most 100 chunks (got 200)"}


async def test_a_100_kb_answer_and_an_over_long_chunk_are_rejected(suite):
    violations = await rejected(suite, response="The bridge opened. " * 5300, context=chunks(BRIDGE))
    assert set(violations) == {"response"}
    violations = await rejected(suite, response="The bridge opened.", context=chunks(BRIDGE, "x" * 20_001))
    assert set(violations) == {"context[1].text"}
