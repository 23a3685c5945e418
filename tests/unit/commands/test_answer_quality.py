"""The checks of `glossator eval answers --questions` on one answer, and the figures over many."""

from __future__ import annotations

import pytest

from glossator.v1 import agent_pb2, validation_pb2
from services.commands.answer_quality import (
    cited_sources,
    duplicate_sentences,
    is_page,
    judge_answer,
    markdown_fragments,
    question_figures,
)
from services.commands.question_file import Question

# --- Markdown fragments ---


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("## Installing\nRun the installer [1].", ["heading"]),
        ("Use this:\n```bash\nuv sync\n```", ["fence"]),
        ("It is **required** for every link [2].", ["bold"]),
        ("| probe | checks |\n|---|---|\n| readiness | traffic |", ["table"]),
        ("Ports: agent | retrieval | validation.", ["table"]),
        ("See [the guide](https://example.dev/guide) for more.", ["link"]),
        ("![diagram](https://example.dev/a.png)", ["link"]),
        ("The steps:\n- ask\n- explain", ["bullet"]),
        ("* first\n* second", ["bullet"]),
        ("1. Ask\n2. Explain", ["bullet"]),
        ("Loaded by path [1]. :::tip Verified File Locations GEMINI.md files were tested.", ["admonition"]),
        ("Note:\n:::\n", ["admonition"]),
        ("# Title\n\n- **Event**: what triggers it", ["heading", "bold", "bullet"]),
    ],
)
def test_markdown_fragments_are_found_by_kind(text, kinds):
    assert markdown_fragments(text) == kinds


@pytest.mark.parametrize(
    "text",
    [
        "The bridge opened in 1932 [1]. It cost 10 million pounds [1, 2].",
        "C# and F# are languages; issue #42 is closed.",
        "Trade-offs - like this one - are fine; 2 * 3 = 6.",
        "Scores 1. and 2. place in one line, then pipes like a|b once.",
        "Use the `gz sdf -p` command [3].",
    ],
)
def test_plain_prose_with_markers_and_symbols_has_no_fragments(text):
    assert markdown_fragments(text) == []


# --- duplicate sentences ---


def test_the_same_sentence_twice_is_a_duplicate_whatever_its_markers_and_case():
    text = "ROS 2 uses DDS for discovery [1]. Topics are asynchronous. ros 2 uses DDS for discovery [2]."
    assert duplicate_sentences(text) == ("ros 2 uses dds for discovery", "ros 2 uses dds for discovery")


def test_a_near_duplicate_above_the_jaccard_bound_counts():
    a = "The readiness probe tells Kubernetes when the pod can serve traffic."
    b = "The readiness probe tells Kubernetes when the pod can serve any traffic."  # 11 of 12 words shared
    assert duplicate_sentences(f"{a} {b}") is not None


def test_a_sentence_contained_in_another_counts():
    text = "Zed is written in Rust. It starts fast because Zed is written in Rust and uses the GPU."
    assert duplicate_sentences(text) == (
        "zed is written in rust",
        "it starts fast because zed is written in rust and uses the gpu",
    )


def test_different_sentences_and_short_ones_do_not_count():
    text = (
        "Readiness probes gate traffic to a pod. Liveness probes restart a stuck container. "
        "Startup probes give slow starters time. See below. See below."
    )
    assert duplicate_sentences(text) is None


def test_sentences_sharing_words_in_another_order_below_the_bound_do_not_count():
    a = "The agent retrieves chunks and cites them in the answer."
    b = "The answer cites chunks that the validation service then checks."
    assert duplicate_sentences(f"{a}\n{b}") is None


# --- the right page ---


def source(index: int, document_id: str, source_url: str = "") -> agent_pb2.Source:
    return agent_pb2.Source(index=index, document_id=document_id, source_url=source_url)


@pytest.mark.parametrize(
    ("document_id", "source_url"),
    [
        ("module-1/ros2-architecture/index.md", "module-1/ros2-architecture/index.md"),
        ("./module-1//ros2-architecture/index.md", ""),
        ("book/docs/module-1/ros2-architecture/index.md", ""),
        ("https://x.dev/docs/a", "https://x.dev/docs/module-1/ros2-architecture/index.md"),
    ],
)
def test_a_source_is_the_page_by_its_id_or_url(document_id, source_url):
    assert is_page(source(1, document_id, source_url), "module-1/ros2-architecture/index.md")


@pytest.mark.parametrize(
    "document_id",
    [
        "module-1/ros2-architecture/index.summary.md",
        "module-1/ros2-architecture-2/index.md",
        "other/index.md",
    ],
)
def test_another_page_is_not_the_page(document_id):
    assert not is_page(source(1, document_id), "module-1/ros2-architecture/index.md")


