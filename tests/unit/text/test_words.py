"""The one stemmer (the validator's word analysis and Search's sparse vectors both use it)."""

from __future__ import annotations

import pytest

from services.common.text.words import announced_count, capitalised_words, heading_count, stem


@pytest.mark.parametrize(
    ("words", "stem_"),
    [
        (["create", "created", "creates", "creating"], "creat"),
        (["study", "studies", "studied"], "studi"),
        (["run", "running", "runs"], "run"),
        (["class", "classes"], "class"),
        (["box", "boxes"], "box"),
    ],
)
def test_stemming_conflates_inflections_of_one_word(words, stem_):
    assert {stem(w) for w in words} == {stem_}


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("analysis", "analysis"),
        ("bus", "bus"),
        ("need", "need"),
        ("qdrant", "qdrant"),
        ("1846", "1846"),
        ("use", "use"),
    ],
)
def test_stemming_leaves_words_that_are_not_inflected(word, expected):
    assert stem(word) == expected


def test_the_first_person_is_no_name_wherever_it_stands():
    found = capitalised_words("And how do I know I'm ready? I've asked Ada, and I’ll ask Grace.")
    assert [name for name, _ in found] == ["ada", "grace"]


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("The SDK offers four permission modes:", 4),
        ("Enter the PPP: a three-phase strategy that lets you pivot.", 3),
        ("It has 3 components.", 3),
        ("Python 3.14 made it production-ready.", 0),
        ("One tool does it all.", 0),
        ("The second phase and the fifth step come twice a day.", 0),
        ("Forty-two agents in 100 steps.", 0),
    ],
)
def test_a_text_says_how_many_things_there_are(text, count):
    assert announced_count(text) == count


@pytest.mark.parametrize(
    ("heading", "count"),
    [
        ("The 5-Step Safety Pattern", 5),
        ("Three Types of Probes", 3),
        ("The Seven Degradation Symptoms", 7),
        ("Top 10 Mistakes", 10),
        ("ROS 2 Basics", 0),  # a name's number
        ("Module 2 Overview", 0),
        ("Step 3: Understand", 0),
        ("Permission Modes: Four Security Postures", 0),  # counted, but not first
    ],
)
def test_a_heading_counts_its_sections_by_saying_so_first(heading, count):
    assert heading_count(heading) == count
