"""Markers added from a verdict, the answer turn's input and an answer's confidence (the pure parts
of the answer checks)."""

from __future__ import annotations

from glossator.v1 import validation_pb2
from services.agent.answer_check import (
    ECHO_NOTE,
    INCOMPLETE_NOTE,
    OFF_TOPIC_NOTE,
    WRONG_REFUSAL_NOTE,
    AnswerChecker,
    Checked,
    Validated,
    cite_supported,
    replacement_reason,
    supported_part,
)
from services.agent.conversation import confidence
from services.agent.events import AnswerFinished
from services.agent.prompt import QUOTING, answer_input, build_input
from services.agent.sessions.model import Source, ToolCallRecord, Turn


def claim(answer: str, text: str, *, supported: bool = True, best: int = 0, citations=(), supporting=()):
    start = answer.index(text)
    return validation_pb2.ClaimVerdict(
        text=text,
        start=start,
        end=start + len(text),
        supported=supported,
        best_chunk_index=best,
        citations=list(citations),
        supporting_chunk_indexes=list(supporting) or ([best] if supported and best >= 0 else []),
    )


def test_supported_claims_without_a_marker_get_their_best_chunk():
    answer = "DDS is the middleware. It needs no master [2]. Pigs fly."
    verdict = validation_pb2.ValidateResponse(
        claims=[
            claim(answer, "DDS is the middleware.", best=2),
            claim(answer, "It needs no master [2].", best=1, citations=[2]),
            claim(answer, "Pigs fly.", supported=False, best=-1),
        ]
    )
    assert cite_supported(answer, verdict) == "DDS is the middleware. [3] It needs no master [2]. Pigs fly."


def test_markers_written_before_their_sentences_are_re_pointed():
    """A small model's "[1] Sentence. [2] Sentence.": each marker lands on the sentence before."""
    answer = "[1] ROS 2 uses DDS. [2] Nodes publish on topics."
    verdict = validation_pb2.ValidateResponse(
        claims=[
            claim(answer, "[1] ROS 2 uses DDS. [2]", best=0, citations=[1, 2]),
            claim(answer, "Nodes publish on topics.", best=1),
        ]
    )
    assert cite_supported(answer, verdict) == "ROS 2 uses DDS. [1] Nodes publish on topics. [2]"


def test_a_marker_naming_a_chunk_that_does_not_support_is_replaced_by_one_that_does():
    answer = "Topics:\nUsed for streaming data [4].\nUsed for long tasks [2, 3]."
    verdict = validation_pb2.ValidateResponse(
        claims=[
            claim(answer, "Topics:\nUsed for streaming data [4].", best=0, citations=[4]),
            claim(answer, "Used for long tasks [2, 3].", best=1, citations=[2, 3], supporting=[1, 2]),
        ]
    )
    assert (
        cite_supported(answer, verdict)
        == "Topics:\nUsed for streaming data. [1]\nUsed for long tasks [2, 3]."
    )


def test_an_unsupported_claim_keeps_its_markers():
    answer = "[2] Atlas has 360 degrees of freedom."
    verdict = validation_pb2.ValidateResponse(
        claims=[claim(answer, answer, supported=False, best=1, citations=[2])]
    )
    assert cite_supported(answer, verdict) == answer


def test_an_answer_with_nothing_to_mark_is_unchanged():
    answer = "The book does not cover this question."
    verdict = validation_pb2.ValidateResponse(claims=[claim(answer, answer, best=-1)])
    assert cite_supported(answer, verdict) == answer


def test_the_answer_turn_writes_the_passages_into_the_question():
    past = Turn(
        query_id="q1",
        query="What is a node?",
        answer="A process. [1]",
        created_at=None,
        tool_calls=[ToolCallRecord(name="retrieval_tool", arguments='{"query": "node"}', output="")],
    )
    items = build_input("And a topic?", history=[past], selected_text="Nodes publish.")
    messages = answer_input(items, [(1, "## Topics\nA topic is\n  a named bus."), (3, "Nodes publish.")])
    assert messages[:2] == [
        {"role": "user", "content": "What is a node?"},
        {"role": "assistant", "content": "A process."},
    ]
    question = messages[-1]["content"]
    assert question.startswith(
        "Passages from the book:\n[1] A topic is a named bus.\n\n[3] Nodes publish.\n\n"
    )
    assert "> Nodes publish." in question and question.endswith(f"Question: And a topic?\n{QUOTING.request}")
    assert "Earlier search" not in str(messages) and "##" not in question


