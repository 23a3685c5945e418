"""The text retrieval is asked for: follow-ups resolved, the reader's selection included."""

from __future__ import annotations

from datetime import UTC, datetime

from services.agent.search_query import MAX_QUERY_CHARS, is_follow_up, search_query
from services.agent.sessions.model import Turn


def turn(query: str) -> Turn:
    return Turn(query_id="q", query=query, answer="An answer. [1]", created_at=datetime.now(UTC))


def test_a_standalone_question_is_searched_as_asked():
    history = [turn("What is Gazebo?")]
    assert search_query("How does ROS 2 discover nodes on a network?", history=history) == (
        "How does ROS 2 discover nodes on a network?"
    )


def test_a_follow_up_carries_the_question_it_follows():
    history = [turn("What is Gazebo used for?")]
    assert search_query("And how does it compare with Unity?", history=history) == (
        "What is Gazebo used for? And how does it compare with Unity?"
    )
    assert search_query("What is it written in?", history=history).startswith("What is Gazebo used for?")


def test_a_chain_of_follow_ups_reaches_back_to_its_subject():
    history = [turn("How does a lidar measure distance?"), turn("And its range?")]
    assert search_query("What about its price?", history=history) == (
        "How does a lidar measure distance? And its range? What about its price?"
    )


def test_follow_up_detection():
    assert is_follow_up("And why?")
    assert is_follow_up("What about Unity?")
    assert is_follow_up("How is it configured?")
    assert not is_follow_up("How is the navigation stack of ROS 2 configured for a humanoid?")
    assert not is_follow_up("What is Isaac Sim?")


def test_the_selection_is_searched_with_the_question():
    selection = "DDS   discovery\nfinds peers by multicast."
    assert search_query("Explain this", selected_text=selection) == (
        "Explain this DDS discovery finds peers by multicast."
    )


def test_the_query_stays_within_the_search_limit_and_keeps_the_question_whole():
    question = "Why " + "word " * 150
    query = search_query(question, selected_text="selected " * 300)
    assert len(query) <= MAX_QUERY_CHARS
    assert query.startswith(" ".join(question.split()))
    assert "selected" in query and not query.endswith(" ")


def test_with_a_selection_this_is_the_selection_not_the_question_before():
    history = [turn("How does Glossator check that an answer is grounded?")]
    selection = "A claim that mentions the year 1846 is not supported by a chunk that never mentions 1846"
    assert search_query("What does this passage mean?", selected_text=selection, history=history) == (
        f"What does this passage mean? {selection}"
    )
