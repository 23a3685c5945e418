"""The framing a small model copies back (passage places, the request line) leaves its answer."""

from __future__ import annotations

import pytest

from services.agent.models.echoes import EchoFilter, shown_places

HEADINGS = ["Launch Files and Parameters", "Book"]
ANSWER = (
    "[1] (Launch Files and Parameters > Learning Objectives) ROS 2 uses DDS (a middleware). "
    "[2] (Book > Publisher-Subscriber (Topics)) Used for streaming data."
)
CLEAN = "[1] ROS 2 uses DDS (a middleware). [2] Used for streaming data."


def streamed(deltas: list[str], headings=HEADINGS, lines=()) -> tuple[str, EchoFilter]:
    echoes = EchoFilter(headings, lines)
    return "".join(echoes.feed(d) for d in deltas) + echoes.finish(), echoes


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50, len(ANSWER)])
def test_a_passage_place_is_dropped_however_the_stream_is_cut(size):
    text, echoes = streamed([ANSWER[i : i + size] for i in range(0, len(ANSWER), size)])
    assert text == CLEAN
    assert echoes.dropped == [
        "(Launch Files and Parameters > Learning Objectives)",
        "(Book > Publisher-Subscriber (Topics))",
    ]


def test_parentheses_of_the_book_pass_through_and_an_unclosed_place_is_shown_as_written():
    assert (
        streamed(["ROS (Robot", " Operating System) runs nodes."])[0]
        == "ROS (Robot Operating System) runs nodes."
    )
    assert streamed(["(Book chapter one", "\nis here"])[0] == "(Book chapter one\nis here"
    assert streamed(["(Book chapter"])[0] == "(Book chapter"


def test_the_request_and_question_lines_are_dropped_wherever_they_appear():
    lines = ["Question: What is DDS?", "Answer with the sentences that answer it, copied word for word:"]
    text, _ = streamed(
        [
            "DDS is a middleware. [1]\nQuestion: What",
            " is DDS?\nAnswer with the sentences",
            " that answer it, copied word for word:",
        ],
        lines=lines,
    )
    assert text.strip() == "DDS is a middleware. [1]"


def test_without_echoes_to_look_for_the_text_is_unchanged():
    assert streamed(["(anything) at", " all"], headings=[])[0] == "(anything) at all"


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_line_that_is_only_a_place_is_dropped_with_its_marker(size):
    headings = [
        "MCP Transports > Transport Layers: How MCP Messages Travel",
        "The Reliability Mindset > In Practice",
    ]
    answer = (
        "[1] HTTP is for testing; stdio is for production.\n"
        "[5] Transport Layers: How MCP Messages Travel\n"
        "[2] The Reliability Mindset > In Practice [2]\n"
        "The Reliability Mindset matters in practice."
    )
    text, echoes = streamed([answer[i : i + size] for i in range(0, len(answer), size)], headings=headings)
    assert (
        text
        == "[1] HTTP is for testing; stdio is for production.\nThe Reliability Mindset matters in practice."
    )
    assert len(echoes.dropped) == 2


def test_the_places_shown_include_the_heading_inside_the_chunk():
    shown = ["(Book > Publisher-Subscriber (Topics)) Used for streaming data.", "No place here.", "(unclosed"]
    assert shown_places(shown) == ["Book > Publisher-Subscriber (Topics)"]
    text, _ = streamed(
        ["[1] Publisher-Subscriber (Topics)\n[1] Used for streaming data."], headings=shown_places(shown)
    )
    assert text == "[1] Used for streaming data."