def test_the_answer_turn_says_when_the_search_failed():
    items = build_input("What is a node?")
    assert answer_input(items, [], search_failed=True)[-1]["content"].startswith(
        "The search of the book failed."
    )
    assert answer_input(items, [])[-1]["content"].startswith("The search found no passages.")


def test_a_replacement_is_named_by_its_reason():
    assert replacement_reason(None) == "empty"
    assert replacement_reason(validation_pb2.ValidateResponse(notes=[WRONG_REFUSAL_NOTE])) == "wrong_refusal"
    assert replacement_reason(validation_pb2.ValidateResponse(notes=[OFF_TOPIC_NOTE])) == "off_topic"
    assert replacement_reason(validation_pb2.ValidateResponse(notes=[ECHO_NOTE])) == "echo"
    misattributed = validation_pb2.ValidateResponse(notes=["citation [2] does not support: IMUs measure"])
    assert replacement_reason(misattributed) == "not_grounded"


def checked(answer: str, *, relevance: float, grounding: float = 1.0, answers: bool = True) -> Checked:
    verdict = validation_pb2.ValidateResponse(
        is_grounded=grounding == 1.0, grounding_score=grounding, answers_question=answers
    )
    return Checked(
        answer=answer,
        validated=Validated(status="validated", verdict=verdict, validation_ms=1.0),
        model="offline-extractive",
        cited=[Source(index=1, chunk_id="c1", relevance_score=relevance)],
        new_citations=[],
        not_covered=False,
    )


def test_confidence_needs_relevant_sources_a_grounded_answer_and_the_question_s_subject():
    question = "Which physics engines does Gazebo support?"
    on_topic = "Gazebo supports the ODE, Bullet and DART physics engines. [1]"
    assert confidence(checked(on_topic, relevance=1.0), question) == 1.0
    assert confidence(checked(on_topic, relevance=0.7), question) == 0.7, "a less relevant source"
    elsewhere = "Friction and restitution shape collisions. [1]"
    assert confidence(checked(elsewhere, relevance=1.0), question) == 0.5, "names nothing asked about"
    assert confidence(checked(on_topic, relevance=1.0, answers=False), question) == 0.0
    assert confidence(checked(on_topic, relevance=1.0, grounding=0.5), question) == 0.5


def test_an_answer_giving_the_reader_their_highlight_back_is_half_as_sure():
    highlight = (
        "Xacro (XML Macros) simplifies complex URDF models by allowing macros, constants, and includes."
    )
    question = f"Explain this in simpler words. {highlight}"
    echo = f"{highlight} [1]"
    assert confidence(checked(echo, relevance=1.0), question, highlight) == 0.5
    reworded = "Xacro lets you reuse pieces of a robot model, so a large description stays short. [1]"
    assert confidence(checked(reworded, relevance=1.0), question, highlight) == 1.0
    # quoting the highlight is an answer when the reader asked for it, not for other words
    assert confidence(checked(echo, relevance=1.0), f"Where is this from? {highlight}", highlight) == 1.0


class _Verdicts:
    """A validation service stub: the verdict of each answer text it is asked about."""

    def __init__(self, verdicts: dict[str, validation_pb2.ValidateResponse]) -> None:
        self.verdicts = verdicts
        self.asked: list[str] = []

    async def Validate(self, request: validation_pb2.ValidateRequest, timeout: float):
        self.asked.append(request.response)
        return self.verdicts[request.response]


