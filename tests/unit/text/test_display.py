"""Markdown rendered as plain text for display: markup goes, every word stays."""

from __future__ import annotations

import pytest

from services.common.text.display import display_text
from services.common.text.words import tokens


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("**Cause**: DDS configuration issues", "Cause: DDS configuration issues"),
        ("### 2. Permission Issues ###", "2. Permission Issues"),
        ("- Check `ROS_DOMAIN_ID` in *your* shell", "Check ROS_DOMAIN_ID in your shell"),
        ("1. Open the **[versioning](../x.md)** page", "Open the versioning page"),
        ("See ![robot arm](img/arm.png) and <https://ros.org>", "See robot arm and https://ros.org"),
        ("The [docs](https://a.b/c_(d)) say so.", "The docs say so."),
        ("> quoted __bold__ and ~~gone~~ text", "quoted bold and gone text"),
        ("| **Documentation** | 15 | Clear README |", "Documentation 15 Clear README"),
        ("<p>Hello <b>world</b></p> &amp; more", "Hello world & more"),
        (":::note\nMind the *GPU* load.\n:::", "Mind the GPU load."),
        ("- [ ] Coordinate frames align with ROS", "Coordinate frames align with ROS"),
        ("```bash\nros2 run demo talker\n```", "ros2 run demo talker"),
        # A bold span over two sentences leaves each sentence one half of it.
        ("**Agents don't compete.", "Agents don't compete."),
        ("Agents BUILD agents.**", "Agents BUILD agents."),
        ("a ** b and x__", "a ** b and x__"),
        # A name that starts with a period keeps the space before it.
        ("Create a `.env` file, not a **.envrc** one .", "Create a .env file, not a .envrc one."),
    ],
)
def test_markup_is_removed(markdown: str, shown: str):
    assert display_text(markdown) == shown


def test_snake_case_arithmetic_and_code_keep_their_characters():
    assert (
        display_text("Set max_step_size to 2*3*4 or `**kwargs`.") == "Set max_step_size to 2*3*4 or **kwargs."
    )


def test_every_word_of_prose_stays_in_order_and_only_link_targets_and_tags_go():
    markdown = (
        "- **Topic**: A named `bus` over which [nodes](./nodes.md) exchange *messages* (see <b>QoS</b>)"
    )
    shown = display_text(markdown)
    assert shown == "Topic: A named bus over which nodes exchange messages (see QoS)"
    raw = iter(tokens(markdown))
    assert all(word in raw for word in tokens(shown)), "the shown words are the raw words in order"


def test_code_keeps_its_spaces_before_punctuation():
    # the "." of `docker build` is its build context, not a sentence's end
    assert display_text("Build it: `docker build -t api .` now (see <b>QoS</b> ).") == (
        "Build it: docker build -t api . now (see QoS)."
    )


def test_half_a_bold_span_cut_by_a_sentence_end_is_dropped_anywhere():
    assert display_text("It does something radical: **It snapshots file state at checkpoints.") == (
        "It does something radical: It snapshots file state at checkpoints."
    )
    assert display_text("Then it rolls back.** Done") == "Then it rolls back. Done"
    assert display_text("a **bold** word and 2**3") == "a bold word and 2**3"
