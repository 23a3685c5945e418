"""Question classification by surface cues."""

from __future__ import annotations

import pytest

from services.common.text.question import QueryType, asks_for_other_words, classify_query, understand


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
        ("What is the zero moment point?", False),
        ("Which words does the glossary define?", False),
    ],
)
def test_a_question_asking_for_other_words_is_recognised(query: str, expected: bool):
    assert asks_for_other_words(query) is expected
    assert understand(query).other_words is expected