async def test_markers_that_would_unground_a_standing_answer_are_not_added():
    """The 0.5B model's copy of a passage stood uncited; the marker cite_supported added after a
    clause ("Each event has: event [1]: Event type ...") made the validator read the sentence as
    that chunk's claim, and the answer was replaced."""
    answer = "Each event has: event type and data."
    marked = "Each event has [1]: event type and data. [2]"
    standing = validation_pb2.ValidateResponse(
        is_grounded=True,
        answers_question=True,
        grounding_score=1.0,
        threshold=1.0,
        claims=[claim(answer, "Each event has", best=0), claim(answer, "event type and data.", best=1)],
    )
    failing = validation_pb2.ValidateResponse(is_grounded=False, answers_question=True, threshold=1.0)
    service = _Verdicts({answer: standing, marked: failing})
    checker = AnswerChecker(service, "enforce", lambda: 5.0)
    finished = AnswerFinished(
        answer=answer,
        cited=[],
        sources=[],
        steps=[],
        model="m",
        generation_ms=0.0,
        retrieval_ms=0.0,
        not_covered=False,
    )
    checked = await checker.check("What does an event have?", finished)
    assert service.asked == [answer, marked]
    assert (checked.answer, checked.validated.status, checked.model) == (answer, "validated", "m")


def _judged_by(answer: str, judged: str, sources: int = 1) -> AnswerFinished:
    """The model's answer over `sources` sources, with `judged` as the extractive answerer's."""

    async def fallback() -> str:
        return judged

    return AnswerFinished(
        answer=answer,
        cited=[],
        sources=[Source(index=n, chunk_id=f"c{n}", relevance_score=1.0) for n in range(1, sources + 1)],
        steps=[],
        model="m",
        generation_ms=0.0,
        retrieval_ms=0.0,
        not_covered=False,
        fallback=fallback,
    )


async def test_a_highlight_given_back_to_a_reader_asking_for_other_words_is_replaced_by_an_answer_saying_more():
    highlight = "Use simulation for training and then adapt to real-world conditions."
    echo = f"{highlight} [1]"
    more = (
        f"{highlight} [1] This approach trains AI models in simulated environments where experiments "
        "repeat cheaply, then transfers the learned behaviours to real robots. [1]"
    )
    grounded = validation_pb2.ValidateResponse(is_grounded=True, answers_question=True, grounding_score=1.0)

    def finished(judged: str) -> AnswerFinished:
        return _judged_by(echo, judged)

    service = _Verdicts({echo: grounded, more: grounded})
    question = f"Explain this in simpler words. {highlight}"
    checker = AnswerChecker(service, "enforce", lambda: 5.0, highlight=highlight)
    replaced = await checker.check(question, finished(more))
    assert (replaced.answer, replaced.validated.status) == (more, "replaced")
    assert any("was replaced (echo)" in note for note in replaced.validated.verdict.notes)
    # the extractive answer gives it back too: the model's stands; no highlight asked about: it stands
    assert (await checker.check(question, finished(echo))).validated.status == "validated"
    plain = AnswerChecker(service, "enforce", lambda: 5.0)
    assert (await plain.check(question, finished(more))).validated.status == "validated"


