"""Prose sentences of a chunk."""

from __future__ import annotations

from services.common.text.prose import (
    inner_sections,
    normalise,
    prose_sentences,
    sectioned_sentences,
    sections_counted,
)


def test_prose_sentences_are_offsets_into_the_text_without_code_headings_or_fragments():
    text = "# Setup\nInstall the package\n  first.\n```bash\npip install x. And more here\n```\nThen run it. Ok.\nAs follows:\n"
    spans = prose_sentences(text)
    assert [normalise(text[a:b]) for a, b in spans] == ["Install the package first.", "Then run it."]


def test_a_fence_left_open_hides_the_rest_of_the_chunk():
    text = "Run the command below now.\n```python\nprint('this is not prose at all.')"
    assert [text[a:b] for a, b in prose_sentences(text)] == ["Run the command below now."]


def test_only_prose_answers_not_tables_links_markup_questions_or_list_fragments():
    text = (
        ":::note\nThe simulator needs a GPU to render scenes.\n:::\n"
        "| Feature | URDF | SDF |\n|---|---|---|\n| World description | No | Yes |\n"
        "[ROS 2 Tutorials](https://docs.ros.org/en/humble/Tutorials.html)\n"
        "**Cause**: DDS configuration issues\n"
        "- Restart ROS 2 daemon\n"
        "- **Topic**: A named bus over which nodes exchange messages\n"
        "**Q: How do I make my nodes more efficient?**\n"
        "A: Use appropriate QoS settings.\n"
        '<TabItem value="py" label="Python">\n'
        "- **Era**: 2000-2018\n"
    )
    assert [normalise(text[a:b]) for a, b in prose_sentences(text)] == [
        "The simulator needs a GPU to render scenes.",
        "**Topic**: A named bus over which nodes exchange messages",
        "A: Use appropriate QoS settings.",
        "**Era**: 2000-2018",  # a labelled figure is a fact however short
    ]


def test_each_sentence_knows_the_heading_it_stands_under_in_the_chunk():
    text = "Intro text stands here.\n## Learning Objectives\n- Understand the reasons for Physical AI\n## Case\nIt is a shift."
    found = [(normalise(text[s.start : s.end]), s.heading) for s in sectioned_sentences(text)]
    assert found == [
        ("Intro text stands here.", ""),
        ("Understand the reasons for Physical AI", "Learning Objectives"),
        ("It is a shift.", "Case"),
    ]


def test_a_list_item_knows_its_label_and_its_list():
    text = (
        "## Patterns\n#### 2. Publisher-Subscriber (Topics)\n- Asynchronous, many-to-many communication\n"
        "- Used for streaming data like sensor readings\n\nSensors fall into categories:\n"
        "- Proprioceptive sensors measure the internal state\n- Short one\n\nYou can:\n"
        "- Use Claude Code productively without any hooks\n\n### What it's NOT\n"
        "- A brainstorm document that is far too vague\n\nA paragraph stands here on its own."
    )
    found = [(normalise(text[s.start : s.end]), s.label, len(s.items)) for s in sectioned_sentences(text)]
    assert found == [
        # the heading, without its numbering
        ("Asynchronous, many-to-many communication", "Publisher-Subscriber (Topics)", 2),
        ("Used for streaming data like sensor readings", "Publisher-Subscriber (Topics)", 2),
        # the lead-in line; the fragment "Short one" is no sentence, but an item of the list
        ("Proprioceptive sensors measure the internal state", "Sensors fall into categories", 2),
        # a lead-in that says nothing on its own gives way to the heading
        ("Use Claude Code productively without any hooks", "Publisher-Subscriber (Topics)", 1),
        # a heading of stop words alone labels nothing
        ("A brainstorm document that is far too vague", "", 1),
        ("A paragraph stands here on its own.", "", 0),
    ]


def test_the_answerer_also_reads_a_line_ending_with_a_colon_that_states_a_fact():
    text = (
        "Python 3.10+ is required for ROS 2 Humble Hawksbill compatibility:\n```bash\npython3 --version\n```\n"
        "Create a validation script to check the LiDAR data:\n```python\nprint(scan)\n```\n"
        "A typical embodied agent has several key components:\n- Sensors that perceive the world around it\n"
        "A handoff in the Agents SDK has three components:\n### 1. Register the target agent\n"
    )
    quoted = [normalise(text[s.start : s.end]) for s in sectioned_sentences(text, for_answers=True)]
    assert quoted == [
        "Python 3.10+ is required for ROS 2 Humble Hawksbill compatibility:",
        "Sensors that perceive the world around it",  # its lead-in is its label, not a sentence
        # a line announcing the sections below it states nothing they do not: it labels their
        # titles (the chunks after this one hold the other two)
        "### 1. Register the target agent",
    ]
    assert [normalise(text[a:b]) for a, b in prose_sentences(text)] == [
        "Sensors that perceive the world around it"
    ]


