"""Question classification by surface cues."""

from __future__ import annotations

import pytest

from services.common.text.question import QueryType, classify_query


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