def test_only_sources_the_answer_cites_count():
    response = agent_pb2.Response(answer="It is DDS [2].", sources=[source(1, "a.md"), source(2, "b.md")])
    assert [s.document_id for s in cited_sources(response)] == ["b.md"]


# --- one record, and the figures ---

ANSWERABLE = Question(
    "q-1", "When did it open?", True, "tune", source="guide/bridges.md", expect="1932", form="value"
)
UNANSWERABLE = Question("q-n1", "Who won the cup?", False, "report", form="value")


def response(
    answer: str, *, document_id="guide/bridges.md", grounded=True, not_covered=False, confidence=0.9
):
    status = agent_pb2.VALIDATION_STATUS_VALIDATED
    return agent_pb2.Response(
        answer=answer,
        confidence=confidence,
        sources=[source(1, document_id)],
        grounding=agent_pb2.GroundingSummary(status=status, is_grounded=grounded),
        validation=validation_pb2.ValidateResponse(
            claims=[validation_pb2.ClaimVerdict(text="It cost a lot.", supported=grounded)]
        ),
        not_covered=not_covered,
        model="offline-extractive",
    )


def test_a_record_carries_the_checks():
    record = judge_answer(
        ANSWERABLE, "OK", response("## Opening\nIt opened in 1932 [1]. It opened in 1932 [1].")
    )
    assert record["right_page"] and record["grounded"] and not record["declined"]
    assert record["cited"] == ["guide/bridges.md"]
    assert record["markdown"] == ["heading"]
    assert record["duplicate"] == ["it opened in 1932", "it opened in 1932"]
    assert record["unsupported"] == []


def test_a_wrong_page_an_uncited_answer_and_a_failed_call_are_not_the_right_page():
    assert not judge_answer(ANSWERABLE, "OK", response("In 1932 [1].", document_id="guide/tunnels.md"))[
        "right_page"
    ]
    assert not judge_answer(ANSWERABLE, "OK", response("In 1932."))["right_page"]
    failed = judge_answer(ANSWERABLE, "DEADLINE_EXCEEDED", None, "too slow")
    assert not failed["right_page"] and not failed["grounded"] and failed["chars"] == 0


def test_the_figures_over_a_question_set():
    records = [
        judge_answer(ANSWERABLE, "OK", response("It opened in 1932 [1].")),  # right page, grounded
        judge_answer(ANSWERABLE, "OK", response("**1932** [1].", document_id="x.md", grounded=False)),
        judge_answer(ANSWERABLE, "DEADLINE_EXCEEDED", None),
        judge_answer(UNANSWERABLE, "OK", response("The book does not cover this.", not_covered=True)),
        judge_answer(UNANSWERABLE, "OK", response("Cups are won by teams [1]. Cups are won by teams [1].")),
        judge_answer(UNANSWERABLE, "OK", response("Cups are won [1].", confidence=0.5)),
    ]
    # The unanswerable question answered grounded at 0.9 is confidently wrong; at 0.5 it is not.
    assert question_figures(records)["confidently_wrong"] == 1
    records = records[:-1]
    figures = question_figures(records)
    assert figures["questions"] == 5
    # correct: both answers holding 1932 (grounded or not) and the declined unanswerable question
    assert figures["correct"] == 0.6
    assert [r["correctness"] for r in records] == ["correct", "correct", "wrong", "correct", "wrong"]
    assert figures["answerable"] == {
        "questions": 3,
        "correct": 0.6667,
        "partial": 0.0,
        "wrong": 0.3333,
        "right_page": 0.3333,
        "grounded": 0.3333,
        "declined": 0.0,
    }
    assert figures["unanswerable"] == {"questions": 2, "declined": 0.5}
    answers = figures["answers"]
    assert answers["answered"] == 4 and answers["markdown"] == 0.25 and answers["duplicates"] == 0.25
    assert answers["median_chars"] == (22 + 29) / 2  # of 13, 22, 29 and 53 characters
    assert figures["status"] == {"DEADLINE_EXCEEDED": 1}
    assert figures["models"] == {"offline-extractive": 4}
    assert figures["forms"] == {"value": 0.6667}


def test_the_figures_of_an_empty_side_are_none():
    figures = question_figures([judge_answer(UNANSWERABLE, "OK", response("Not covered.", not_covered=True))])
    assert figures["answerable"]["right_page"] is None and figures["unanswerable"]["declined"] == 1.0
