"""Hard checks: numbers, dates, names and negations that similarity alone would miss."""

from __future__ import annotations

import pytest

from services.common.text.words import Analysis
from services.validation.checks import missing_names, missing_numbers, unmatched_negations
from services.validation.evidence import ChunkEvidence, rank_passages
from services.validation.grounding import ContextChunk
from services.validation.subjects import paired_sides, speaker_terms

CONTEXT = (
    "Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia. "
    "It sold 2,466 copies of its third issue on March 2, 1845. "
    "The International Criminal Court opened an inquiry in Kenya. "
    "The editor never met Edgar Allan Poe."
)


def chunk() -> ChunkEvidence:
    return ChunkEvidence(0, CONTEXT, window_sentences=1, phrase_gap=2)


@pytest.mark.parametrize(
    ("claim", "missing"),
    [
        ("The magazine closed in 1846.", []),
        ("The magazine closed in 1864.", ["1864"]),
        ("It sold 2466 copies of the 3rd issue.", []),  # thousands separator and ordinal folded
        ("It sold five thousand copies.", ["1000", "5"]),
        ("The issue appeared on March 5, 1845.", ["5"]),
    ],
)
def test_numbers_and_dates_must_be_stated(claim, missing):
    assert missing_numbers(Analysis(claim), chunk(), frozenset()) == missing


@pytest.mark.parametrize(
    ("claim", "missing"),
    [
        ("Arthur's Magazine was based in Philadelphia.", []),
        ("Arthur's Magazine was based in Mumbai.", ["Mumbai"]),
        ("The issue appeared in April 1845.", ["April"]),
        ("The ICC opened an inquiry.", []),  # acronym of a capitalised run
        ("The inquiry concerns Kenyan crimes.", []),  # derived form of a name
        ("Researchers praised the magazine.", []),  # an ordinary sentence-initial word
        ("Salil Shetty praised the magazine.", ["Salil", "Shetty"]),
        # whom a statement is attributed to (an opinion piece's byline) is not checked as a name
        ("Salil Shetty: the magazine was based in Philadelphia.", []),
        ("The magazine was based in Philadelphia, says Stefan Wolff.", []),
        ("It was based in Philadelphia, Wolff says.", []),
        ("Wolff says the magazine was based in Mumbai.", ["Mumbai"]),
        ("Stefan Wolff argues the magazine was based in Mumbai.", ["Mumbai"]),
    ],
)
def test_capitalised_names_must_be_mentioned(claim, missing):
    assert missing_names(Analysis(claim), chunk()) == missing


@pytest.mark.parametrize(
    "claim",
    [
        "Salil Shetty: the periodical was published in Philadelphia.",
        "Salil Shetty says the periodical was published in Philadelphia.",
        "The periodical was published in Philadelphia, says Salil Shetty.",
        "Salil Shetty argues the periodical was published in Philadelphia.",
    ],
)
def test_the_speaker_is_no_word_the_context_must_state(claim):
    """A summary names an opinion piece's author, who is in its byline, not its body."""
    analysis = Analysis(claim)
    assert rank_passages(analysis, chunk(), speaker=speaker_terms(analysis))[0].phrase_supported


def test_a_label_followed_by_no_statement_is_what_the_claim_is_about_not_its_speaker():
    claim = Analysis("Prismatic: literary periodical in Philadelphia.")
    assert speaker_terms(claim) == frozenset()
    assert not rank_passages(claim, chunk(), speaker=speaker_terms(claim))[0].phrase_supported


def test_a_speaker_the_context_names_is_checked_like_any_word():
    claim = Analysis("Edgar Allan Poe says the periodical was published in Philadelphia.")
    assert not rank_passages(claim, chunk(), speaker=speaker_terms(claim))[0].phrase_supported


@pytest.mark.parametrize(
    ("claim", "missing"),
    [
        ("The magazine was never published in Philadelphia.", ["never"]),
        ("The editor did not meet Poe.", []),  # its passage negates too ("never met")
        ("The editor met Edgar Allan Poe.", []),  # only the claim's negations are checked
    ],
)
def test_a_negation_must_appear_in_a_supporting_passage(claim, missing):
    analysis = Analysis(claim)
    best_passage = rank_passages(analysis, chunk())[0].passage
    assert unmatched_negations(analysis, [best_passage]) == missing


def test_a_leading_no_answers_a_question_and_is_no_negation():
    assert Analysis("No, the magazine was American.").negations == frozenset()
    assert Analysis("The magazine was not American.").negations == frozenset({"not"})


async def test_reasons_name_the_failed_check(checker):
    context = [ContextChunk("c1", CONTEXT)]
    cases = {
        "Arthur's Magazine was published in Philadelphia from 1844 to 1864.": "number 1864 not in context",
        "Arthur's Magazine was published in Boston.": "name 'Boston' not in context",
        "Arthur's Magazine was not published in Philadelphia.": "negation 'not' not in the supporting passages",
    }
    for answer, reason in cases.items():
        result = await checker.check("", answer, context, [], None)
        assert not result.is_grounded
        assert result.claims[0].reason.startswith(reason)


async def test_a_table_row_holds_its_own_numbers_not_its_neighbours(checker):
    table = (
        "| Component | Points |\n|---|---|\n| **Code Quality** | 20 |\n| **Communication** | 25 |\n"
        "| **Documentation** | 15 |\n"
    )
    context = [ContextChunk("1", table)]
    right = await checker.check("", "Documentation — Points: 15. [1]", context, [], None)
    assert right.is_grounded
    for wrong in ("Documentation — Points: 25. [1]", "Documentation is worth 20 points. [1]"):
        verdict = await checker.check("", wrong, context, [], None)
        assert not verdict.is_grounded, wrong
        assert "is from another passage" in verdict.claims[0].reason


@pytest.mark.parametrize(
    ("question", "sides"),
    [
        (
            "Are Robin Hobb and Winston Churchill both American writers?",
            ({"robin", "hobb"}, {"winston", "churchill"}),
        ),
        (
            "Are Clarence Brown and Peter Glenville of the same nationality?",
            ({"clarenc", "brown"}, {"peter", "glenvill"}),
        ),
        (
            "Do the documentaries Traceroute and War/Dance have the same director?",
            ({"documentari", "tracerout"}, {"war", "danc"}),
        ),
        (
            "Which dog is now extinct, the Tahltan Bear Dog or the Stichelhaar?",
            ({"tahltan", "bear", "dog"}, {"stichelhaar"}),
        ),
        ("What is the difference between topics and services?", ()),
        ("Are topics asynchronous?", ()),
    ],
)
def test_a_question_may_pair_two_things(question, sides):
    assert paired_sides(question) == tuple(frozenset(side) for side in sides)
