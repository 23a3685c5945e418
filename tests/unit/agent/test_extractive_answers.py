"""Extractive answers from Markdown passages: clean display, no repeats, the right kind of sentence.

The passages' sentences come with Search-style similarity scores, so ranking is exact and no
embedding model runs (except in the last test, where the real validator checks an answer).
"""

from __future__ import annotations

import numpy as np
import pytest

from services.agent.extractive import (
    NEARBY,
    NOT_COVERED,
    Pick,
    Weights,
    choose_sentences,
    compose_answer,
    is_decline,
    is_meta_section,
    is_meta_sentence,
    names_nowhere,
    near_duplicate,
    not_covered,
    shown_sentence,
)
from services.agent.passages import Passage
from services.common.text.prose import normalise, sectioned_sentences
from services.common.text.question import AnswerForm, question_form
from services.validation.grounding import ContextChunk, OfflineChecker


def refuse(texts: list[str]) -> np.ndarray:
    raise AssertionError(f"embedded {texts}: every sentence has a score")


def answer(
    question: str, texts: list[str], similarity: dict[str, float], heading: str = "Book > Part"
) -> str:
    passages = [
        Passage(
            n,
            heading,
            text,
            url=f"https://example.org/{n}",
            sentence_scores={span: similarity.get(s, 0.1) for span, s in answer_sentences(text)},
        )
        for n, text in enumerate(texts, start=1)
    ]
    # Items are not embedded again under their labels: the test's similarities stand.
    return compose_answer(choose_sentences(question, passages, refuse, Weights(max_labelled=0)))


def answer_sentences(text: str) -> list[tuple[tuple[int, int], str]]:
    """Every sentence the answerer reads (Search scores the prose ones; the others, stated
    lead-ins and table rows, it embeds), normalised as the tests name them."""
    return [
        ((s.start, s.end), normalise(text[s.start : s.end]))
        for s in sectioned_sentences(text, for_answers=True)
    ]


def test_answers_show_markdown_rendered_and_each_quoted_item_ends_like_a_sentence():
    text = (
        "## Terms\n- **Topic**: A named bus over which `nodes` exchange messages\n"
        "- **Service**: A [request/response](./services.md) call between two nodes\n"
    )
    similarity = {
        "**Topic**: A named bus over which `nodes` exchange messages": 0.8,
        "**Service**: A [request/response](./services.md) call between two nodes": 0.7,
    }
    assert answer("What is a topic and a service between nodes?", [text], similarity) == (
        "Terms [1]:\nTopic: A named bus over which nodes exchange messages. [1] "
        "Service: A request/response call between two nodes. [1]"
    )


def test_a_sentence_repeating_a_chosen_one_is_skipped_not_cited_twice():
    first = "URDF (Unified Robot Description Format) is an XML format used to describe robot models in ROS."
    second = (
        "URDF (Unified Robot Description Format) is an XML-based format used in ROS to describe robot models."
    )
    third = "It defines links, joints and sensors of a robot."
    similarity = {first: 0.8, second: 0.79, third: 0.7}
    text = answer("What is URDF?", [f"{first} {third}", second], similarity)
    assert text == f"{first} [1] {third} [1]"
    assert near_duplicate(first, second) and not near_duplicate(first, third)


def test_near_duplicates_by_overlap_or_containment_but_numbers_tell_facts_apart():
    assert near_duplicate(
        "Launch files start many nodes at once.", "Launch files start many nodes at once, simply."
    )
    assert near_duplicate(
        "Sensor fusion combines data.", "Sensor fusion combines data from many sensors and cameras."
    )
    assert not near_duplicate("Tesla was born in Smiljan.", "Tesla died in 1943 in Smiljan.")


def test_a_what_is_question_prefers_the_sentence_defining_the_term():
    defining = "rclpy is the Python client library for ROS 2."
    about = "Many rclpy examples in this book publish sensor readings on ROS 2 topics."
    similarity = {about: 0.62, defining: 0.6}
    assert answer("What is rclpy?", [f"{about} {defining}"], similarity).startswith(defining)


# The subject of a defining sentence is the term, with nothing but the question's words around it.
_DEFINING_SUBJECTS = [
    ("What is ROS 2?", "ROS 2 (Robot Operating System 2) is the next robotics framework.", True),
    ("What is ROS?", "The Robot Operating System (ROS) is a framework for robot software.", True),
    ("What is a General Agent?", "In AIDD, a General Agent is an agent that reasons.", True),
    (
        "What is GitOps?",
        "This lesson introduces GitOps, a different approach: you declare state in Git.",
        True,
    ),
    ("What is QDD?", "This lesson teaches QDD (Question-Driven Development): a technique of asking.", True),
    ("What is ROS 2?", "A ROS 2 package is the fundamental unit of organization in ROS 2.", False),
    ("What is a topic?", "Monitor topics: ros2 topic list shows them.", False),
    ("What is Helm?", "A Helm chart is a directory with a specific structure.", False),
    (
        "What is LLMOps?",
        "This part introduces LLMOps (Large Language Model Operations)—the discipline of it.",
        True,
    ),
    ("What is a skill?", "Definition: A skill is a folder of instructions for an agent.", True),
    (
        "What is embodied intelligence?",
        "Physical AI and embodied intelligence represent a shift in AI.",
        False,
    ),
]


@pytest.mark.parametrize(("question", "sentence", "defines"), _DEFINING_SUBJECTS)
def test_a_definition_is_a_sentence_whose_subject_is_the_term(question: str, sentence: str, defines: bool):
    other = f"Later chapters come back to {question_form(question).term} with examples."
    chosen = answer(question, [f"{other} {sentence}"], {other: 0.62, sentence: 0.6})
    assert chosen.startswith(sentence) is defines


def test_a_definition_comes_first_under_any_heading_but_a_term_merely_said_to_be_something_does_not():
    """A heading naming the term ("Installing Pydantic") does not outrank the sentence saying what
    the term is; "X is different" says nothing of what X is."""

    def passage(number: int, heading: str, text: str, score: float) -> Passage:
        scores = {span: score for span, _ in answer_sentences(text)}
        return Passage(number, heading, text, url=f"https://example.org/{number}", sentence_scores=scores)

    defining = "Pydantic is a library that validates data at runtime."
    installing = "Like any Python library, Pydantic needs to be installed first."
    passages = [
        passage(1, "Introduction > The Validation Problem", defining, 0.6),
        passage(2, "Introduction > Installing Pydantic", installing, 0.66),
    ]
    chosen = choose_sentences("What is Pydantic?", passages, refuse, Weights(max_labelled=0))
    assert chosen[0].sentence == defining
    deep = "M-shaped developers go deep in several domains at once."
    for said, first in [
        ("The M-shaped developer is a developer with several deep skills.", True),
        ("The M-shaped developer is different.", False),
    ]:
        passages = [passage(1, "Book > Part", said, 0.4), passage(2, "Book > Part", deep, 0.9)]
        chosen = choose_sentences("What is an M-shaped developer?", passages, refuse, Weights(max_labelled=0))
        assert (chosen[0].sentence == said) is first


def test_a_what_is_question_is_answered_only_where_the_term_is_named():
    cluster = "Cluster: A set of machines (nodes) running Kubernetes."
    service = "A Service is a Kubernetes abstraction that provides a stable address."
    similarity = {cluster: 0.7, service: 0.65}
    assert answer("What is k3s?", [f"{cluster} {service}"], similarity) == ""  # declined
    # named in the sentence, or before it in its section, or spelt out for an abbreviation
    assert answer("What is a Kubernetes cluster?", [f"{cluster} {service}"], similarity).startswith(cluster)
    named = "## SLAM\nSLAM builds a map while locating the robot. It runs on every mobile robot here."
    spelt = "Simultaneous Localization and Mapping builds a map while locating the robot."
    assert answer("What is SLAM?", [named], {"It runs on every mobile robot here.": 0.9}) != NOT_COVERED
    assert answer("What is SLAM?", [spelt], {spelt: 0.7}).startswith(spelt)
    # "in Python" names where the term lives: the term itself must still be named
    operators = "Python has arithmetic, comparison and logical operators. Operators combine values."
    assert answer("What is the walrus operator in Python?", [operators], {operators[:56]: 0.7}) == ""


