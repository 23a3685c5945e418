"""Question classification by surface cues."""

from __future__ import annotations

import pytest

from services.common.text.question import (
    FIGURES,
    QueryType,
    asked_measure,
    asks_for_other_words,
    classify_query,
    compared_sides,
    last_question,
    understand,
    wants_list,
    wants_number,
    wants_quantity,
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who founded the university?", QueryType.FACTUAL),
        ("When was ROS 2 first released?", QueryType.FACTUAL),
        ("How many lasers does the VLP-16 have?", QueryType.FACTUAL),
        ("In the 1850s, how many ships sailed from the port?", QueryType.FACTUAL),
        ("What year did the company open its first store?", QueryType.FACTUAL),
        ("Which middleware does ROS 2 use?", QueryType.FACTUAL),
        ("What is a ROS node?", QueryType.CONCEPTUAL),
        ("Why does IMU drift accumulate?", QueryType.CONCEPTUAL),
        ("How does DDS discover peers?", QueryType.CONCEPTUAL),
        ("Which is the difference between a topic and a service?", QueryType.CONCEPTUAL),
        ("Summarise chapter 3", QueryType.SECTION_BASED),
        ("What does the Sensors section say about lidar?", QueryType.SECTION_BASED),
        ("Explain this passage in simpler words", QueryType.SECTION_BASED),
        ("What are the exercises of module 2?", QueryType.SECTION_BASED),
    ],
)
def test_classify(query: str, expected: QueryType):
    assert classify_query(query) is expected


def test_selected_text_makes_any_question_section_based():
    assert classify_query("Who wrote it?", selected_text="A passage.") is QueryType.SECTION_BASED
    assert classify_query("Who wrote it?", selected_text="   ") is QueryType.FACTUAL


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Explain this in simpler words", True),
        ("Can you summarise the section on sensors?", True),
        ("In other words, what does ZMP mean?", True),
        ("Rephrase that for a beginner", True),
        ("Say it in plain English", True),
        ("What does this mean?", True),
        ("I don't understand this", True),
        ("What does ZMP mean?", False),  # a definition: the book's own words answer it
        ("What is the zero moment point?", False),
        ("Which words does the glossary define?", False),
    ],
)
def test_a_question_asking_for_other_words_is_recognised(query: str, expected: bool):
    assert asks_for_other_words(query) is expected
    assert understand(query).other_words is expected


@pytest.mark.parametrize(
    ("query", "number", "listing"),
    [
        ("How many degrees of freedom does Atlas have?", True, False),
        ("When did ROS 2 first ship?", True, False),
        ("In 1850, when was the harbour built?", True, False),
        ("What should I check when my robot falls through the ground?", False, False),  # a condition
        ("When should I use the coordinator pattern?", False, False),
        ("What are the three categories of robotic sensors?", False, True),
        ("Which callbacks does a lifecycle node implement?", False, True),
        ("List the steps of the setup.", False, True),
        ("How can several robots share one network?", False, False),
        ("Which Python version does ROS 2 Humble require?", False, False),
        ("What is URDF and what parts does a URDF file describe?", False, True),
        ("Which three General Agents dominate 2025?", False, True),
        ("What class does the node inherit from?", False, False),  # one class, not a plural
        ("And what kind of movement does a prismatic joint allow?", False, False),  # one kind
        ("What kinds of sensors does a humanoid carry?", False, True),
        ("Within what time windows must physical AI systems respond?", True, False),  # a measurement
        ("Which port does the TCP connection use by default?", True, False),
        ("Which reports does the book list?", False, True),
        ("What are hooks in Claude Code?", False, False),  # a definition: a bare plural term
        ("What are Dapr Actors?", False, False),
        ("What are common mistakes?", False, True),
        ("What are some tools for debugging?", False, True),
    ],
)
def test_questions_asking_for_a_number_or_for_several_things(query: str, number: bool, listing: bool):
    assert (wants_number(query), wants_list(query)) == (number, listing)


@pytest.mark.parametrize(
    ("query", "quantity"),
    [
        ("How many degrees of freedom does Atlas have?", True),
        ("During which years was Honda ASIMO developed?", True),
        ("At what rate should LiDAR scans be sent to Unity?", True),  # a measurement
        ("When does the else block of a try statement run?", False),  # a condition as often as a time
        ("What language is Zed written in, and how fast does it start?", False),  # a second question
    ],
)
def test_a_question_answered_by_a_quantity_alone(query: str, quantity: bool):
    assert wants_quantity(query) is quantity


@pytest.mark.parametrize(
    ("query", "measure", "answering", "not_answering"),
    [
        (
            "How much will Antigravity cost per month?",
            "cost",
            "Pro costs $20 a month.",
            "Public beta: Q1 2026.",
        ),
        ("How much does New Relic charge per GB?", "cost", "It is free up to 100 GB.", "Logs take 3 days."),
        ("How long does a full build take?", "duration", "It takes 30 seconds.", "It uses 4 cores."),
        ("How much RAM does the setup need?", "size", "At least 16GB of RAM.", "Ubuntu 22.04 is required."),
        ("How much smaller can a multi-stage build make it?", "relative", "It cuts 70-85%.", "Has 5+ steps."),
        ("How long did the Theses take to spread?", "duration", "It took two months.", "Europe, 1517."),
        ("How much faster is uv than pip?", "relative", "It is 10-100x faster.", "Fast since it is in Rust."),
        ("How many times did the team score?", "", "", ""),  # a count, not a multiplier
        ("How many joints does Atlas have?", "", "", ""),  # any number answers a count
    ],
)
def test_a_quantity_question_names_the_kind_of_figure_that_answers_it(
    query: str, measure: str, answering: str, not_answering: str
):
    assert asked_measure(query) == measure
    if measure:
        assert FIGURES[measure].search(answering) and not FIGURES[measure].search(not_answering)


@pytest.mark.parametrize(
    ("query", "sides"),
    [
        ("How does AGENTS.md differ from README.md?", [{"agent"}, {"readm"}]),
        (
            "What is the difference between a revolute and a continuous joint in URDF?",
            [{"revolut"}, {"continuous", "joint"}],
        ),
        ("When should I use a metaclass rather than a dataclass?", [{"metaclass"}, {"dataclass"}]),
        ("How does Podman differ from Docker for running my agent's containers?", [{"podman"}, {"docker"}]),
        ("How do the coordinate systems of ROS and Unity differ?", []),  # one side names both
        ("What is a ROS 2 topic?", []),
    ],
)
def test_a_comparison_names_its_two_sides(query: str, sides: list[set[str]]):
    assert [set(side) for side in compared_sides(query)] == sides


def test_a_follow_up_searched_with_the_question_it_follows_asks_what_it_asks():
    resolved = "What is URDF and what parts does a URDF file describe? And how does it compare with SDF?"
    assert last_question(resolved) == "And how does it compare with SDF?"
    assert understand(last_question(resolved)).compares and not understand(last_question(resolved)).wants_list
    # one question, or a request with the reader's selection, is read whole
    assert last_question("What is URDF?") == "What is URDF?"
    selection = "Explain this in simpler words. Does it run? It runs on Linux."
    assert last_question(selection) == selection
