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
