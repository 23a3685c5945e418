"""Sentence units along Markdown structure: the splitter the validator, Search and the answerer share."""

from __future__ import annotations

from services.common.text.units import UnitKind, line_sentences, sentence_ends, sentence_spans, sentence_units


def units(text: str) -> list[tuple[str, str]]:
    return [(unit.kind, text[unit.start : unit.end]) for unit in sentence_units(text)]


def test_spans_are_offsets_into_the_original_text():
    text = "# Setup\n\nInstall the\n  package first. Then run it.\n- **Cause**: DDS issues\n| a | b |\n"
    for unit in sentence_units(text):
        piece = text[unit.start : unit.end]
        assert piece == piece.strip() and piece
    assert sentence_spans(text) == [(u.start, u.end) for u in sentence_units(text)]


def test_a_soft_wrap_inside_a_paragraph_is_still_joined():
    text = "Sensor fusion combines data\nfrom many sensors. It is\nrobust."
    assert units(text) == [
        (UnitKind.PARAGRAPH, "Sensor fusion combines data\nfrom many sensors."),
        (UnitKind.PARAGRAPH, "It is\nrobust."),
    ]


def test_list_items_are_never_glued_to_their_neighbours():
    text = (
        "**Cause**: DDS configuration issues\n**Solution**:\n1. Check ROS_DOMAIN_ID environment variable\n"
        "2. Verify FastDDS configuration\n- an item that wraps\n  onto an indented line. And goes on.\nA paragraph after it."
    )
    assert units(text) == [
        (UnitKind.PARAGRAPH, "**Cause**: DDS configuration issues"),
        (UnitKind.PARAGRAPH, "**Solution**:"),
        (UnitKind.LIST_ITEM, "Check ROS_DOMAIN_ID environment variable"),
        (UnitKind.LIST_ITEM, "Verify FastDDS configuration"),
        (UnitKind.LIST_ITEM, "an item that wraps\n  onto an indented line."),
        (UnitKind.LIST_ITEM, "And goes on."),
        (UnitKind.PARAGRAPH, "A paragraph after it."),
    ]


def test_a_line_ending_with_a_colon_ends_its_unit():
    text = "Sensor fusion works as follows:\nSensor fusion combines data."
    assert [piece for _, piece in units(text)] == [
        "Sensor fusion works as follows:",
        "Sensor fusion combines data.",
    ]


def test_table_rows_are_units_of_their_own_and_never_cut_at_a_period():
    text = (
        "Formats compared.\n| Feature | URDF. | SDF |\n|---|---|---|\n| Worlds | No | Yes |\nAfter the table."
    )
    assert units(text) == [
        (UnitKind.PARAGRAPH, "Formats compared."),
        (UnitKind.TABLE_ROW, "| Feature | URDF. | SDF |"),
        (UnitKind.TABLE_ROW, "|---|---|---|"),
        (UnitKind.TABLE_ROW, "| Worlds | No | Yes |"),
        (UnitKind.PARAGRAPH, "After the table."),
    ]


def test_a_heading_is_one_unit_even_with_a_numbered_title():
    text = "### 2. Permission Issues with Gazebo\nRun it as your own user."
    assert units(text) == [
        (UnitKind.HEADING, "### 2. Permission Issues with Gazebo"),
        (UnitKind.PARAGRAPH, "Run it as your own user."),
    ]


def test_link_lines_are_units_of_their_own():
    text = (
        "Read more about topics here\n[ROS 2 Topics](https://docs.ros.org/en/humble/Topics.html)\n"
        "- [QoS settings](https://docs.ros.org/qos.html) - official\n"
        "See the [guide](./guide.md) to understand how frames are chained together."
    )
    assert units(text) == [
        (UnitKind.PARAGRAPH, "Read more about topics here"),
        (UnitKind.LINK_LINE, "[ROS 2 Topics](https://docs.ros.org/en/humble/Topics.html)"),
        (UnitKind.LINK_LINE, "[QoS settings](https://docs.ros.org/qos.html) - official"),
        (UnitKind.PARAGRAPH, "See the [guide](./guide.md) to understand how frames are chained together."),
    ]


