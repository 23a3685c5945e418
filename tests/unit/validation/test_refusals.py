"""Refusals and "not in the book" answers claim nothing, so they are grounded."""

from __future__ import annotations

import pytest

from services.validation.grounding import ContextChunk
from services.validation.refusals import is_refusal

CONTEXT = [ContextChunk("c1", "The lighthouse was built in 1902 and automated in 1950.")]


@pytest.mark.parametrize(
    "sentence",
    [
        "I don't know.",
        "I’m not sure what the answer is.",
        "The book does not cover the keeper's family.",
        "This is not mentioned in the provided context.",
        "The sources don't say who designed it.",
        "There is no information about its designer.",
        "I could not find that in the documentation.",
        "Nearby, the book covers: Lighthouse > History [1], Lighthouse > Keepers [2].",
        # as capable models decline (checker probes, set 4)
        "The keeper's family isn't covered in the retrieved passages.",
        "The retrieved passages don't define a fog signal.",
        "The book doesn't explicitly list the keepers.",
        "The provided excerpts don't spell out why it was automated.",
        "None of these passages describes the lens.",
    ],
)
def test_refusals_are_recognised(sentence):
    assert is_refusal(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The keeper did not know the storm was coming.",
        "No ships were lost that winter.",
        "The police had no information about the suspect.",
        "He was unable to find work after 1950.",
        "No, it was built in 1902.",
        "The lens isn't listed among the original fittings.",
        "None of the keepers stayed after 1950.",
        "The logbooks don't name the ships it saved.",
    ],
)
def test_negative_statements_are_not_refusals(sentence):
    assert not is_refusal(sentence)


async def test_a_refusal_is_grounded_and_flagged(checker):
    result = await checker.check(
        "Who designed it?", "The book does not say who designed it.", CONTEXT, [], None
    )
    assert (result.is_refusal, result.is_grounded, result.grounding_score) == (True, True, 1.0)
    assert result.claims[0].reason == "refusal: claims nothing"
    assert result.unsupported_spans == []


async def test_a_refusal_beside_a_claim_leaves_the_claim_to_be_judged(checker):
    answer = "The book does not say who designed it. It was automated in 1960."
    result = await checker.check("", answer, CONTEXT, [], None)
    assert not result.is_refusal
    assert not result.is_grounded
    assert [s.text for s in result.unsupported_spans] == ["It was automated in 1960."]


async def test_a_decline_naming_the_sections_nearby_is_a_refusal_with_valid_citations(checker):
    context = [*CONTEXT, ContextChunk("c2", "## Keepers\nThe keepers lived on the island until 1950.")]
    answer = (
        "The book does not cover this question: none of the retrieved passages answer it. "
        "Nearby, the book covers: Lighthouse > History [1], Lighthouse > Keepers [2]."
    )
    result = await checker.check("Who designed it?", answer, context, [], None)
    assert (result.is_refusal, result.is_grounded) == (True, True)
    assert (result.citations_found, result.citations_valid) == (2, 2)
    pointing_nowhere = answer.replace("[2]", "[3]")
    result = await checker.check("Who designed it?", pointing_nowhere, context, [], None)
    assert not result.is_grounded and result.citations_valid == 1
