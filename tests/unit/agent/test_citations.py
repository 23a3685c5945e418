"""Citation markers: streamed across deltas, checked against retrieved sources, and answer capping."""

from __future__ import annotations

import pytest

from services.agent.citations import CitationStream, cap_answer, filter_markers, marker_indexes


def known_up_to(n: int):
    return lambda index: 1 <= index <= n


def stream(deltas: list[str], known: int = 3) -> tuple[str, list[int], list[str]]:
    """Feeds deltas; returns the released text, the first-time citations, and each release."""
    citations = CitationStream(known_up_to(known))
    releases, first_seen = [], []
    for delta in deltas:
        text, new = citations.feed(delta)
        releases.append(text)
        first_seen += new
    text, new = citations.flush()
    releases.append(text)
    first_seen += new
    assert "".join(releases) == citations.text
    return citations.text, first_seen, releases


def test_marker_split_across_deltas_is_recognised():
    text, cited, releases = stream(["Nodes talk over topics [", "2", "]. DDS needs no master [1]."])
    assert text == "Nodes talk over topics [2]. DDS needs no master [1]."
    assert cited == [2, 1]
    assert releases[0] == "Nodes talk over topics"  # the space and "[" wait for the marker to close


def test_unknown_marker_disappears_with_its_space():
    text, cited, _ = stream(["A fact [1]. An invented one [", "9]. Mixed [2, 7", "]."])
    assert text == "A fact [1]. An invented one. Mixed [2]."
    assert cited == [1, 2]


def test_each_citation_is_reported_once_and_text_without_markers_flows():
    text, cited, releases = stream(["One [1]. ", "Two [1]. ", "Three [3]", " and plain words"])
    assert cited == [1, 3]
    assert text == "One [1]. Two [1]. Three [3] and plain words"
    assert releases[1] == " Two [1]."


def test_an_unclosed_bracket_is_plain_text_at_the_end():
    text, cited, _ = stream(["see [", "appendix"])
    assert text == "see [appendix"
    assert cited == []
    assert stream(["list [1"])[0] == "list [1"


def test_sources_known_later_count_when_the_marker_closes():
    sources = []
    citations = CitationStream(lambda index: index <= len(sources))
    assert citations.feed("Later [") == ("Later", [])
    sources.append("retrieved")
    assert citations.feed("1].") == (" [1].", [1])


def test_filter_markers_and_marker_indexes():
    assert filter_markers("a [1][4] b [2,3]", known_up_to(2)) == ("a [1] b [2]", [1, 2])
    assert marker_indexes("x [3] y [1, 3] z [2]") == [3, 1, 2]
    assert marker_indexes("ranges [1-3] are not markers") == []


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short answer. [1]", 100, "Short answer. [1]"),
        (
            "First sentence here. [1] Second sentence is longer than the rest. [2]",
            40,
            "First sentence here. [1]",
        ),
        ('He said "stop." Then more words follow here.', 30, 'He said "stop."'),
        # "e.g." ends no sentence: the cut falls after the sentence that holds it.
        (
            "Use a sensor, e.g. a camera. It sees well in the dark and the rain.",
            50,
            "Use a sensor, e.g. a camera.",
        ),
    ],
)
def test_cap_on_sentence_boundary(text: str, limit: int, expected: str):
    capped, cut = cap_answer(text, limit)
    assert capped == expected
    assert cut == (text != expected)
    assert len(capped) <= limit


def test_cap_without_a_usable_sentence_end_cuts_on_a_word():
    capped, cut = cap_answer("Tiny. " + "word " * 40, 60)
    assert cut and capped.endswith("word…") and len(capped) <= 60
    capped, _ = cap_answer("An answer that ends in an open marker [12", 40)
    assert capped == "An answer that ends in an open marker…"