def test_admonitions_html_and_mdx_lines_are_markup():
    text = (
        "import Tabs from '@theme/Tabs';\n:::note\nThe simulator needs a GPU.\n:::\n<details>\n"
        "<summary>More</summary>\n<p>This paragraph is real prose text.</p>\n---"
    )
    assert units(text) == [
        (UnitKind.MARKUP, "import Tabs from '@theme/Tabs';"),
        (UnitKind.MARKUP, ":::note"),
        (UnitKind.PARAGRAPH, "The simulator needs a GPU."),
        (UnitKind.MARKUP, ":::"),
        (UnitKind.MARKUP, "<details>"),
        (UnitKind.MARKUP, "<summary>More</summary>"),
        (UnitKind.PARAGRAPH, "<p>This paragraph is real prose text.</p>"),
        (UnitKind.MARKUP, "---"),
    ]


def test_code_fences_of_any_length_hold_code_lines_until_they_close():
    text = "Example below.\n````md\n```jsx\nrun(). more()\n```\n````\nAfter the code.\n~~~\ncode\n~~~"
    assert units(text) == [
        (UnitKind.PARAGRAPH, "Example below."),
        (UnitKind.MARKUP, "````md"),
        (UnitKind.CODE, "```jsx"),
        (UnitKind.CODE, "run(). more()"),
        (UnitKind.CODE, "```"),
        (UnitKind.MARKUP, "````"),
        (UnitKind.PARAGRAPH, "After the code."),
        (UnitKind.MARKUP, "~~~"),
        (UnitKind.CODE, "code"),
        (UnitKind.MARKUP, "~~~"),
    ]
    left_open = "Run this.\n```python\nprint('not prose.')\nx = 1"
    assert [kind for kind, _ in units(left_open)] == [
        UnitKind.PARAGRAPH,
        UnitKind.MARKUP,
        UnitKind.CODE,
        UnitKind.CODE,
    ]


def test_a_sentence_ends_inside_bold_and_code_closers():
    text = "**Q: How do I make nodes faster?**\nA: Use QoS settings. **Note.** Keep it short."
    assert [piece for _, piece in units(text)] == [
        "**Q: How do I make nodes faster?**",
        "A: Use QoS settings.",
        "**Note.**",
        "Keep it short.",
    ]


def test_sentence_ends_follow_closing_quotes_and_markers_but_not_abbreviations():
    text = 'He said "stop." [1] Dr. Watson came, e.g. at noon. Then'
    assert [text[:end] for end in sentence_ends(text)] == [
        'He said "stop." [1]',
        'He said "stop." [1] Dr. Watson came, e.g. at noon.',
        text,
    ]


def test_line_sentences_keep_every_character_but_the_spaces_at_each_cut():
    line = "  - Install it, e.g. with pip.   Then run it!  It was the 19th century.First light"
    pieces = line_sentences(line)
    assert pieces == ["  - Install it, e.g. with pip.", "Then run it!", "It was the 19th century.First light"]
    assert " ".join(pieces).split() == line.split()
    assert line_sentences("one line") == ["one line"] and line_sentences("") == [""]


def test_a_quoted_question_going_on_in_lower_case_is_part_of_its_sentence():
    text = (
        '"Can you help with my learning assignment?" passes the keyword filter but violates the policy. '
        'She asked "Why?" Then she left.'
    )
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        '"Can you help with my learning assignment?" passes the keyword filter but violates the policy.',
        'She asked "Why?"',
        "Then she left.",
    ]


def test_a_name_in_code_is_not_two_sentences_glued_together():
    # "century.First" is two sentences a copy glued; "asyncio.TaskGroup()" and "os.Path(" are names.
    text = (
        "What is the key advantage of asyncio.TaskGroup() over asyncio.gather()? "
        "Build it with pathlib.Path(name) or os.Path.join. It was the 19th century.First came the war."
    )
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "What is the key advantage of asyncio.TaskGroup() over asyncio.gather()?",
        "Build it with pathlib.Path(name) or os.Path.join.",
        "It was the 19th century.",
        "First came the war.",
    ]