def test_a_troubleshooting_entry_is_answered_by_its_solutions_not_its_problem():
    entry = (
        "### Data Synchronization\n**Issue**: Unity visualization lags behind ROS 2 simulation\n**Solutions**:\n"
        "- Implement proper time synchronization\n- Use interpolation for smooth visualization\n"
        "- Consider prediction algorithms for fast-moving robots\n"
    )
    similarity = {
        "**Issue**: Unity visualization lags behind ROS 2 simulation": 0.64,
        "Use interpolation for smooth visualization": 0.05,
        "Consider prediction algorithms for fast-moving robots": 0.29,
    }
    question = "What can I do when the robot in Unity falls behind my ROS 2 simulation?"
    assert answer(question, [entry], similarity) == (
        "Solutions [1]:\nImplement proper time synchronization. [1] Use interpolation for smooth "
        "visualization. [1] Consider prediction algorithms for fast-moving robots. [1]"
    )


# A sentence going on about the best one ("This requirement stems from ..."), or naming again the
# term a definition question asks about, follows it first, before another passage's sentence
# scoring higher (for a definition, its restatement: "Physical AI represents a paradigm shift ...").
_GOING_ON = [
    (
        "Why do physical AI systems have to respond in real time?",
        "Physical AI systems must process information and respond within strict time constraints.",
        "This requirement stems from the need to interact with the physical world in a timely manner, "
        "where delays can result in missed opportunities or safety issues.",
        "Physical AI systems are designed to operate in the real world, not just in simulation.",
        (0.74, 0.47, 0.76),
    ),
    (
        "What is Physical AI?",
        "Physical AI represents the convergence of artificial intelligence with physical systems.",
        "Unlike traditional AI that operates in digital spaces, Physical AI works within embodied "
        "systems that interact with the real world through sensors and actuators.",
        "Physical AI represents a paradigm shift from traditional digital AI to embodied intelligence.",
        (0.9, 0.6, 0.85),
    ),
    (  # scoring well under half the best one: its words are the best one's, not the question's
        "What is a ROS 2 package?",
        "A ROS 2 package is the fundamental unit of organization in ROS 2.",
        "It contains the source code, dependencies, configuration files and metadata needed to build "
        "and run one functionality.",
        "Packages provide modularity and reusability for robotic applications.",
        (0.8, 0.45, 0.75),
    ),
]


@pytest.mark.parametrize(("question", "best", "after", "elsewhere", "scores"), _GOING_ON)
def test_a_sentence_going_on_about_the_best_one_follows_it_first(question, best, after, elsewhere, scores):
    similarity = dict(zip((best, after, elsewhere), scores, strict=True))
    assert answer(question, [f"{best} {after}", elsewhere], similarity).startswith(f"{best} [1] {after} [1]")


# The next sentence of the best one's paragraph takes up a word of it that the question does not
# ask about ("state"): it completes the definition, before another passage's restatement scoring
# higher, though it names neither the term asked about nor the question's words. After a blank
# line it starts something else and takes its turn by score.
_DECLARED = "GitOps is an approach in which you declare the desired state of your infrastructure in Git."
_MATCHED = "A controller watches the repository and makes the cluster match that state."
_RESTATED = "GitOps is a way of running deployments from Git."
_SCORES = {_DECLARED: 0.8, _MATCHED: 0.6, _RESTATED: 0.7}


def test_the_next_sentence_taking_up_a_word_of_the_best_one_completes_it():
    assert answer("What is GitOps?", [f"{_DECLARED} {_MATCHED}", _RESTATED], _SCORES) == (
        f"{_DECLARED} [1] {_MATCHED} [1] {_RESTATED} [2]"
    )


def test_a_sentence_after_a_blank_line_does_not_continue_the_best_one():
    assert answer("What is GitOps?", [f"{_DECLARED}\n\n{_MATCHED}", _RESTATED], _SCORES) == (
        f"{_DECLARED} [1] {_RESTATED} [2] {_MATCHED} [1]"
    )


def test_a_why_question_prefers_a_reason_and_a_how_question_a_step():
    reason = "Quaternions represent orientation to avoid gimbal lock."
    fact = "Quaternions represent orientation in IMU messages."
    assert answer(
        "Why are quaternions used for orientation?", [f"{fact} {reason}"], {fact: 0.6, reason: 0.58}
    ).startswith(reason)
    step = "Use a different ROS_DOMAIN_ID for each robot that shares the network."
    remark = "Robots on one network share the ROS_DOMAIN_ID by default."
    assert answer(
        "How can several robots share one network?", [f"{remark} {step}"], {remark: 0.6, step: 0.58}
    ).startswith(step)


def test_a_why_question_takes_a_statement_whose_next_sentence_gives_its_reason():
    """ "Why must X ...?" is answered where the book says X must, then why: the statement itself has
    no reason word, the sentence after it ("This requirement stems from ...") has."""
    claim = "Robots must respond within strict time limits."
    reason = "This requirement stems from the need to act in a moving world, where delays cause collisions."
    other = "Direct coupling with the environment enables real-time learning and adaptation."
    similarity = {claim: 0.7, reason: 0.45, other: 0.72}
    assert answer(
        "Why do robots have to respond in real time?", [other, f"{claim} {reason}"], similarity
    ).startswith(f"{claim} [2] {reason} [2]")


def test_reasons_listed_for_another_subject_do_not_answer_a_why_question():
    """ "Sensor data validation is crucial because:" lists why validation matters, not why a model
    is trained in simulation, though an item mentions training."""
    listed = (
        "Sensor data validation is crucial because:\n\n"
        "- Training data from simulation may be used for real robot deployment\n"
        "- Control systems rely on accurate sensor readings\n"
    )
    answer_ = "Robot models are trained in simulation, where conditions can be controlled and runs repeated."
    similarity = {"Training data from simulation may be used for real robot deployment": 0.69, answer_: 0.62}
    assert answer(
        "Why would I train a robot's model in simulation first?", [listed, answer_], similarity
    ).startswith(f"{answer_} [2]")


def test_a_quantity_question_is_answered_by_a_figure_of_the_kind_it_asks_for():
    """A price answers "how much will it cost"; a date beside the product's name does not."""
    beta = "As of November 2025, Antigravity is in private beta with a monthly waitlist."
    date = "Antigravity is expected in public beta in Q1 2026."
    price = "Antigravity Pro costs $20 per month."
    question = "How much will Antigravity cost per month?"
    similarity = {beta: 0.6, date: 0.62, price: 0.5}
    assert answer(question, [f"{beta} {date}"], similarity) == ""  # no pick: the answerer declines
    assert answer(question, [f"{beta} {date}", price], similarity).startswith(f"{price} [2]")


def test_section_intros_and_learning_objectives_give_way_to_content():
    intro = "This tutorial covers setting up Unity for robotics simulation."
    ready = "You're ready to set up Unity for robotics simulation."
    objective = "Understand how Unity renders robotics simulation scenes."
    prompt = "Show me which Unity version to install for robotics simulation."  # a prompt to try
    used = 'AI Prompt Used: "Which Unity version suits robotics simulation?"'
    pointer = "Lesson 5 shows which Unity version suits robotics simulation."
    content = "Unity 2022.3 LTS is recommended for robotics simulation."
    text = (
        f"{intro} {ready} {prompt} {content}\n\n{used}\n## Learning Objectives\n- {objective}\n"
        f"## Connections\n{pointer}\n"
    )
    similarity = {
        intro: 0.7,
        ready: 0.7,
        objective: 0.68,
        prompt: 0.75,
        pointer: 0.74,
        used: 0.76,
        content: 0.6,
    }
    assert answer("Which Unity version is recommended for robotics simulation?", [text], similarity) == (
        f"{content} [1]"
    )


