"""The correctness rule: whether an answer holds the page's answer (`expect`'s key words)."""

from __future__ import annotations

import pytest

from services.commands.correctness import (
    expect_items,
    judge_correctness,
    repeats,
    terms,
    verdict_figures,
)


def verdict(expect: str, answer: str, **kwargs) -> str:
    kwargs.setdefault("answerable", True)
    kwargs.setdefault("declined", False)
    return judge_correctness(expect, answer, **kwargs).verdict


def test_terms_are_stemmed_content_words_and_exact_numbers():
    assert terms("The joints of Python 3.10 robots, nine of them [2]") == [
        "joint",
        "python",
        "3.10",
        "robot",
        "9",
        "2",
    ]
    assert terms("Level 2-3") == ["level", "2", "3"]


def test_expect_is_cut_into_items_at_commas_semicolons_and_or():
    assert expect_items("goal, feedback and result") == [["goal"], ["feedback"], ["result"]]
    assert expect_items("Ubuntu 22.04 LTS; minimum 8GB RAM") == [
        ["ubuntu", "22.04", "lts"],
        ["minimum", "8", "gb", "ram"],
    ]
    assert expect_items("the, of; and") == []


def test_every_item_of_a_list_counts_alike():
    expect = "goal, feedback and result"
    assert verdict(expect, "An action has a goal, feedback and a result [1].") == "correct"
    assert verdict(expect, "An action sends a goal and reports feedback [1].") == "correct"  # 2 of 3
    assert verdict(expect, "An action has a goal [1].") == "partial"  # 1 of 3
    assert verdict(expect, "Node: a process that performs computation [1].") == "wrong"


def test_numbers_must_appear_exactly():
    assert verdict("0.001", "Set max_step_size to 0.001 [1].") == "correct"
    assert verdict("0.001", "Set max_step_size to 0.01 [1].") == "wrong"
    assert verdict("15", "Documentation is worth 15 points [2].") == "correct"
    assert verdict("9", "Helm defines nine hook types.") == "correct"
    # a citation marker is not a number the answer states
    assert verdict("15", "Documentation is worth some points [15].") == "wrong"


def test_an_item_missing_its_number_counts_nothing():
    # "python" alone would be half the item; without 3.10 the question is not answered
    assert verdict("Python 3.10+", "rclpy lets Python developers create ROS 2 nodes [4].") == "wrong"
    assert verdict("Python 3.10+", "ROS 2 Humble needs Python 3.10 or newer [1].") == "correct"


def test_word_forms_fold_together():
    assert verdict("linear sliding movement", "It slides linearly: linear slide moves [1].") == "correct"
    # long words also match on their first six letters
    assert verdict("cancellable", "Goals can be cancelled [2].") == "correct"
    assert verdict("cancellable", "Goals can be cancer [2].") == "wrong"


def test_unanswerable_questions_are_correct_only_when_declined():
    assert verdict("", "The book does not cover this.", answerable=False, declined=True) == "correct"
    assert verdict("", "Paris is the capital [1].", answerable=False, declined=False) == "wrong"


def test_a_declined_answerable_question_and_a_failed_call_are_wrong():
    result = judge_correctness("ODE, Bullet and DART", "", answerable=True, declined=True)
    assert result.verdict == "wrong" and result.missing == ("ode", "bullet", "dart")
    assert verdict("ODE", "ODE [1]", answered=False) == "wrong"


def test_an_answer_repeating_the_highlight_is_at_most_partial():
    highlight = (
        "Xacro (XML Macros) simplifies complex URDF models by allowing macros, constants, and includes."
    )
    expect = "Xacro macros constants simplify URDF"
    copied = (
        "Xacro (XML Macros) simplifies complex URDF models by allowing macros, constants, and includes [1]."
    )
    explained = "Xacro lets you write a piece of a URDF once as a macro, name constants, and so simplify big models [1]."
    assert repeats(copied, highlight) and not repeats(explained, highlight)
    assert verdict(expect, copied, selected_text=highlight) == "partial"
    assert verdict(expect, explained, selected_text=highlight) == "correct"
    assert verdict(expect, copied) == "correct"  # without a highlight nothing is repeated


def test_the_missing_terms_are_named():
    result = judge_correctness(
        "ODE, Bullet and DART", "Gazebo supports ODE [1].", answerable=True, declined=False
    )
    assert result.verdict == "partial" and result.score == pytest.approx(1 / 3, abs=0.001)
    assert result.missing == ("bullet", "dart")


def test_an_expect_without_terms_is_refused():
    with pytest.raises(ValueError, match="no term"):
        judge_correctness("the", "anything", answerable=True, declined=False)


def test_verdict_figures_are_shares():
    assert verdict_figures(["correct", "wrong", "correct", "partial"]) == {
        "correct": 0.5,
        "partial": 0.25,
        "wrong": 0.25,
    }
    assert verdict_figures([]) == {"correct": None, "partial": None, "wrong": None}
