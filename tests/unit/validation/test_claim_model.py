"""The trained claim model of longer answers: what the shipped file promises, and the doubt budget."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from services.validation.claim_model import (
    FEATURES,
    ClaimModel,
    doubtful_claims,
    shipped_claim_model,
)
from services.validation.grounding import ContextChunk, OfflineChecker
from services.validation.grounding_config import GroundingConfig

CONTEXT = [
    ContextChunk("lighthouse", "The Hook Head lighthouse was built in 1902 by the Irish Lights board."),
    ContextChunk("harbour", "Fishing boats still land herring there."),
]
# One more word than its chunk says, each: a paraphrase alone, too much doubt together under a
# model where a word costs up to 0.62 (0.55 and 0.53 here: no word of their chunks is near
# "famous" or "fresh") and the budget is 1.
ONE_WORD_OFF = (
    "The Hook Head lighthouse was built in 1902 by the famous Irish Lights board.",
    "Fishing boats still land fresh herring there.",
)


def one_word_model() -> ClaimModel:
    weights = tuple(-1.0 if name == "novel_distance" else 0.0 for name in FEATURES)
    ones = (1.0,) * len(FEATURES)
    return ClaimModel(FEATURES, (0.0,) * len(FEATURES), ones, weights, 0.0, 1.0)


def test_the_shipped_model_was_trained_on_the_tune_half_and_only_ever_doubts_gaps():
    model = shipped_claim_model()
    assert model.features == FEATURES
    assert all(weight <= 0 for weight in model.weights)
    assert "tune half" in model.provenance["data"]
    assert model.doubt(np.zeros(len(FEATURES))) == 0.0  # a quote, however long


def test_one_more_gap_never_lowers_the_doubt():
    model = shipped_claim_model()
    for values in itertools.product((0, 1, 3), repeat=3):
        features = np.array([*values, 0, 0, 0, *(v * 2.0 for v in values)])
        for k in range(len(FEATURES)):
            worse = features.copy()
            worse[k] += 1
            assert model.doubt(worse) >= model.doubt(features)


@pytest.mark.parametrize(
    ("doubts", "budget", "flagged"),
    [
        ([0.1, 0.2, 0.5], 0.6, {2}),
        ([0.1, 0.2, 0.25], 0.6, set()),
        ([0.3, 0.3], 0.5, {0}),
        ([0.9], 0.5, {0}),
        ([], 0.5, set()),
    ],
)
def test_the_most_doubtful_claims_are_flagged_until_the_rest_fit_the_budget(doubts, budget, flagged):
    assert doubtful_claims(doubts, budget) == flagged


async def test_a_claim_that_passes_alone_can_fail_beside_another_doubtful_one(counting_model):
    checker = OfflineChecker(GroundingConfig(), counting_model, one_word_model())
    alone = await checker.check("", f"{ONE_WORD_OFF[0]} Boats land herring.", CONTEXT, [], None)
    assert alone.is_grounded
    together = await checker.check("", " ".join(ONE_WORD_OFF), CONTEXT, [], None)
    assert [c.supported for c in together.claims] == [False, True]
    assert together.claims[0].reason.startswith("too doubtful beside the answer's other claims")


async def test_a_short_claim_mostly_absent_from_the_context_is_no_paraphrase(checker):
    answer = "The lighthouse was built in 1902. The lighthouse keeper was Thomas Walsh."
    result = await checker.check("", answer, CONTEXT, [], None)
    assert [c.supported for c in result.claims] == [True, False]
    assert result.claims[1].reason == "name 'Thomas' not in context; name 'Walsh' not in context"


def test_a_model_file_for_other_features_is_refused(tmp_path):
    path = tmp_path / "claim_model.json"
    shipped_claim_model().save(path)
    raw = json.loads(path.read_text())
    raw["features"] = ["novel_share", *raw["features"][1:]]
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="trained on features"):
        ClaimModel.load(path)