def test_exercise_tasks_and_quiz_options_are_not_answers():
    task = "Create launch files for different robot configurations."
    options = (
        "A) Use stateless_http=True to scale out B) Use stateless_http=False to keep state "
        "C) Add session affinity to the load balancer"
    )
    option = "B) Use launch files so that many nodes share one process"  # one choice a line
    content = "Launch files start many nodes with one command and their parameters in one place."
    planned = "Launch files: starting many nodes at once with their parameters"
    text = (
        f"## Exercise Requirements\n- {task}\n\n## Quiz\n{options}\n\n**Why launch files?**\n\n"
        f"A) Use them to restart a node\n{option}\n\n## Why launch files\n{content}\n\n"
        f"## Ahead\nYou'll implement these patterns:\n- {planned}\n- Parameters: one file for every node\n"
    )
    similarity = {task: 0.7, options: 0.69, option: 0.75, planned: 0.8, content: 0.6}
    assert (
        answer("Why use launch files when a robot runs many nodes?", [text], similarity) == f"{content} [1]"
    )


def test_a_question_in_the_text_is_no_answer_but_a_statement_quoting_one_is():
    """A prompt for the reader to try asks; it states nothing. 'Has clear intent — "What problem
    does this solve?"' states what a real specification has."""
    prompt = '"When would you use export for temporary values vs. a .env file for lasting ones?"'
    fact = "Export sets a variable for the current terminal only; a .env file keeps it across sessions."
    text = f"## Try it\n\n{prompt}\n\n## Configuration\n\n{fact}\n"
    similarity = {normalise(prompt): 0.9, fact: 0.6}
    question = "How does setting a variable with export differ from putting it in a .env file?"
    assert answer(question, [text], similarity) == f"{fact} [1]"

    intent = 'A real specification has clear intent — "What problem does this solve?"'
    other = "Specifications are written before the code."
    similarity = {intent: 0.8, other: 0.5}
    assert answer("What does a real specification have?", [f"{intent} {other}"], similarity).startswith(
        shown_sentence(intent)
    )
    tagged = "Hutchins eliminated varsity football to emphasize academics over athletics.[when?]"
    similarity = {tagged: 0.8, other: 0.5}  # an editor's tag is no question
    assert answer("Why did Hutchins eliminate football?", [f"{tagged} {other}"], similarity).startswith(
        "Hutchins"
    )


def test_a_name_the_question_asks_about_in_particular_must_be_near_the_answer():
    """Azure is mentioned in one passage of five, in another item of a list: that list does not
    say how to deploy to Azure. One introduced earlier in the section is near ("He" is Tesla)."""
    credits = "## Prerequisites\n- Chapters 49-58: local agent deployment on your machine\n- A cloud account (Azure credit)\n"
    others = [f"Agents deploy to Kubernetes in step {n} of the deployment lesson." for n in range(4)]
    similarity = {"Chapters 49-58: local agent deployment on your machine": 0.7} | dict.fromkeys(others, 0.5)
    assert answer("How do I deploy my agent to Azure?", [credits, *others], similarity) == ""
    # A selection carried in the query ("Explain this <selection>") names nothing asked about.
    selection = "Unchanged documents are skipped: their content hash matches what is stored."
    skipped = (
        "## Ingest\nDocuments whose content hash matches the stored one are skipped.\n\n"
        "## Identifiers\nUnchanged files keep the identifiers they were given."
    )
    similarity = {"Documents whose content hash matches the stored one are skipped.": 0.8} | dict.fromkeys(
        others, 0.3
    )
    assert answer(f"Explain this {selection}", [skipped, *others], similarity).startswith("Documents whose")
    tesla = "Tesla was born in Smiljan in 1856. He studied engineering in Graz."
    others = [f"Alternating current powered the engineering lab {n}." for n in range(2)]
    similarity = {"He studied engineering in Graz.": 0.8} | dict.fromkeys(others, 0.3)
    assert answer("Where did Tesla study engineering?", [tesla, *others], similarity).startswith(
        "He studied engineering in Graz."
    )


def test_a_list_question_answered_in_part_by_an_item_gets_the_whole_list():
    general = "Gazebo provides a robust physics engine that simulates gravity and friction."
    engines = (
        "Gazebo supports multiple physics engines:\n\n- **ODE**: the default engine of Gazebo Classic\n"
        "- **Bullet**: fast collision detection for games\n- **DART**: accurate articulated bodies and contacts\n"
    )
    similarity = {general: 0.9, "**DART**: accurate articulated bodies and contacts": 0.5}
    text = answer("Which physics engines does Gazebo support?", [general, engines], similarity)
    assert text == (
        f"{general} [1]\nGazebo supports multiple physics engines [2]:\nODE: the default engine of Gazebo "
        "Classic. [2] Bullet: fast collision detection for games. [2] DART: accurate articulated bodies and "
        "contacts. [2]"
    )


def test_an_item_naming_both_sides_of_a_comparison_answers_it_without_the_rest_of_its_list():
    models = (
        "Key mental models:\n\n- **README vs AGENTS.md**: README is for humans, AGENTS.md is for agents\n"
        "- **Hierarchy rule**: the nearest AGENTS.md wins over the root file\n"
        "- **Monetization**: one agent respects many client conventions\n"
    )
    defined = "AGENTS.md is a Markdown file that tells agents the build commands and code style."
    similarity = {"**README vs AGENTS.md**: README is for humans, AGENTS.md is for agents": 0.8, defined: 0.7}
    text = answer("How does AGENTS.md differ from README.md?", [models, defined], similarity)
    assert "README is for humans" in text and "Hierarchy" not in text and "Monetization" not in text
    # an item naming one side is one of the things compared: its list sets them side by side
    joints = (
        "Joints connect the links of a robot:\n\n- **Revolute**: a hinge joint that rotates within its limits\n"
        "- **Continuous**: a hinge joint that rotates without any limits\n"
    )
    similarity = {"**Revolute**: a hinge joint that rotates within its limits": 0.8}
    text = answer("What is the difference between a revolute and a continuous joint?", [joints], similarity)
    assert "Revolute: a hinge joint" in text and "Continuous: a hinge joint" in text


def test_a_sentence_of_its_passage_nearly_as_good_as_the_best_item_goes_on_after_the_list():
    flags = (
        "The guardrail function returns two fields:\n\n- **output_info**: diagnostic data about the check\n"
        "- **tripwire_triggered**: a boolean flag, true to block the request\n\n"
        "When tripwire_triggered is true, the guardrail raises an exception in the caller."
    )
    other = "Tripwires in the guardrail module are documented in another lesson."
    similarity = {
        "**tripwire_triggered**: a boolean flag, true to block the request": 0.8,
        "When tripwire_triggered is true, the guardrail raises an exception in the caller.": 0.78,
        other: 0.79,
    }
    text = answer("What does tripwire_triggered mean in a guardrail?", [flags, other], similarity)
    assert text.startswith("The guardrail function returns two fields [1]:\noutput_info")
    assert text.endswith(
        "When tripwire_triggered is true, the guardrail raises an exception in the caller. [1]"
    )
    assert "another lesson" not in text  # only its own passage goes on after a list


def test_a_why_question_prefers_a_list_of_reasons_and_no_prompts_for_the_reader():
    scenario = "The scenario: an assistant emails every draft it writes straight to the customers."
    reasons = (
        "Why it fails:\n\n- **Liability**: if the advice is wrong, you answer for it, not the AI\n"
        "- **Qualification**: only licensed attorneys may practise law in most places\n"
    )
    prompt = "## Try With AI\nAsk your AI why a Digital FTE should not send legal opinions to clients alone."
    similarity = {
        scenario: 0.55,
        "**Liability**: if the advice is wrong, you answer for it, not the AI": 0.5,
        "Ask your AI why a Digital FTE should not send legal opinions to clients alone.": 0.9,
    }
    text = answer(
        "Why should a Digital FTE not send legal opinions to clients?",
        [f"{scenario}\n\n{reasons}", prompt],
        similarity,
    )
    assert text.startswith("Why it fails [1]:\nLiability:") and "Ask your AI" not in text