async def test_a_list_question_answered_by_a_lists_lead_in_alone_is_replaced_by_the_list():
    """The 0.5B model answered "Which Dapr building blocks does the chapter cover?" with the first
    line of the chapter's outline; the extractive answer lists the building blocks."""
    lead_in = "Dapr Architecture covers sidecars, building blocks and the component model. [1]"
    listed = (
        "Chapter Structure [1]:\nPub/Sub Building Block: publishing through Dapr. [1] State Management: "
        "storing conversation state. [1] Service Invocation: calling other services. [1]"
    )
    named = (
        "Dapr covers pub/sub publishing, state management for conversation state and service invocation. [1]"
    )
    grounded = validation_pb2.ValidateResponse(is_grounded=True, answers_question=True, grounding_score=1.0)

    def finished(answer: str) -> AnswerFinished:
        return _judged_by(answer, listed)

    service = _Verdicts({lead_in: grounded, listed: grounded, named: grounded})
    checker = AnswerChecker(service, "enforce", lambda: 5.0)
    replaced = await checker.check("Which Dapr building blocks does the chapter cover?", finished(lead_in))
    assert (replaced.answer, replaced.validated.status) == (listed, "replaced")
    assert any(f"was replaced (incomplete): {INCOMPLETE_NOTE}" in n for n in replaced.validated.verdict.notes)
    # an answer naming the items stands, and so does any answer to a question asking for one thing
    assert (
        await checker.check("Which Dapr building blocks does the chapter cover?", finished(named))
    ).answer == named
    assert (
        await checker.check("What does the Dapr chapter start with?", finished(lead_in))
    ).answer == lead_in
    # a list that is not grounded itself replaces nothing; annotate delivers what the model wrote
    unsupported = validation_pb2.ValidateResponse(is_grounded=False, answers_question=True)
    ungrounded = AnswerChecker(_Verdicts({lead_in: grounded, listed: unsupported}), "enforce", lambda: 5.0)
    kept = await ungrounded.check("Which Dapr building blocks does the chapter cover?", finished(lead_in))
    assert (kept.answer, kept.validated.status) == (lead_in, "validated")
    annotating = AnswerChecker(service, "annotate", lambda: 5.0)
    kept = await annotating.check("Which Dapr building blocks does the chapter cover?", finished(lead_in))
    assert (kept.answer, kept.validated.status) == (lead_in, "validated")


async def test_an_extractive_stand_in_whose_marker_names_the_wrong_chunk_is_re_pointed_not_withheld():
    """The 0.5B model's answer to "What are the three requirements for success in a vertical
    market?" was all held back; the extractive answer standing in for it stood on the offline path,
    where its markers are re-pointed, and was withheld on this one: its list's label, holding a
    colon, was read as two claims, the second under the marker of the item after it."""
    stand_in = "Vertical success needs all three requirements. [2]"
    re_pointed = "Vertical success needs all three requirements. [1]"
    misplaced = validation_pb2.ValidateResponse(
        is_grounded=False,
        answers_question=True,
        grounding_score=1.0,
        threshold=1.0,
        citations_found=1,
        citations_valid=0,
        claims=[claim(stand_in, "Vertical success needs all three requirements. [2]", best=0, citations=[2])],
    )
    grounded = validation_pb2.ValidateResponse(is_grounded=True, answers_question=True, grounding_score=1.0)
    service = _Verdicts({stand_in: misplaced, re_pointed: grounded})
    finished = _judged_by("", stand_in, sources=2)
    checked = await AnswerChecker(service, "enforce", lambda: 5.0).check("What does success need?", finished)
    assert (checked.answer, checked.validated.status, checked.model) == (
        re_pointed,
        "replaced",
        "offline-extractive",
    )
    assert service.asked == [stand_in, re_pointed]


def _judged(answer: str, *sentences: str, refused: tuple[str, ...] = ()) -> validation_pb2.ValidateResponse:
    """A verdict with a claim for each of the answer's `sentences`, those `refused` unsupported."""
    return validation_pb2.ValidateResponse(
        claims=[
            claim(answer, text, supported=text not in refused, best=-1 if text in refused else 0)
            for text in sentences
        ]
    )


def test_the_supported_part_of_an_answer_leaves_out_its_unsupported_sentences_and_list_lines():
    answer = "ROS 2 uses DDS [1]. It relies on a master node [1]. Nodes talk over topics [2].\n- Topics [2]\n- Pigs [3]"
    sentences = (
        "ROS 2 uses DDS [1].",
        "It relies on a master node [1].",
        "Nodes talk over topics [2].",
        "Topics [2]",
        "Pigs [3]",
    )
    verdict = _judged(answer, *sentences, refused=("It relies on a master node [1].", "Pigs [3]"))
    assert supported_part(answer, verdict) == "ROS 2 uses DDS [1]. Nodes talk over topics [2].\n- Topics [2]"


