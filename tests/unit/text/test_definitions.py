"""The terms a chunk defines and the term a question asks about meet under one key."""

from __future__ import annotations

from services.common.text.definitions import asked_term, defined_terms, term_key


def test_the_set_shapes_of_a_definition_are_found():
    text = (
        "## Path A: General Agents\n\n"
        "A **General Agent** is a multi-purpose reasoning system designed to handle any task.\n\n"
        "1. **ROS#**: C# implementation of ROS client for Unity\n"
        "- **Network Layer:** Handles communication between ROS 2 and Unity\n\n"
        "Gazebo is a 3D robot simulator. This is a sentence about nothing. Topics carry messages.\n"
        "This lesson introduces **GitOps**, a radically different approach to deployments.\n"
    )
    assert defined_terms(text) == ["agent general", "gazebo", "gitop", "layer network", "ros#"]


def test_a_question_asking_what_a_term_is_names_its_key():
    assert asked_term("What is a General Agent?") == term_key("General Agents") == "agent general"
    assert asked_term("In MCP, what is a templated resource?") == "resourc templat"
    assert asked_term("What is ROS#?") == "ros#" != term_key("ROS")
    assert asked_term("Why do agents need tools?") == ""
    assert asked_term("What is the difference between topics and services?") == ""


def test_definitions_worded_as_books_also_word_them_are_found():
    """A label, a bold sentence, a sentence after a bold one, a spelt-out abbreviation, a heading
    asking the question: each is the place that answers "What is X?"."""
    assert defined_terms("**Definition**: Hooks are automated scripts that run on events.") == [
        "definition",
        "hook",
    ]
    assert defined_terms("**Helm solves this problem.** Helm is the package manager for Kubernetes.") == [
        "helm"
    ]
    assert defined_terms("Enter Pydantic. **Pydantic is a library that validates data at runtime**.") == [
        "pydantic"
    ]
    assert defined_terms(
        "This part introduces LLMOps (Large Language Model Operations)—the discipline of ..."
    ) == ["llmop"]
    assert defined_terms("## What Are Hooks?\n\nText.\n\n### Concept 1: What Are Helm Hooks?\n") == [
        "helm hook",
        "hook",
    ]


def test_a_sentence_merely_using_a_term_defines_nothing():
    text = (
        "Hooks run after edits. Note: hooks are optional.\n"
        "We use LLMOps (Large Language Model Operations) daily.\n"
        "## Why Hooks Matter\n"
    )
    assert defined_terms(text) == []