def test_a_line_ending_with_a_colon_whose_subject_does_something_states_it():
    text = (
        "Templated resources use URI patterns with placeholders that the client fills in:\n"
        '```json\n{"uri": "docs://documents/{doc_id}"}\n```\n'
        "Build and run tests:\n```bash\ncolcon test\n```\n"
        "Or use ROS 2 namespaces:\n```bash\nros2 run pkg node\n```\n"
        "Steps to create the package:\n```bash\nros2 pkg create pkg\n```\n"
    )
    readings = [s.reading for s in sectioned_sentences(text, for_answers=True)]
    # the statement is quoted as it stands; an instruction, first in its line or after "and" /
    # "or", and a purpose after "to", introduce the command below them
    assert readings == [
        "",
        "Build and run tests: `colcon test`",
        "Or use ROS 2 namespaces: `ros2 run pkg node`",
        "Steps to create the package: `ros2 pkg create pkg`",
    ]


ANNOUNCED = (
    "## Path A\nThree General Agents dominate 2025:\n\n**Claude Code** (Anthropic)\n"
    "- Your natural language interface to AI-native development\n\n**Gemini CLI** (Google)\n"
    "- Open-source, CLI-first approach to agentic development\n\n"
    "### The Bridge\nThe bridge has two parts:\n\n#### 1. Network layer\n\nIt sends bytes over the network.\n\n"
    "#### 2. Message translation\n\nIt converts messages into Unity data structures.\n\n### Next\nMore text follows here."
)


def test_the_titles_of_the_blocks_a_lead_in_announces_are_the_items_of_its_list():
    found = [
        (normalise(ANNOUNCED[s.start : s.end]), s.label, len(s.items), s.list_only)
        for s in sectioned_sentences(ANNOUNCED, for_answers=True)
    ]
    assert found == [
        ("**Claude Code** (Anthropic)", "Three General Agents dominate 2025", 2, True),
        # a bold title line just above a list labels it
        ("Your natural language interface to AI-native development", "Claude Code (Anthropic)", 1, False),
        ("**Gemini CLI** (Google)", "Three General Agents dominate 2025", 2, True),
        ("Open-source, CLI-first approach to agentic development", "Gemini CLI (Google)", 1, False),
        # the lead-in is the headings' label, not a stated fact of its own; a higher heading ends them
        ("#### 1. Network layer", "The bridge has two parts", 2, True),
        ("It sends bytes over the network.", "", 0, False),
        ("#### 2. Message translation", "The bridge has two parts", 2, True),
        ("It converts messages into Unity data structures.", "", 0, False),
        ("More text follows here.", "", 0, False),
    ]
    # Search scores prose alone: no titles
    assert "**Claude Code** (Anthropic)" not in [
        normalise(ANNOUNCED[a:b]) for a, b in prose_sentences(ANNOUNCED)
    ]


def test_one_block_after_a_lead_in_is_no_list_of_titles():
    text = "Here is the setup:\n\n**Step one**\n\nRun the installer on your machine.\n"
    assert not any(s.list_only for s in sectioned_sentences(text, for_answers=True))


NESTED = (
    "If simulation is running slowly:\n\n1. **Reduce update rate**:\n\n   ```xml\n"
    "   <update_rate>100</update_rate>\n   ```\n\n2. **Simplify collision geometries**:\n"
    "   - Use simple shapes (boxes, spheres, cylinders) instead of meshes\n"
    "   - Reduce the number of triangles in visual meshes\n3. **Install packages**:\n"
    "   - Install essential packages:\n     - ProBuilder (for quick prototyping)\n"
    "     - ProGrids (for precise placement)\n   - Then restart the editor and check it again\n\n"
    "A paragraph ends the list here.\n"
)


def test_a_list_is_its_items_at_one_depth_and_a_sub_list_is_labelled_by_its_item():
    found = [
        (normalise(NESTED[s.start : s.end]), s.label, len(s.items), s.list_only)
        for s in sectioned_sentences(NESTED, for_answers=True)
    ]
    assert found == [
        # a step with its command is an item of its list (steps.py)
        ("**Reduce update rate**:", "If simulation is running slowly", 3, False),
        # a sub-list is labelled by the item it is nested in
        (
            "Use simple shapes (boxes, spheres, cylinders) instead of meshes",
            "Simplify collision geometries",
            2,
            False,
        ),
        ("Reduce the number of triangles in visual meshes", "Simplify collision geometries", 2, False),
        # a few words are too few to answer alone, but they are one of the things their list names
        ("ProBuilder (for quick prototyping)", "Install essential packages", 2, True),
        ("ProGrids (for precise placement)", "Install essential packages", 2, True),
        ("Then restart the editor and check it again", "Install packages", 2, False),
        ("A paragraph ends the list here.", "", 0, False),
    ]
    # Search scores prose alone, as before: no short items
    assert [normalise(NESTED[a:b]) for a, b in prose_sentences(NESTED)] == [
        "Use simple shapes (boxes, spheres, cylinders) instead of meshes",
        "Reduce the number of triangles in visual meshes",
        "Then restart the editor and check it again",
        "A paragraph ends the list here.",
    ]