def test_a_list_items_label_counts_as_its_heading():
    """ "A typical embodied agent consists of:" is what its items answer, though they never say it."""
    text = (
        "## Architecture\nA typical embodied agent consists of several key components:\n\n"
        "- **Sensors**: Mechanisms for perceiving the environment\n- **Actuators**: Components that act on it\n"
    )
    other = "Embodied agents in physical environments are central to Physical AI."
    similarity = {other: 0.63, "**Sensors**: Mechanisms for perceiving the environment": 0.45}
    assert answer(
        "What are the components of a typical embodied agent?", [other, text], similarity
    ).startswith("A typical embodied agent consists of several key components [2]:\nSensors:")


def test_list_items_under_a_heading_that_matches_the_question_are_preferred():
    items = "## Key Characteristics of Physical AI\n- **Embodiment**: Physical form and interaction with the world\n"
    other = "Physical AI is a broad field of study with a long and varied history."
    similarity = {other: 0.62, "**Embodiment**: Physical form and interaction with the world": 0.55}
    text = answer("What are the key characteristics of Physical AI?", [other, items], similarity)
    assert text.startswith(
        "Key Characteristics of Physical AI [2]:\nEmbodiment: Physical form and interaction with the world. [2]"
    )


def test_a_labelled_figure_under_the_heading_the_question_names_answers_it():
    platforms = (
        "### Major Platforms\n#### 1. Honda ASIMO\n- **Era**: 2000-2018\n"
        "- **Significance**: Pioneered many humanoid robotics concepts\n"
    )
    other = "Robust control approaches include developing fallback behaviors for robots."
    # Neither sentence says ASIMO or years: the heading does, and only the era is a figure.
    similarity = {
        "**Era**: 2000-2018": 0.2,
        "**Significance**: Pioneered many humanoid robotics concepts": 0.25,
    }
    text = answer("During which years was Honda ASIMO developed?", [platforms, other], similarity)
    # The figure first, under its label without the heading's numbering (not the whole list: a
    # number is one fact).
    assert text.startswith("Honda ASIMO [1]:\nEra: 2000-2018. [1]")


@pytest.mark.parametrize(
    ("question", "form", "term"),
    [
        ("What is rclpy?", AnswerForm.DEFINITION, "rclpy"),
        ("What is URDF and what parts does it describe?", AnswerForm.DEFINITION, "URDF"),
        ("What does DDS stand for?", AnswerForm.DEFINITION, "DDS"),
        ("In MCP, what is a templated resource?", AnswerForm.DEFINITION, "templated resource"),
        ("What is a handoff in the OpenAI Agents SDK?", AnswerForm.DEFINITION, "handoff"),
        ("What is a topic in ROS 2?", AnswerForm.DEFINITION, "topic"),
        ("What is progress in robotics?", AnswerForm.DEFINITION, "progress in robotics"),
        ("What is ROS 2, in a nutshell?", AnswerForm.DEFINITION, "ROS 2"),
        ("What is Helm, exactly?", AnswerForm.DEFINITION, "Helm"),
        ("Who was the first person to play the Master?", AnswerForm.OTHER, ""),
        ("What is the difference between topics and services?", AnswerForm.OTHER, ""),
        ("Why use launch files in ROS 2?", AnswerForm.WHY, ""),
        ("What is the purpose of a launch file?", AnswerForm.WHY, ""),
        ("How can several robots share the same ROS network?", AnswerForm.HOW, ""),
        ("What should I check when my robot falls through the ground?", AnswerForm.HOW, ""),
        ("How many points is documentation worth?", AnswerForm.OTHER, ""),
    ],
)
def test_question_forms(question: str, form: AnswerForm, term: str):
    assert question_form(question).form is form
    assert question_form(question).term == term


def test_shown_sentences_close_list_items_with_a_period_and_keep_their_own_punctuation():
    assert shown_sentence("**Cause**: DDS configuration issues in the network;") == (
        "Cause: DDS configuration issues in the network."
    )
    assert shown_sentence("Is it `fast`?") == "Is it fast?"
    # an abbreviation's period ends no sentence: the item would run on into the next one quoted
    assert shown_sentence("Tags keep syntaxes apart (Python in bash, etc.)") == (
        "Tags keep syntaxes apart (Python in bash, etc.)."
    )


async def test_the_validator_accepts_a_cleaned_answer_against_the_raw_chunk():
    from services.validation.grounding import ContextChunk, OfflineChecker

    chunk = (
        "### Error: DDS participant creation failed\n\n"
        "**Cause**: DDS configuration issues such as a wrong `ROS_DOMAIN_ID` value\n"
        "**Solution**:\n1. Check the `ROS_DOMAIN_ID` environment variable in every shell\n"
        "2. Verify the [FastDDS](https://fast-dds.docs.eprosima.com/) RMW configuration of DDS participants\n"
    )
    text = answer(
        "Why does DDS participant creation fail?",
        [chunk],
        {"**Cause**: DDS configuration issues such as a wrong `ROS_DOMAIN_ID` value": 0.8},
    )
    assert "**" not in text and "`" not in text and "](" not in text
    verdict = await OfflineChecker().check(
        "Why does DDS participant creation fail?", text, [ContextChunk("1", chunk, "")], [], None
    )
    assert verdict.is_grounded, verdict
    assert verdict.citations_valid == verdict.citations_found >= 2


SENSORS = "An IMU measures acceleration and rotation. A GPS receiver gives the position outdoors."


def test_a_question_naming_what_no_passage_mentions_is_declined():
    question = "How does a Kalman filter fuse IMU and GPS readings?"
    passages = [Passage(1, "Sensors > Fusion", url="https://example.org/1", text=SENSORS)]
    assert names_nowhere(question, passages) == ["kalman"]
    assert answer(question, [SENSORS], {}) == ""
    assert answer("What do IMU and GPS readings measure?", [SENSORS], {}) != ""


def test_rare_words_count_as_names_only_when_asked_for():
    """A word the embedding vocabulary lacks ("deformable") is asked about like a name; common
    words ("rely", "object") are not; a rare word a passage holds with affixes ("unrealistically":
    "realistic") is mentioned."""
    gravity = "Define the gravity vector in your world file. Gazebo handles collisions between objects."
    passages = [Passage(1, "Gravity", url="https://example.org/1", text=gravity)]
    question = "How do I set up a deformable object in Gazebo?"
    assert names_nowhere(question, passages) == []
    assert names_nowhere(question, passages, rare=True) == ["deformable"]
    assert names_nowhere("Can I rely on Gazebo for objects?", passages, rare=True) == []
    noise = [Passage(1, "Noise", url="https://example.org/1", text="Add realistic noise models to sensors.")]
    assert names_nowhere("Why does the data look unrealistically clean?", noise, rare=True) == []


def test_a_product_name_is_not_mentioned_by_a_word_that_merely_starts_like_it():
    passages = [
        Passage(1, "Manipulation", url="https://example.org/1", text="Arm movement needs careful planning.")
    ]
    assert names_nowhere("How do I configure MoveIt 2 for an arm?", passages) == ["moveit"]
    passages = [Passage(1, "Geography", url="https://example.org/1", text="Indonesia has many islands.")]
    assert names_nowhere("How many islands are Indonesian?", passages) == []


def test_an_abbreviation_is_mentioned_as_itself_or_spelt_out_and_two_letters_are_not_tested():
    mapping = "Robots build maps with Simultaneous Localization and Mapping from LiDAR scans."
    lidar_only = "LiDAR scans give distances; the Robotics Toolbox reads them."
    question = "How does SLAM Toolbox build a map?"
    assert names_nowhere(question, [Passage(1, "Mapping", url="https://example.org/1", text=lidar_only)]) == [
        "slam"
    ]
    assert (
        names_nowhere(
            question, [Passage(1, "Mapping", url="https://example.org/1", text=mapping + lidar_only)]
        )
        == []
    )
    assert (
        names_nowhere(
            "Which TV shows map rooms?", [Passage(1, "Mapping", url="https://example.org/1", text=mapping)]
        )
        == []
    )