def test_an_answer_whose_first_sentence_or_no_sentence_is_unsupported_has_no_supported_part():
    """The first sentence is the answer: what follows leans on it ("It also provides ...")."""
    answer = "Gazebo is faster than Unity [1]. Unity renders scenes for people [2]."
    sentences = ("Gazebo is faster than Unity [1].", "Unity renders scenes for people [2].")
    assert supported_part(answer, _judged(answer, *sentences, refused=sentences[:1])) == ""
    assert supported_part(answer, _judged(answer, *sentences)) == ""


async def test_an_answer_with_an_unsupported_sentence_is_delivered_without_it_when_the_rest_stands():
    """A capable model paraphrases: one sentence the checker cannot match used to cost the whole
    answer, replaced by the extractive one; its supported sentences are the model's answer."""
    answer = "ROS 2 is a framework for robot software [1]. It is built on MQTT [1]."
    part = "ROS 2 is a framework for robot software [1]."
    ungrounded = validation_pb2.ValidateResponse(
        is_grounded=False,
        answers_question=True,
        threshold=1.0,
        grounding_score=0.5,
        claims=[
            claim(answer, "ROS 2 is a framework for robot software [1].", citations=[1]),
            claim(answer, "It is built on MQTT [1].", supported=False, best=-1, citations=[1]),
        ],
    )
    grounded = validation_pb2.ValidateResponse(
        is_grounded=True,
        answers_question=True,
        grounding_score=1.0,
        claims=[claim(part, part, citations=[1])],
    )
    stand_in = "ROS 2 is a set of tools and libraries. [1]"
    service = _Verdicts({answer: ungrounded, part: grounded, stand_in: grounded})
    checked = await AnswerChecker(service, "enforce", lambda: 5.0).check(
        "What is ROS 2?", _judged_by(answer, stand_in)
    )
    assert (checked.answer, checked.validated.status, checked.model) == (part, "replaced", "m")
    assert any("was replaced (trimmed)" in note for note in checked.validated.verdict.notes)
    # a part the judge finds answers nothing the passages do not answer is no answer: the stand-in
    decline = "The book does not cover this question: none of the retrieved passages answer it."
    service.verdicts[decline] = validation_pb2.ValidateResponse(is_grounded=True, is_refusal=True)
    refused = await AnswerChecker(service, "enforce", lambda: 5.0).check(
        "What is ROS 2?", _judged_by(answer, decline)
    )
    assert (refused.answer, refused.model) == (decline, "offline-extractive")
    # annotate delivers what the model wrote, flagged
    kept = await AnswerChecker(service, "annotate", lambda: 5.0).check(
        "What is ROS 2?", _judged_by(answer, stand_in)
    )
    assert (kept.answer, kept.validated.status) == (answer, "validated")


def test_the_supported_part_keeps_the_lines_and_markers_of_what_is_left():
    """A small model opens each paragraph with its marker; a sentence left out at the end of one
    paragraph takes neither the next paragraph's marker nor its line break, and a line left with
    its marker alone goes."""
    answer = (
        "[1] The cat is big. For example, it eats mice.\n\n[2] The dog is small. It runs fast.\n\n"
        "[3] Pigs can fly.\n\n[4] The cow is tall."
    )
    sentences = ("The cat is big.", "For example, it eats mice.", "The dog is small.", "It runs fast.")
    verdict = _judged(
        answer, *sentences, "Pigs can fly.", "The cow is tall.", refused=(sentences[1], "Pigs can fly.")
    )
    assert supported_part(answer, verdict) == (
        "[1] The cat is big.\n\n[2] The dog is small. It runs fast.\n\n[4] The cow is tall."
    )


def test_a_sentence_leaning_on_a_sentence_left_out_goes_with_it():
    """The 0.5B model's wrong "use the Replace option" was refused; "This will cancel the running
    Job" after it says nothing true on its own."""
    sentences = (
        "Concurrency policies say what a CronJob does while a run is going [1].",
        "Use the Replace option to stop new runs [1].",
        "This will cancel the running Job [1].",
        "Forbid skips the new run [1].",
    )
    answer = " ".join(sentences)
    verdict = _judged(answer, *sentences, refused=sentences[1:2])
    assert supported_part(answer, verdict) == f"{sentences[0]} {sentences[3]}"