# module-2/urdf-sdf-formats/urdf-basics.md, "Loading URDF in Gazebo".
LOADING = """To load your URDF in Gazebo:

1. Save your URDF file with a `.urdf` extension
2. Convert to SDF format for Gazebo:
   ```bash
   gz sdf -p your_robot.urdf
   ```
3. Load in Gazebo:
   ```bash
   $ gz sim -r your_robot.sdf
   ```
"""


def test_a_step_is_read_with_the_short_command_it_introduces():
    sentences = sectioned_sentences(LOADING, for_answers=True)
    readings = [s.reading or normalise(LOADING[s.start : s.end]) for s in sentences]
    assert readings == [
        "Save your URDF file with a `.urdf` extension",
        "Convert to SDF format for Gazebo: `gz sdf -p your_robot.urdf`",
        "Load in Gazebo: `gz sim -r your_robot.sdf`",  # without its prompt
    ]
    # still items of their list, under its label
    assert {s.label for s in sentences} == {"To load your URDF in Gazebo"}
    assert all(len(s.items) == 3 for s in sentences)
    # Search scores prose alone: no step, no code
    assert [normalise(LOADING[a:b]) for a, b in prose_sentences(LOADING)] == [
        "Save your URDF file with a `.urdf` extension"
    ]


def test_a_program_or_a_statement_is_not_quoted_with_its_code():
    program = "Create the node:\n```python\nimport rclpy\nrclpy.init()\nnode = rclpy.create_node('a')\nrclpy.spin(node)\n```\n"
    statement = "Python 3.10+ is required for ROS 2 Humble:\n```bash\npython3 --version\n```\n"
    unclosed = "Start the simulator:\n```bash\ngz sim -r world.sdf"
    assert [s.reading for s in sectioned_sentences(program, for_answers=True)] == []
    assert [s.reading for s in sectioned_sentences(statement, for_answers=True)] == [""]
    assert [s.reading for s in sectioned_sentences(unclosed, for_answers=True)] == []


def test_a_comment_in_a_shell_block_is_read_with_the_commands_it_labels():
    text = (
        "```bash\n# Build and run tests\ncolcon build --packages-select pkg\ncolcon test --packages-select pkg\n\n"
        "# Clean build artifacts\nrm -rf build/ install/ log/\n# x\nls\n```\n"
        "```python\n# For sensor data\nqos = QoSProfile(depth=10)\n```\n"
    )
    assert [s.reading for s in sectioned_sentences(text, for_answers=True)] == [
        "Build and run tests: `colcon build --packages-select pkg; colcon test --packages-select pkg`",
        "Clean build artifacts: `rm -rf build/ install/ log/`",  # up to the next comment
        # a one-word comment labels nothing, and a program's comments are not steps
    ]


def test_a_command_continued_on_the_next_line_is_one_command():
    text = "```bash\n# Upgrade staging\nhelm upgrade api ./chart \\\n  -f values-staging.yaml\n```\n"
    assert [s.reading for s in sectioned_sentences(text, for_answers=True)] == [
        "Upgrade staging: `helm upgrade api ./chart -f values-staging.yaml`"
    ]


def test_a_text_ending_with_a_paragraph_that_counts_says_how_many_sections_follow():
    counting = (
        "# PPP\nEnter the PPP: a three-phase strategy that lets you pivot.\n\n![The three phases](ppp.png)\n"
    )
    assert sections_counted(counting) == 3
    assert sections_counted(counting.replace("three-phase", "careful")) == 0
    # a list after the count names the things in the text itself
    assert sections_counted(f"{counting}\n- Layering\n- Validation\n- Pivot\n") == 0


def test_a_chunk_opening_a_section_lists_the_subsections_it_holds():
    opening = "## The 5-Step Safety Pattern\n\nEvery risky command goes through it.\n\n### Step 1: Ask\n\nYou ask.\n\n#### A note\n\nx\n"
    assert inner_sections(opening) == ["Step 1: Ask"]  # one level under, not deeper
    assert inner_sections("### Step 2: Explain\n\nThe agent explains.") == []
    assert inner_sections("Text before any heading.\n\n### Step 1: Ask\n") == []