def test_a_name_in_the_passage_heading_counts_as_mentioned():
    passages = [Passage(1, "Kalman Filters > Sensor fusion", url="https://example.org/1", text=SENSORS)]
    assert names_nowhere("How does a Kalman filter fuse IMU and GPS readings?", passages) == []


@pytest.mark.parametrize(
    "question",
    [
        "How many names of Ghengis Khan's daughters are known?",  # misspelt: Genghis
        "What did Celeron do on his expedition?",  # the passage writes Céloron
        "What campaign began after WWII?",  # an abbreviation
    ],
)
def test_misspelt_accented_or_abbreviated_names_are_not_taken_for_missing_ones(question):
    text = "Genghis Khan had several daughters. Céloron led an expedition after World War II."
    assert names_nowhere(question, [Passage(1, "History", url="https://example.org/1", text=text)]) == []


PATTERNS = (
    "## Communication Patterns\nROS 2 supports multiple communication patterns:\n\n"
    "#### Publisher-Subscriber (Topics)\n- Asynchronous, many-to-many communication\n"
    "- Used for streaming data like sensor readings\n\n"
    "#### Action Server-Client\n- Asynchronous with feedback and goal management\n- Used for long-running tasks\n"
)
PATTERN_SCORES = {
    "Used for streaming data like sensor readings": 0.7,
    "Asynchronous, many-to-many communication": 0.4,
    "Used for long-running tasks": 0.6,
}


async def test_a_quoted_list_item_carries_its_label_and_the_validator_finds_it_supported():
    text = answer("What are topics used for?", [PATTERNS], PATTERN_SCORES)
    assert text == (
        "Publisher-Subscriber (Topics) [1]:\n"
        "Asynchronous, many-to-many communication. [1] Used for streaming data like sensor readings. [1]"
    )
    verdict = await OfflineChecker().check("", text, [ContextChunk("1", PATTERNS)], [], None)
    assert verdict.is_grounded and verdict.citations_valid == verdict.citations_found == 3


def test_a_list_is_quoted_whole_under_its_lead_in():
    text = (
        "## Sensors\nRobotic sensors can be broadly categorized into:\n\n"
        "1. **Proprioceptive Sensors**: Measure the robot's internal state\n"
        "2. **Exteroceptive Sensors**: Measure the external environment\n"
        "3. **Interoceptive Sensors**: Measure internal systems and conditions\n"
    )
    other = "Sensors are the eyes, ears, and sensory organs of robotic systems."
    similarity = {other: 0.5, "**Proprioceptive Sensors**: Measure the robot's internal state": 0.55}
    assert answer("What are the three categories of robotic sensors?", [other, text], similarity) == (
        "Robotic sensors can be broadly categorized into [2]:\n"
        "Proprioceptive Sensors: Measure the robot's internal state. [2] "
        "Exteroceptive Sensors: Measure the external environment. [2] "
        "Interoceptive Sensors: Measure internal systems and conditions. [2]"
    )


def test_a_sentence_announcing_how_many_things_goes_on_with_the_list_naming_them():
    announcing = "Every agent, from coding assistants to support bots, shares the same four components."
    text = (
        f"# Agent Architecture\n{announcing} Knowing them helps you debug agents.\n\n"
        "## The 3+1 Architecture\n\n- **Model**: reasons about what to do next\n"
        "- **Tools**: act on the world\n- **Orchestration**: plans and remembers\n"
        "- **Deployment**: makes the agent accessible\n"
    )
    other = (
        "An orchestration pattern defines:\n\n- Stage sequence\n- Agent roles\n"
        "- Collaboration protocol\n- Failure handling\n- Review gates\n- Escalation\n"
    )
    similarity = {announcing: 0.7, "Stage sequence": 0.6}
    assert answer("Which four components does every agent share?", [text, other], similarity) == (
        f"{announcing} [1]\nThe 3+1 Architecture [1]:\n"
        "Model: reasons about what to do next. [1] Tools: act on the world. [1] "
        "Orchestration: plans and remembers. [1] Deployment: makes the agent accessible. [1]"
    )


def test_a_passage_that_never_names_what_the_question_asks_about_does_not_answer_it():
    # The example: "Used for ..." matches "used for", but the passage is about ROS 2 topics.
    assert answer("What is Gazebo used for?", [PATTERNS], PATTERN_SCORES) == ""
    gazebo = "Gazebo is used for simulating robots in realistic physical worlds."
    assert answer("What is Gazebo used for?", [PATTERNS, gazebo], {**PATTERN_SCORES, gazebo: 0.5}) == (
        f"{gazebo} [2]"
    )


def test_a_question_asking_how_many_is_not_answered_by_a_sentence_without_a_number():
    platforms = "Atlas has many degrees of freedom. Atlas demonstrates advanced dynamic control."
    similarity = {"Atlas has many degrees of freedom.": 0.6}
    assert answer("How many degrees of freedom does Atlas have?", [platforms], similarity) == ""
    counted = f"{platforms} Atlas has 28 hydraulic joints."
    similarity = {"Atlas has 28 hydraulic joints.": 0.5}
    assert answer("How many degrees of freedom does Atlas have?", [counted], similarity).startswith(
        "Atlas has 28 hydraulic joints. [1]"
    )


def test_a_number_the_question_itself_names_is_not_the_quantity_it_asks_for():
    # gp-13 (physical-ai report split) was answered with the bridge's layers, whose only number
    # is the "2" of "ROS 2".
    layers = "The bridge syncs ROS 2 state with Unity. It converts ROS 2 messages to Unity data structures."
    similarity = {"The bridge syncs ROS 2 state with Unity.": 0.6}
    question = "How often should I send joint states from ROS 2 to Unity?"
    assert answer(question, [layers], similarity) == ""
    rated = f"{layers} Send joint states at 50-100 Hz."
    assert answer(question, [rated], {**similarity, "Send joint states at 50-100 Hz.": 0.5}).startswith(
        "Send joint states at 50-100 Hz. [1]"
    )


@pytest.mark.parametrize(
    ("heading", "meta"),
    [
        ("Learning Objectives", True),
        ("Hands-on Exercise: Launch System Implementation", True),
        ("7. Additional Resources", True),
        ("References", True),
        # a book about MCP resources or ROS 2 action goals teaches them under such headings
        ("Direct vs Templated Resources", False),
        ("Direct Resources", False),
        ("Action Goals", False),
        # what a course's teachers should do with a chapter, not what it teaches
        ("Educational Goals for Instructors", True),
        ("Common Student Challenges", True),
        ("Teaching Suggestions", True),
        ("Student Database", False),
    ],
)
def test_a_section_of_links_or_tasks_is_meta_by_its_heading_not_by_a_word_in_it(heading: str, meta: bool):
    assert is_meta_section(heading) is meta


def test_a_sentence_about_the_text_is_never_the_answer():
    intro = "This guide provides solutions to common issues when running Gazebo simulations."
    assert answer("What can I do when my Gazebo simulation runs slowly?", [intro], {intro: 0.9}) == ""
    welcome = "Welcome to Module 2 of the Physical AI & Humanoid Robotics book!"
    question = "Which company builds the Digit humanoid robot?"
    assert answer(question, [welcome], {welcome: 0.9}, heading="Humanoid Robots > Digit") == ""


def test_a_decline_names_the_places_nearby_without_what_would_cut_its_sentence():
    passages = [
        Passage(1, "Launch Files and Parameters > Introduction > Why Use Launch Files?", "Text one."),
        Passage(2, "Sensors > Step 4.1: Calibrate the IMU. Then test", "Text two."),
        Passage(3, "Launch Files and Parameters > Introduction > Why Use Launch Files?", "Text three."),
    ]
    assert not_covered(passages) == (
        f"{NOT_COVERED} {NEARBY} Launch Files & Parameters > Why Use Launch Files [1], "
        "Sensors > Calibrate the IMU Then test [2]."
    )
    assert is_decline(not_covered(passages)) and not_covered([]) == NOT_COVERED


def test_the_same_question_over_the_same_passages_is_chosen_once():
    """An LLM run asks the answerer twice (the sections shown first, then the judge)."""
    from services.agent.extractive import ExtractiveAnswerer

    embedded: list[str] = []

    def embed(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return np.ones((len(texts), 3)) / np.sqrt(3)

    text = "Tides rise twice a day. The moon pulls the sea toward it."
    passages = [Passage(1, "Book > Tides", text, url="https://example.org/1")]
    answerer = ExtractiveAnswerer(embed=embed)
    first = answerer.choose("How often do tides rise?", passages)
    calls = len(embedded)
    assert first and answerer.choose("How often do tides rise?", passages) == first
    assert len(embedded) == calls, "the second choice is the first one's"
    answerer.choose("Why do tides rise?", passages)
    assert len(embedded) > calls, "another question is chosen anew"


RUBRIC = (
    "### 4. Assessment Rubric\n"
    "| Component | Points | Evaluation Criteria |\n"
    "|-----------|--------|-------------------|\n"
    "| **Code Quality** | 20 | Well-structured, properly commented, following ROS 2 conventions |\n"
    "| **Communication Patterns** | 25 | Correct use of topics, services, and actions |\n"
    "| **Documentation** | 15 | Clear README, inline comments, and setup instructions |\n"
)


async def test_a_table_row_answers_under_its_headers_and_the_validator_reads_it_so():
    """Search scores prose only: the rows are embedded here, by the local model."""
    from services.common.embedding import local_embedding_model

    intro = "This document defines the grading standards for the Module 2 assessment project."
    passages = [Passage(1, "Module 1 Assessment", RUBRIC, url="https://example.org/1")]
    passages.append(Passage(2, "Evaluation Criteria", intro, url="https://example.org/2"))
    picks = choose_sentences(
        "How many points is documentation worth in the assessment rubric?",
        passages,
        local_embedding_model().embed,
        Weights(),
    )
    text = compose_answer(picks)
    assert text.startswith(
        "Assessment Rubric [1]:\nDocumentation — Points: 15; Evaluation Criteria: Clear README, inline "
        "comments, and setup instructions. [1]"
    )
    context = [ContextChunk("1", RUBRIC), ContextChunk("2", intro)]
    verdict = await OfflineChecker().check("", text, context, [], None)
    assert verdict.is_grounded and verdict.citations_valid == verdict.citations_found


def test_a_placeholder_for_the_reader_to_fill_is_no_answer():
    template = "Multi-agent pattern: [Single / Coordinator / Sequential / Human-in-the-Loop]."
    content = "The coordinator pattern routes independent subtasks to agents that run in parallel."
    similarity = {template: 0.8, content: 0.6}
    question = "When should I use the coordinator pattern for agents?"
    assert answer(question, [template, content], similarity) == f"{content} [2]"


def test_a_number_the_question_names_tells_sentences_apart():
    old = "Cursor uses Claude 3.5 Sonnet by default, with a context window of 200K tokens."
    new = "Claude Sonnet 4.5 offers a 1M token context window in its extended mode."
    similarity = {old: 0.62, new: 0.6}
    question = "How large is the context window of Claude Sonnet 4.5?"
    assert answer(question, [old, new], similarity).startswith(f"{new} [2]")


def test_a_sentence_restating_the_question_gives_way_to_what_follows_it():
    text = (
        "### LiDAR Issues\n**Symptoms**: LiDAR returns all zeros, inf, or NaN.\n\n**Solutions**:\n"
        "- Check sensor range parameters in SDF\n- Verify there are objects in the sensor's field of view\n"
    )
    similarity = {
        "**Symptoms**: LiDAR returns all zeros, inf, or NaN.": 0.86,
        "Check sensor range parameters in SDF": 0.3,
        "Verify there are objects in the sensor's field of view": 0.23,
    }
    assert answer("What should I check when a LiDAR returns all zeros, inf or NaN?", [text], similarity) == (
        "Solutions [1]:\nCheck sensor range parameters in SDF. [1] "
        "Verify there are objects in the sensor's field of view. [1]"
    )


def test_a_comparison_prefers_the_list_whose_items_name_each_side():
    joints = (
        "URDF joints connect links and define how they can move:\n"
        "- **Revolute**: Rotational movement with limits\n- **Continuous**: Unlimited rotation\n"
        "- **Prismatic**: Linear sliding movement with limits\n"
    )
    intro = "For humanoid robots, URDF is essential for simulation, visualization, and kinematic analysis."
    similarity = {intro: 0.5, "**Revolute**: Rotational movement with limits": 0.35}
    question = "What is the difference between a revolute and a continuous joint in URDF?"
    assert answer(question, [intro, joints], similarity).startswith(
        "URDF joints connect links and define how they can move [2]:\nRevolute: Rotational movement with limits. [2] "
        "Continuous: Unlimited rotation. [2]"
    )


def test_an_answer_drawing_on_two_items_of_one_list_quotes_the_list():
    """The best sentence is prose; two of the sentences following it are items of one list."""
    definition = "A specification is a document that says what a feature should do and how to check it."
    spec = (
        "Not just any document makes a real specification:\n"
        "- It has a clear intent that says which problem it solves\n"
        "- It defines the constraints that must always hold true\n"
        "- It includes acceptance criteria that verify the feature works\n"
    )
    similarity = {
        definition: 0.8,
        "It includes acceptance criteria that verify the feature works": 0.5,
        "It defines the constraints that must always hold true": 0.45,
        "It has a clear intent that says which problem it solves": 0.2,
    }
    assert answer(
        "What makes a document a real specification?", [definition + "\n\n" + spec], similarity
    ) == (
        f"{definition} [1]\n"
        "Not just any document makes a real specification [1]:\n"
        "It has a clear intent that says which problem it solves. [1] "
        "It defines the constraints that must always hold true. [1] "
        "It includes acceptance criteria that verify the feature works. [1]"
    )


def test_a_question_for_a_name_gets_items_not_their_whole_list():
    """A checklist item naming what is asked about ranks first; the checklist is no answer."""
    checklist = (
        "Specification:\n- Detect Python version and free-threading availability\n"
        "- Measure performance on the current interpreter\n- Recommend threads or processes\n"
    )
    release = (
        "Free-threading was experimental in 3.13. Python 3.14 made it production-ready with 5-10% overhead."
    )
    similarity = {
        "Detect Python version and free-threading availability": 0.8,
        "Free-threading was experimental in 3.13.": 0.5,
        "Python 3.14 made it production-ready with 5-10% overhead.": 0.75,
        "Measure performance on the current interpreter": 0.3,
        "Recommend threads or processes": 0.3,
    }
    said = answer(
        "Which Python version made free-threading production-ready?", [checklist, release], similarity
    )
    assert "Python 3.14 made it production-ready" in said
    assert "Measure performance" not in said and "Recommend" not in said


def test_a_question_for_names_gets_the_whole_list_titled_with_what_it_asks_for():
    arguments = (
        "Key Arguments for Embodiment:\n- Environmental Interaction: Physical systems must handle uncertainty\n"
        "- Real-time Constraints: Physical systems operate under strict timing\n"
        "- Energy Efficiency: Physical systems must optimize energy consumption\n"
        "- Safety: Physical systems must operate safely around people\n"
    )
    similarity = {
        "Environmental Interaction: Physical systems must handle uncertainty": 0.6,
        "Real-time Constraints: Physical systems operate under strict timing": 0.4,
        "Energy Efficiency: Physical systems must optimize energy consumption": 0.5,
        "Safety: Physical systems must operate safely around people": 0.05,
    }
    said = answer("Which key arguments support the embodiment hypothesis?", [arguments], similarity)
    assert all(item in said for item in ("Environmental", "Real-time", "Energy", "Safety"))


TOOLS = (
    "## The Tools\nA General Agent is a reasoning system that handles any task you give it.\n\n"
    "Three General Agents dominate 2025:\n\n**Claude Code** (Anthropic)\n"
    "- Designed for exploration, prototyping and iterative problem-solving\n\n**Gemini CLI** (Google)\n"
    "- Open-source, CLI-first approach to agentic development\n\n**Goose** (Block)\n"
    "- Browser automation with code execution and reasoning\n"
)
TOOLS_SCORES = {
    "A General Agent is a reasoning system that handles any task you give it.": 0.6,
    "Designed for exploration, prototyping and iterative problem-solving": 0.3,
    "Open-source, CLI-first approach to agentic development": 0.45,
    "Browser automation with code execution and reasoning": 0.3,
}


async def test_a_list_question_gets_the_titles_of_the_blocks_its_lead_in_announces():
    text = answer("Which three General Agents dominate 2025?", [TOOLS], TOOLS_SCORES)
    assert text.endswith(
        "Three General Agents dominate 2025 [1]:\n"
        "Claude Code (Anthropic). [1] Gemini CLI (Google). [1] Goose (Block). [1]"
    )
    verdict = await OfflineChecker().check("", text, [ContextChunk("1", TOOLS)], [], None)
    assert verdict.is_grounded and verdict.citations_valid == verdict.citations_found


def test_a_blocks_title_answers_no_question_on_its_own_and_labels_its_list():
    # "Gemini CLI (Google)" names what is asked about, but the answer is what its block says
    assert answer("What approach does Gemini CLI take to development?", [TOOLS], TOOLS_SCORES) == (
        "Gemini CLI (Google) [1]:\nOpen-source, CLI-first approach to agentic development. [1]"
    )


def test_a_list_question_gets_a_list_of_short_items_under_the_item_it_is_nested_in():
    text = (
        "## Unity Settings\n1. **Project Settings**:\n   - Go to Edit and open the Project Settings window\n"
        "2. **Importing Packages**:\n   - Install essential packages:\n     - ProBuilder (for prototyping)\n"
        "     - ProGrids (for placement)\n     - Timeline (for animation)\n"
    )
    similarity = {"Go to Edit and open the Project Settings window": 0.3}
    assert answer("Which packages should I install for Unity?", [text], similarity) == (
        "Install essential packages [1]:\n"
        "ProBuilder (for prototyping). [1] ProGrids (for placement). [1] Timeline (for animation). [1]"
    )
    # no list asked for: a few words answer nothing on their own
    assert "ProBuilder" not in answer("How do I open the Unity project settings?", [text], similarity)


def test_a_list_item_means_what_it_says_under_its_label():
    """Search scores each item alone ("Require continuous feedback to the client" says nothing of
    actions); the answerer also reads it under its label, by the local model."""
    from services.common.embedding import local_embedding_model

    embed = local_embedding_model().embed
    question = "Why would I use a ROS 2 action for a task?"
    text = (
        "## Understanding Actions\nActions in ROS 2 are one of three communication patterns, beside topics "
        "and services.\n\nActions are ideal for tasks that:\n- Take a significant amount of time to complete\n"
        "- Require continuous feedback to the client\n- Need to be cancellable or preemptable\n"
    )
    sentences = answer_sentences(text)
    vectors = embed([question] + [s for _, s in sentences])
    scores = {span: float(v @ vectors[0]) for (span, _), v in zip(sentences, vectors[1:], strict=True)}
    passages = [Passage(1, "ROS 2 > Actions", text, url="https://example.org/1", sentence_scores=scores)]

    def answered(weights: Weights) -> str:
        return compose_answer(choose_sentences(question, passages, embed, weights))

    reasons = (
        "Actions are ideal for tasks that [1]:\nTake a significant amount of time to complete. [1] "
        "Require continuous feedback to the client. [1] Need to be cancellable or preemptable. [1]"
    )
    assert reasons in answered(Weights())
    assert "feedback" not in answered(Weights(max_labelled=0))


def test_a_passage_fetched_to_complete_a_list_answers_nothing_on_its_own():
    # (unless the question names its title: the next test)
    own = "Load balancers cost money on every cloud."
    fetched = "On AWS, spot instances of the t3 family are the cheapest for agent workloads."
    passages = [
        Passage(1, "Costs", own, url="https://example.org/1", sentence_scores={(0, len(own)): 0.2}),
        Passage(
            2,
            "Costs > Pricing Tiers",
            fetched,
            url="https://example.org/2",
            sentence_scores={(0, len(fetched)): 0.9},
            continues=True,
        ),
    ]
    question = "Which AWS spot instance types are cheapest for agent workloads?"
    assert choose_sentences(question, passages, refuse, Weights(max_labelled=0)) == []
    searched = [
        passages[0],
        Passage(
            2,
            "Costs > Pricing Tiers",
            fetched,
            url="https://example.org/2",
            sentence_scores={(0, len(fetched)): 0.9},
        ),
    ]
    assert choose_sentences(question, searched, refuse, Weights(max_labelled=0))


def test_a_fetched_block_answers_a_question_naming_its_title():
    own = "## Direct vs Templated Resources\nMCP resources support two patterns:\n### Direct Resources\nDirect resources have one fixed address."
    fetched = "### Templated Resources\nTemplated resources use address patterns with placeholders the client fills in."

    def passage(number: int, heading: str, text: str, score: float, **fields) -> Passage:
        scores = {span: score for span, _ in answer_sentences(text)}
        return Passage(number, heading, text, url="https://example.org/1", sentence_scores=scores, **fields)

    passages = [
        passage(1, "MCP > Direct vs Templated Resources", own, 0.5, position=3),
        passage(
            2,
            "MCP > Direct vs Templated Resources > Templated Resources",
            fetched,
            0.6,
            position=4,
            continues=True,
        ),
    ]
    answered = compose_answer(
        choose_sentences("What is a templated resource?", passages, refuse, Weights(max_labelled=0))
    )
    assert answered == "Templated resources use address patterns with placeholders the client fills in. [2]"


async def test_a_sentence_counting_the_sections_after_it_goes_on_with_their_titles():
    intro = (
        "# The Piggyback Protocol Pivot\nNow comes the critical piece: how do you enter a vertical market?\n\n"
        "Enter the Piggyback Protocol Pivot (PPP): a three-phase strategy that lets you piggyback on "
        "incumbents, build defensibility, then pivot to strategic control.\n"
    )
    sections = [
        ("Phase 1: Infrastructure Layering", "You build the bridge between incumbent systems."),
        ("Phase 2: Market Validation", "You sign up your first customers."),
        ("Phase 3: Strategic Pivot", "You layer agents on the bridge."),
        ("Why PPP Beats Direct Competition", "Incumbents own the customers."),
    ]

    def passage(number: int, heading: str, text: str, score: float, **fields) -> Passage:
        scores = {span: score for span, _ in answer_sentences(text)}
        return Passage(number, heading, text, url="https://example.org/ppp", sentence_scores=scores, **fields)

    found = [passage(1, "PPP", intro, 0.7, position=0)]
    fetched = [
        passage(n, f"PPP > {title}", f"## {title}\n{body}\n", 0.2, position=n, continues=True)
        for n, (title, body) in enumerate(sections, start=2)
    ]
    question = "What are the three phases of the Piggyback Protocol Pivot?"
    text = compose_answer(choose_sentences(question, found + fetched, refuse, Weights(max_labelled=0)))
    assert text.endswith(
        "then pivot to strategic control. [1] Phase 1: Infrastructure Layering. [2] "
        "Phase 2: Market Validation. [3] Phase 3: Strategic Pivot. [4]"
    )
    chunks = [ContextChunk(str(p.number), p.text) for p in found + fetched]
    verdict = await OfflineChecker().check("", text, chunks, [], None)
    assert verdict.is_grounded and verdict.citations_valid == verdict.citations_found
    # fewer sections found than it counts: the sentence alone
    alone = compose_answer(choose_sentences(question, found + fetched[:2], refuse, Weights(max_labelled=0)))
    assert alone.endswith("then pivot to strategic control. [1]")


def test_a_block_title_announced_alone_is_no_answer():
    text = (
        "Setting up a Unity project for robotics visualization:\n### Unity Settings for Robotics\n"
        "1. **Importing Necessary Packages**:\n   - Install essential packages:\n"
        "     - ProBuilder for quick prototyping of scenes\n     - ProGrids for precise placement of objects\n"
    )
    similarity = {
        "### Unity Settings for Robotics": 0.9,
        "ProBuilder for quick prototyping of scenes": 0.5,
        "ProGrids for precise placement of objects": 0.4,
    }
    answered = answer("Which Unity packages should I install for robotics visualization?", [text], similarity)
    assert "Unity Settings for Robotics" not in answered
    assert "ProBuilder for quick prototyping of scenes. [1]" in answered


QUOTED_PROMPT = (
    "Ask a clarifying question:\n\n"
    '> "You said free-threading still has overhead compared to single-threaded Python. Why?"\n\n'
    "Python 3.14 made free-threading production-ready with 5-10% single-threaded overhead.\n"
)
GLOSSARY = (
    "YAML manifests enable:\n- Version control: check manifests into Git and track every change\n"
    "- Reproducibility: the same manifest gives the same Pod every time\n"
    "- GitOps: push code and a Git webhook triggers the deployment\n"
)


@pytest.mark.parametrize(
    ("question", "text", "similarity", "expected"),
    [
        pytest.param(
            "What does free-threading cost single-threaded Python?",
            QUOTED_PROMPT,
            {
                '> "You said free-threading still has overhead compared to single-threaded Python.': 0.9,
                "Python 3.14 made free-threading production-ready with 5-10% single-threaded overhead.": 0.6,
            },
            "Python 3.14 made free-threading production-ready with 5-10% single-threaded overhead. [1]",
            id="a statement opening a quoted question is what a reader asks",
        ),
        pytest.param(
            "What is GitOps?",
            GLOSSARY,
            {
                "Version control: check manifests into Git and track every change": 0.5,
                "Reproducibility: the same manifest gives the same Pod every time": 0.3,
                "GitOps: push code and a Git webhook triggers the deployment": 0.7,
            },
            "YAML manifests enable [1]:\nGitOps: push code and a Git webhook triggers the deployment. [1]",
            id="an item defining what is asked answers without its list",
        ),
    ],
)
def test_the_answer_is_what_the_book_states_of_what_is_asked(question, text, similarity, expected):
    assert answer(question, [text], similarity) == expected


def test_a_follow_up_is_answered_by_its_own_words_first():
    asked = "What is the Piggyback Protocol Pivot? And how do I know a team can launch?"
    text = (
        "The Piggyback Protocol Pivot has three phases.\n\n"
        "A team can launch once retention stays above ninety percent.\n"
    )
    answered = answer(asked, [text], {s: 0.5 for _, s in answer_sentences(text)})
    assert answered.startswith("A team can launch once retention stays above ninety percent. [1]")


def test_a_sentence_about_the_text_that_defines_what_is_asked_answers():
    text = (
        "This lesson introduces GitOps, a radically different approach: you declare the desired "
        "state of the cluster in Git.\n\nA controller watches the repository all day.\n"
    )
    answered = answer("What is GitOps?", [text], {s: 0.5 for _, s in answer_sentences(text)})
    assert answered.startswith("This lesson introduces GitOps, a radically different approach")


def test_items_of_another_passage_backing_a_sentence_do_not_bring_their_whole_list():
    """A list is completed around the best sentence's own passage: two items of an exercise's
    list that back a stated answer are not a reason to quote the exercise whole (af-23's answer
    went on with six steps of a specification)."""
    stated = "Python 3.14 made free-threading production-ready with a small single-threaded overhead."
    exercise = (
        "## Specification\n- Detect whether free-threading in Python is production-ready\n"
        "- Measure how production-ready free-threading in Python is\n- Recommend a runtime\n- Write a report\n"
    )
    similarity = {
        stated: 0.9,
        "Detect whether free-threading in Python is production-ready": 0.79,
        "Measure how production-ready free-threading in Python is": 0.78,
    }
    text = answer("What made free-threading in Python production-ready?", [stated, exercise], similarity)
    assert text.startswith(f"{stated} [1]") and "Recommend a runtime" not in text


@pytest.mark.parametrize(
    ("sentence", "meta"),
    [
        # a course's signposts say where the book goes next, not what it teaches
        ("After mastering LLMOps, you're ready for Part 9: TypeScript.", True),
        ("This tradeoff is explained in Lesson 2: Collecting Results with asyncio.gather().", True),
        ("Test your mastery of Spec-Kit Plus workflow.", True),
        ("Chapter 14: Master Spec-Kit Plus.", True),
        ("From Lesson 2: gather() Error Handling.", True),
        ("This assessment covers command recognition and workflow sequencing.", True),
        # ... while the sentences they point at do
        ("After a pod restarts, its name changes.", False),
        ("The chapter count of a book is stored in its metadata.", False),
        ("Lesson plans are explained in the teacher's guide.", False),
    ],
)
def test_a_signpost_of_a_course_is_meta(sentence: str, meta: bool):
    assert is_meta_sentence(sentence) is meta


def test_the_items_of_one_list_stand_together_under_one_label():
    """A list item picked after another passage's sentence joins its list: the label is quoted
    once, not once more beside the second item as though it began another answer."""
    because = "Sensor data validation is crucial because"
    picks = [
        Pick(1, "Control systems rely on accurate sensor readings.", because),
        Pick(4, "Sensor fusion combines data from multiple sensors."),
        Pick(1, "Simulation sensors must behave similarly to real sensors.", because),
    ]
    assert compose_answer(picks) == (
        f"{because} [1]:\nControl systems rely on accurate sensor readings. [1] "
        "Simulation sensors must behave similarly to real sensors. [1]\n"
        "Sensor fusion combines data from multiple sensors. [4]"
    )


LOOSE = "Planning must account for physical constraints including energy and actuator limitations."


def test_a_sentence_only_loosely_like_the_question_does_not_answer_it():
    """Sharing none of the question's words, a sentence must be close to it in meaning: at 0.4
    it is about the neighbourhood of the question, not an answer (unanswerable questions of the
    books' tune splits were answered so, SQuAD questions of other articles too)."""
    question = "Why is inverse kinematics for a humanoid leg hard to solve?"
    assert answer(question, [LOOSE], {LOOSE: 0.4}) == ""
    assert answer(question, [LOOSE], {LOOSE: 0.6}) == f"{LOOSE} [1]"


def test_a_list_question_titling_a_counted_heading_is_answered_by_its_sections():
    """The sentences under "Step 1: Ask" and "Step 2: Explain" say little like "What are the steps
    of the safety pattern?", but the heading counting them is titled by it: its sections answer."""
    pattern = "Dialogue > The 2-Step Safety Pattern"
    passages = [
        Passage(
            n,
            f"{pattern} > {title}",
            f"### {title}\n\n{text}",
            url="https://example.org/safety",
            sentence_scores={span: 0.1 for span, _ in answer_sentences(f"### {title}\n\n{text}")},
        )
        for n, (title, text) in enumerate(
            [
                ("Step 1: Ask", "The agent checks what you want first."),
                ("Step 2: Explain", "It tells you its plan."),
            ],
            start=1,
        )
    ]
    picks = choose_sentences(
        "What are the steps of the safety pattern?", passages, refuse, Weights(max_labelled=0)
    )
    assert [pick.sentence for pick in picks][-2:] == ["Step 1: Ask.", "Step 2: Explain."]
