"""The checker reads meaning, not only words: the wrong answers of issue 27 that it accepted, and
the right one it rejected, against the Physical AI book's own passages (quoted as they stand in
../shared/eval/corpora/physical-ai-book/docs)."""

from __future__ import annotations

import pytest

from services.common.text.question import focus_terms
from services.validation.focus import missed_focus
from services.validation.grounding import ContextChunk
from tests.unit.text.test_prose_sentences import LOADING as STEPS

# module-2/urdf-sdf-formats/urdf-basics.md, "Key Components".
JOINTS = """### Joints
Joints connect links and define how they can move relative to each other:
- **Fixed**: No movement (weld)
- **Revolute**: Rotational movement with limits
- **Continuous**: Unlimited rotational movement
- **Prismatic**: Linear sliding movement
- **Floating**: 6DOF movement (no constraints)
"""
# module-1/ros2-architecture/index.md, "Communication Patterns".
PATTERNS = """### 3. Communication Patterns

ROS 2 supports multiple communication patterns:

#### Publisher-Subscriber (Topics)
- Asynchronous, many-to-many communication
- Used for streaming data like sensor readings

#### Service-Client
- Synchronous request-response communication
- Used for actions that need confirmation

#### Action Server-Client
- Asynchronous with feedback and goal management
- Used for long-running tasks
"""
# intro/foundations-of-physical-ai/index.md, "Agent Architecture Overview".
AGENT_PARTS = """### Agent Architecture Overview

A typical embodied agent consists of several key components:

- **Sensors**: Mechanisms for perceiving environmental conditions (light, temperature, obstacles)
- **Actuators**: Components that enable physical interaction with the environment
- **Processing Unit**: The decision-making system that interprets sensor data and controls actuators
- **Memory System**: Storage for environmental information and behavioral patterns
"""
# module-2/urdf-sdf-formats/urdf-basics.md, its opening.
URDF = (
    "URDF (Unified Robot Description Format) is an XML format used to describe robot models in ROS. "
    "It defines the physical and visual properties of a robot, including links, joints, and sensors."
)
# intro/humanoid-landscape/index.md and intro/sensor-systems-overview/index.md.
HUMANOIDS = """#### 2. Boston Dynamics Atlas
- **Current Status**: Actively developed
- **Key Features**: Dynamic movement, complex locomotion, manipulation
- **Significance**: Demonstrates advanced dynamic control
"""
LIDAR = (
    "LiDAR sensors have parameters such as minimum and maximum range (measured in meters), angular "
    "resolution (degrees per measurement), and field of view (typically 360 degrees for full "
    "environment scanning)."
)
# agentfactory: 05-Python-Fundamentals/15-python-uv-package-manager/01-why-uv-...md, its opening.
UV_SETUP = """## The 30-Second Setup Problem

Imagine you want to build a Python project right now. Here's what happens with traditional tools:

**With UV (the modern way):**
- One command: `uv init my-project`
- Done. Your project is ready.

The difference? **UV takes 30 seconds where pip takes 5 minutes.** But more importantly, UV eliminates the confusion entirely.
"""
UV_QUESTION = "How long does setting up a Python project take with uv compared with pip?"


def chunks(*texts: str) -> list[ContextChunk]:
    return [ContextChunk(str(i + 1), text) for i, text in enumerate(texts)]


def claim_verdict(result, starts: str):
    return next(claim for claim in result.claims if claim.text.startswith(starts))


async def test_a_reversed_relation_is_not_a_paraphrase(checker):
    # The book: revolute joints rotate with limits, continuous ones without. Accepted at 0.96.
    answer = "Joints connect links [1]. The revolute can only rotate, while the continuous can move with limits [1]."
    result = await checker.check(
        "What is the difference between revolute and continuous joints?", answer, chunks(JOINTS), [], None
    )
    assert not result.is_grounded
    reversed_claim = claim_verdict(result, "the continuous")
    assert not reversed_claim.supported and "opposite of 'limit'" in reversed_claim.reason


async def test_a_word_negated_by_its_prefix_reverses_what_the_passage_says(checker):
    # The book: predictable failure modes. "unpredictable" is one word the chunk lacks among many it has.
    safety = (
        "Physical systems offer inherent safety benefits. Physical limits act as natural safety "
        "boundaries, and physical systems have predictable failure modes that engineers can design for."
    )
    question = "Why are physical constraints good for safety?"
    wrong = "Physical limits act as natural safety boundaries [1]. Physical systems have unpredictable failure modes [1]."
    result = await checker.check(question, wrong, chunks(safety), [], None)
    assert not result.is_grounded
    assert "opposite of 'unpredictable'" in claim_verdict(result, "Physical systems have").reason
    right = wrong.replace("unpredictable", "predictable")
    assert (await checker.check(question, right, chunks(safety), [], None)).is_grounded


async def test_a_faithful_paraphrase_adding_a_common_verb_is_supported(checker):
    # Rejected over "allow": the book's list item leaves the verb implicit.
    question = "What is the difference between revolute and continuous joints?"
    one_line = await checker.check(
        question, "Revolute joints allow rotational movement with limits [1].", chunks(JOINTS), [], None
    )
    assert one_line.is_grounded, one_line.claims
    answer = (
        "Joints connect links [1]. Revolute joints allow rotational movement with limits, "
        "while continuous joints do not have these constraints [1]."
    )
    result = await checker.check(question, answer, chunks(JOINTS), [], None)
    assert result.is_grounded and result.answers_question, result.claims
    # The verb is what the chunk leaves out, not a licence: a verb it states otherwise still counts.
    wrong = await checker.check(
        question, "Revolute joints allow linear sliding movement [1].", chunks(JOINTS), [], None
    )
    assert not wrong.is_grounded


# module-1/building-ros2-packages/index.md, "Basic Colcon Commands" (its opening lines).
COLCON = """### Basic Colcon Commands

```bash
# Navigate to workspace root
cd ~/ros2_ws

# Build specific package
colcon build --packages-select my_robot_controller
```
"""


async def test_running_a_command_the_book_shows_is_supported(checker):
    # A model shown the block answers with the verb it leaves implicit; the command still counts.
    question = "How do I build just one package in my ROS 2 workspace instead of all of them?"
    right = await checker.check(
        question, "Run colcon build --packages-select my_robot_controller [1].", chunks(COLCON), [], None
    )
    assert right.is_grounded, right.claims
    wrong = await checker.check(
        question, "Run colcon build --packages-skip my_robot_controller [1].", chunks(COLCON), [], None
    )
    assert not wrong.is_grounded


# module-1/actions-robotic-systems/index.md, "When to Use Actions".
WHEN_TO_USE_ACTIONS = """### When to Use Actions

Actions are ideal for tasks that:
- Take a significant amount of time to complete
- Require continuous feedback to the client
- Need to be cancellable or preemptable
- Have intermediate results during execution

Examples include:
- Navigation to a specific location
- Robot arm motion planning and execution
"""


async def test_a_sentence_gathering_items_of_one_list_is_supported(checker):
    # What a model writes from the list: three of its items, in one sentence, in their order.
    question = "Why would I use a ROS 2 action for a task?"
    answer = (
        "Use an action when a task takes a significant amount of time to complete, requires "
        "continuous feedback, and needs to be cancellable [1]."
    )
    right = await checker.check(question, answer, chunks(WHEN_TO_USE_ACTIONS), [], None)
    assert right.is_grounded, right.claims
    # Words of the list put together in another order are no longer what it says.
    wrong = await checker.check(
        question,
        "Use an action when a task needs continuous execution and requires a significant amount of feedback [1].",
        chunks(WHEN_TO_USE_ACTIONS),
        [],
        None,
    )
    assert not wrong.is_grounded


# intro/sensor-systems-overview/index.md, "Sensor Categories in Physical AI".
SENSOR_CATEGORIES = """### Sensor Categories in Physical AI

Robotic sensors can be broadly categorized into:

1. **Proprioceptive Sensors**: Measure the robot's internal state
2. **Exteroceptive Sensors**: Measure the external environment
3. **Interoceptive Sensors**: Measure internal systems and conditions
"""


@pytest.mark.parametrize(
    "answer, grounded",
    [
        ("The three categories are proprioceptive, exteroceptive and interoceptive sensors [1].", True),
        ("The categories are interoceptive, proprioceptive and exteroceptive sensors [1].", True),
        # a label's description is still said of its own label only
        ("Proprioceptive sensors measure the external environment [1].", False),
        ("The categories are proprioceptive, exteroceptive and optical sensors [1].", False),
    ],
)
async def test_the_labels_of_a_list_may_be_named_together(checker, answer, grounded):
    question = "What are the three categories of robotic sensors?"
    result = await checker.check(question, answer, chunks(SENSOR_CATEGORIES), [], None)
    assert result.is_grounded is grounded, result.claims


# intro/foundations-of-physical-ai/index.md, "Embodied Intelligence".
EMBODIED = (
    "Embodied intelligence emphasizes that intelligence emerges from the interaction between an "
    "agent and its environment. This concept challenges the traditional view of intelligence as "
    "purely computational, highlighting the importance of physical form and environmental interaction."
)


@pytest.mark.parametrize(
    "answer, grounded",
    [
        (
            "Embodied intelligence is the idea that intelligence emerges when an agent interacts with its environment [1].",
            True,
        ),
        (
            "Embodied intelligence is the idea that intelligence emerges when an agent controls its environment [1].",
            False,
        ),
    ],
)
async def test_a_word_in_another_part_of_speech_is_the_same_word(checker, answer, grounded):
    # "interacts" for the book's "interaction"; the stemmer folds inflections only.
    result = await checker.check("What is embodied intelligence?", answer, chunks(EMBODIED), [], None)
    assert result.is_grounded is grounded, result.claims


# agentfactory, 38-custom-mcp-servers/06-stateful-vs-stateless.md.
STATELESS = """When `stateless_http=True`:

1. **No SSE connections** → Server can't initiate requests to clients
2. **No session IDs** → No server ↔ client state
3. **No sampling** → Tools can't call `context.session.create_message()`
4. **No progress** → `context.report_progress()` is silently ignored
5. **No subscriptions** → Resource subscriptions don't work
"""


@pytest.mark.parametrize(
    "answer, grounded",
    [
        (
            "With stateless_http=True there are no SSE connections, session IDs, sampling or subscriptions [1].",
            True,
        ),
        ("With stateless_http=True there are no SSE connections, session IDs or caching [1].", False),
        # a label's description is still its own label's
        (
            "With stateless_http=True there are no session IDs, so the server can't initiate requests [1].",
            False,
        ),
    ],
)
async def test_labels_that_end_at_an_arrow_may_be_named_together(checker, answer, grounded):
    question = "What do I give up when an MCP server runs with stateless_http=True?"
    result = await checker.check(question, answer, chunks(STATELESS), [], None)
    assert result.is_grounded is grounded, result.claims


# module-2/sensor-simulation/sensor-data-validation.md, "Why Validate Sensor Data?".
WHY_VALIDATE = """### Why Validate Sensor Data?

Sensor data validation is crucial because:
- Simulation sensors must behave similarly to real sensors
- Perception algorithms depend on realistic sensor characteristics
- Control systems rely on accurate sensor readings
- Training data from simulation may be used for real robot deployment
"""


# The section after it on that page.
VALIDATION_GOALS = """### Key Validation Goals

1. **Range validation**: Sensor readings should be within expected ranges
2. **Resolution validation**: Sensor data should have appropriate resolution
3. **Noise characteristics**: Simulated noise should match real sensor properties
4. **Timing validation**: Sensor update rates should be realistic
5. **Geometric validation**: Sensor poses and mounting should be accurate
"""


async def test_a_list_read_whole_stands_only_for_a_claim_it_states(checker):
    # A wrong answer written to test the checker: read against the whole list, the first claim's
    # words were all "there", and the claim model let it pass; against each item it is doubted.
    answer = (
        "Sensor data validation is mainly needed to reduce the simulation's computational load so it "
        "runs in real time [1]. Validation ensures simulated noise is removed entirely from readings [2]."
    )
    result = await checker.check(
        "Why validate simulated sensor data?", answer, chunks(WHY_VALIDATE, VALIDATION_GOALS), [], None
    )
    assert not result.is_grounded, result.claims


# module-2/physics-simulation/material-properties.md, "Physics Engine Configuration".
ENGINES = """## Physics Engine Configuration

Gazebo supports multiple physics engines with different capabilities:

- ODE (Open Dynamics Engine)
- Bullet
- DART (Dynamic Animation and Robotics Toolkit)
"""


@pytest.mark.parametrize(
    "answer, grounded",
    [
        ("Gazebo supports ODE (Open Dynamics Engine), Bullet, and DART [1].", True),
        ("According to the book, Gazebo supports ODE, Bullet and DART, for example [1].", True),
        ("Gazebo supports ODE, Bullet and PhysX [1].", False),
        ("Gazebo supports DART and ODE and Bullet [1].", False),
    ],
)
async def test_a_lead_in_is_said_of_each_of_its_items(checker, answer, grounded):
    # "supports" is the lead-in's, said of each engine; the book is no fact of itself.
    result = await checker.check(
        "Which physics engines does Gazebo support?", answer, chunks(ENGINES), [], None
    )
    assert result.is_grounded is grounded, result.claims


@pytest.mark.parametrize(
    "answer",
    [
        "Actions are ideal for tasks that require continuous feedback to the client [1]. "
        "They were introduced in ROS 2 Foxy in 2019 [1].",
        "Actions are ideal for tasks that require continuous feedback to the client [1]. "
        "Navigation to a specific location takes 30 seconds [1].",
    ],
)
async def test_a_longer_answer_to_a_question_states_no_number_or_name_the_book_lacks(checker, answer):
    # A summary may name what its source leaves to its byline; an answer's facts are the book's.
    result = await checker.check(
        "Why would I use a ROS 2 action?", answer, chunks(WHEN_TO_USE_ACTIONS), [], None
    )
    assert not result.is_grounded, result.claims


def actions_list(page: str = "actions.md") -> list[ContextChunk]:
    """The list as Search returns it, with its place and page, beside another chunk with a 2."""
    return [
        ContextChunk(
            "when",
            WHEN_TO_USE_ACTIONS,
            place="Actions in Robotic Systems > Introduction to ROS 2 Actions > When to Use Actions",
            page=page,
        ),
        ContextChunk("steps", "Step 2 builds the action server.", page="other.md"),
    ]


@pytest.mark.parametrize(
    "opening",
    ["", "According to the book, ", "Based on the provided passages, ", "The text says that "],
)
async def test_a_name_the_page_gives_and_the_answers_source_state_no_fact(checker, opening):
    # "ROS 2" names what the page is about (the 2 is no figure the list lacks), and a model's
    # opening that names where the answer comes from is the citation's job, not a claim of the book.
    answer = f"{opening}ROS 2 actions are ideal for tasks that need to be cancellable or preemptable [1]."
    result = await checker.check("Why would I use a ROS 2 action?", answer, actions_list(), [], None)
    assert result.is_grounded, result.claims


@pytest.mark.parametrize(
    "answer",
    [
        "ROS 2 actions are ideal for tasks that take 2 hours [1].",
        "According to the book, ROS 3 actions are ideal for tasks that need to be cancellable [1].",
        "According to the book, actions are ideal for tasks that need to be cancelled by the robot [1].",
    ],
)
async def test_a_figure_or_a_claim_behind_those_words_is_still_checked(checker, answer):
    result = await checker.check("Why would I use a ROS 2 action?", answer, actions_list(), [], None)
    assert not result.is_grounded, result.claims


@pytest.mark.parametrize(
    "answer",
    [
        "Boston Dynamics Atlas has 360 degrees of freedom [1].",
        "Boston Dynamics Atlas is actively developed [1]. Boston Dynamics Atlas has 360 degrees of freedom [1].",
        "Boston Dynamics Atlas is actively developed [1]. Boston Dynamics Atlas has 360 degrees of freedom [2].",
    ],
)
async def test_a_number_from_another_passage_is_not_supported(checker, answer):
    # Accepted at 0.99: the 360 is a LiDAR's field of view, and the book gives Atlas no figure.
    result = await checker.check(
        "How many degrees of freedom does Atlas have?", answer, chunks(HUMANOIDS, LIDAR), [], None
    )
    assert not result.is_grounded
    atlas = claim_verdict(result, "Boston Dynamics Atlas has 360")
    assert not atlas.supported
    assert "360 is from another passage" in atlas.reason or "not about" in atlas.reason


# module-2/unity-integration/ros2-unity-bridge.md and intro/prerequisites-setup/index.md.
BRIDGES = """The main bridges are:

1. **Unity ROS TCP Connector**: Official Unity package
2. **ROS#**: C# implementation of ROS client for Unity
"""
SOFTWARE = "## Software\n\nROS 2 Humble Hawksbill is the LTS version required for this curriculum:\n"


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        ("ROS# is a C# implementation of ROS client for Unity [1].", True),
        # Validated at 0.90 with the 0.5B model: "ROS#" was read as "ROS".
        ("ROS# is the LTS version required for this curriculum [2].", False),
        ("C++ is the LTS version required for this curriculum [2].", False),
    ],
)
async def test_a_name_ending_in_a_symbol_is_another_name(checker, answer, grounded):
    result = await checker.check("What is ROS#?", answer, chunks(BRIDGES, SOFTWARE), [], None)
    assert result.is_grounded is grounded


@pytest.mark.parametrize(
    "answer",
    [
        "URDF is used for streaming data like sensor readings [1].",
        "URDF is an XML format used to describe robot models [2]. URDF is used for streaming data like sensor readings [1].",
    ],
)
async def test_a_list_item_supports_only_the_subject_of_its_heading(checker, answer):
    # Validated at 0.99: "Used for streaming data ..." stands under "Publisher-Subscriber (Topics)".
    result = await checker.check("What is URDF used for?", answer, chunks(PATTERNS, URDF), [], None)
    assert not result.is_grounded
    streaming = claim_verdict(result, "URDF is used for streaming")
    assert not (streaming.supported and streaming.best_chunk_index == 0), "the item is about topics"
    assert any(note.startswith("citation [1] does not support") for note in result.notes)


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [
        # Passed as grounded: the processing unit's description given to the memory system.
        (
            "A typical embodied agent consists of sensors, actuators, a processing unit and a memory "
            "system [1]. Of these, the memory system is the decision-making part that interprets "
            "sensor data and controls the actuators [1].",
            False,
        ),
        (
            "A typical embodied agent consists of sensors, actuators, a processing unit and a memory "
            "system [1]. The processing unit is the decision-making part that interprets sensor data "
            "and controls the actuators [1].",
            True,
        ),
        # An item named after the claim's subject is one of its attributes, not another subject.
        (
            "Boston Dynamics Atlas demonstrates advanced dynamic control, and its key features are "
            "dynamic movement, complex locomotion and manipulation [2].",
            True,
        ),
    ],
)
async def test_a_list_items_description_is_not_said_of_another_item(checker, answer, grounded):
    question = "What are the parts of a typical embodied agent?"
    result = await checker.check(question, answer, chunks(AGENT_PARTS, HUMANOIDS), [], None)
    assert result.is_grounded is grounded


async def test_a_list_item_read_with_its_heading_supports_its_subject(checker):
    answer = "Topics are used for streaming data like sensor readings [1]."
    result = await checker.check("What are topics used for?", answer, chunks(PATTERNS, URDF), [], None)
    assert result.is_grounded and result.answers_question


@pytest.mark.parametrize(
    "answer",
    [
        "Boston Dynamics Atlas is actively developed [3].",
        "Joints connect links [1]. Boston Dynamics Atlas is actively developed [1].",
        "Revolute joints allow rotational movement with limits [3]. Atlas demonstrates advanced dynamic control [2].",
    ],
)
async def test_a_citation_that_does_not_support_its_sentence_is_never_grounded(checker, answer):
    result = await checker.check("", answer, chunks(JOINTS, HUMANOIDS, LIDAR), [], None)
    assert any("does not support" in note or "points nowhere" in note for note in result.notes)
    assert not result.is_grounded


async def test_an_answer_that_never_addresses_the_question_is_grounded_but_not_an_answer(checker):
    # "What is Gazebo used for?" answered with ROS 2's communication patterns, grounded 1.00.
    answer = "Used for long-running tasks. [1] Used for streaming data like sensor readings. [1]"
    result = await checker.check("What is Gazebo used for?", answer, chunks(PATTERNS), [], None)
    assert result.is_grounded and not result.answers_question
    assert any("never addresses" in note and "gazebo" in note for note in result.notes)
    # The same quote answers a question about topics: the item is read with its heading.
    topics = await checker.check(
        "What are topics used for?",
        "Used for streaming data like sensor readings [1].",
        chunks(PATTERNS),
        [],
        None,
    )
    assert topics.is_grounded and topics.answers_question


async def test_an_answer_naming_only_a_section_title_is_grounded_but_not_an_answer(checker):
    # "Within what time windows must physical AI systems respond?" answered by the 0.5B model.
    question = "Which communication patterns does ROS 2 support?"
    titled = await checker.check(question, "3. Communication Patterns [1]", chunks(PATTERNS), [], None)
    assert titled.is_grounded and not titled.answers_question
    assert any("only names sections" in note for note in titled.notes)
    stated = await checker.check(
        question,
        "Publisher-Subscriber (Topics): asynchronous, many-to-many communication [1].",
        chunks(PATTERNS),
        [],
        None,
    )
    assert stated.answers_question


async def test_a_how_many_question_is_answered_by_a_number(checker):
    question = "How many joint types does URDF define?"
    vague = await checker.check(question, "URDF joints connect links [1].", chunks(JOINTS), [], None)
    assert not vague.answers_question and any("states no number" in note for note in vague.notes)
    counted = await checker.check(
        question,
        "Joints connect links [1]. URDF defines five joint types, from fixed to floating.",
        chunks(JOINTS),
        [],
        None,
    )
    assert counted.answers_question


# intro/why-physical-ai/index.md, "Key Challenges".
CHALLENGES = """## Key Challenges
1. **Uncertainty Management**: Real-world environments are inherently uncertain
2. **Real-time Constraints**: Physical systems operate under strict timing requirements
"""


async def test_a_question_asking_for_a_measurement_is_answered_by_a_number(checker):
    # The 0.5B model answered with the item's label alone, shown as an answer at 0.5.
    question = "Within what time windows must physical AI systems typically respond?"
    label = await checker.check(question, "2. Real-time Constraints [1]", chunks(CHALLENGES), [], None)
    assert label.is_grounded and not label.answers_question
    assert any("states no number" in note for note in label.notes)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What is Gazebo used for?", "The book does not cover Gazebo."),
        ("Explain this in simpler words", "Used for streaming data like sensor readings [1]."),
        ("", "Used for streaming data like sensor readings [1]."),
    ],
)
async def test_a_decline_or_a_question_without_a_focus_of_its_own_is_not_judged(checker, question, answer):
    result = await checker.check(question, answer, chunks(PATTERNS), [], None)
    assert result.answers_question


def test_a_question_about_the_selected_passage_has_no_focus_of_its_own_words():
    """The widget's "What does this passage mean?" is about the reader's selection (the agent
    validates against the question with it): "passage" is no subject an answer must name."""
    assert focus_terms("What does this passage mean?") == frozenset()
    resolved = "What does this passage mean? A claim that mentions the year 1846 is not supported"
    answer = "A claim that mentions the year 1846 is not supported by a chunk that never mentions 1846."
    assert missed_focus(resolved, answer, []) == ""


async def test_numbers_without_a_word_of_what_they_count_answer_nothing(checker):
    rubric = (
        "## Assessment Rubric\n- Documentation: 20 points\n- Code quality: 25 points\n- Testing: 20 points\n"
    )
    question = "How many points is documentation worth in the rubric?"
    bare = await checker.check(question, "20 25 [1] 20 [1]", chunks(rubric), [], None)
    assert not bare.answers_question
    stated = await checker.check(question, "Documentation: 20 points. [1]", chunks(rubric), [], None)
    assert stated.answers_question and stated.is_grounded


# module-2/unity-integration/unity-troubleshooting.md, "Coordinate System Mismatches".
TRANSFORM = """2. **Implement coordinate transformation**:
   ```csharp
   // Convert ROS coordinates to Unity coordinates
   public Vector3 RosToUnityPosition(Vector3 rosPos) {
       return new Vector3(rosPos.y, rosPos.z, rosPos.x);
   }
   ```
"""


async def test_a_block_of_code_copied_whole_is_supported(checker):
    """The 0.5B model copies a passage's code onto one line: the sentence splitter cuts the block
    into lines the claim spans, but the words are the book's, in its order (a language tag aside)."""
    question = "How do I convert ROS coordinates to Unity coordinates?"
    copied = (
        "Implement coordinate transformation: // Convert ROS coordinates to Unity coordinates public "
        "Vector3 RosToUnityPosition(Vector3 rosPos) { return new Vector3(rosPos.y, rosPos.z, rosPos.x); } [1]"
    )
    result = await checker.check(question, copied, chunks(TRANSFORM), [], None)
    assert result.is_grounded and result.claims[0].reason == "supported: quoted"
    swapped = copied.replace("rosPos.y, rosPos.z, rosPos.x", "rosPos.x, rosPos.y, rosPos.z")
    assert (
        not (await checker.check(question, swapped, chunks(TRANSFORM), [], None))
        .claims[0]
        .reason.endswith("quoted")
    )


# The book's steps with their commands (tests/unit/text), under their heading.
LOADING = f"## Loading URDF in Gazebo\n\n{STEPS}"


async def test_a_step_quoted_with_its_command_is_supported_and_a_swapped_command_is_not(checker):
    question = "How do I load a URDF robot into Gazebo?"
    answer = (
        "To load your URDF in Gazebo [1]:\nConvert to SDF format for Gazebo: gz sdf -p your_robot.urdf. [1] "
        "Load in Gazebo: gz sim -r your_robot.sdf. [1]"
    )
    result = await checker.check(question, answer, chunks(LOADING), [], None)
    assert result.is_grounded, result.claims
    # one sentence is held to its phrases: the step and its command are read as one
    alone = await checker.check(
        question, "Load in Gazebo: gz sim -r your_robot.sdf. [1]", chunks(LOADING), [], None
    )
    assert alone.is_grounded, alone.claims
    swapped = await checker.check(
        question, "Convert to SDF format for Gazebo: gz sim -r your_robot.sdf. [1]", chunks(LOADING), [], None
    )
    assert not swapped.is_grounded


async def test_a_comment_quoted_with_the_commands_it_labels_is_supported(checker):
    block = "## Colcon\n```bash\n# Build and run tests\ncolcon build --packages-select pkg\ncolcon test --packages-select pkg\n```\n"
    answer = "Build and run tests: colcon build --packages-select pkg; colcon test --packages-select pkg. [1]"
    result = await checker.check("How do I run a package's tests?", answer, chunks(block), [], None)
    assert result.is_grounded, result.claims


# module-2/physics-simulation/physics-debugging-validation.md, "Common Error Messages".
ERRORS = """### Common Error Messages

- **"ODE Message 3: body not finite"**: Usually indicates numerical instability or invalid parameters
- **"Contact not finite"**: Often caused by very small or zero mass values
- **"Joint limits exceeded"**: May indicate solver issues or bad joint parameters
"""


@pytest.mark.parametrize(
    "answer",
    [
        'The error "ODE Message 3: body not finite" typically indicates numerical instability or invalid parameters [1].',
        'It mentions that "ODE Message 3: body not finite" usually indicates numerical instability [1].',
    ],
)
async def test_a_hedge_or_a_word_about_the_means_is_no_fact_to_find(checker, answer):
    # Refused over "typically" (the book: "Usually indicates ..."), and "using ... command".
    result = await checker.check(
        'What does "ODE Message 3: body not finite" mean?', answer, chunks(ERRORS), [], None
    )
    assert result.is_grounded, result.claims


async def test_a_hedged_claim_still_needs_its_facts(checker):
    answer = (
        'The error "ODE Message 3: body not finite" typically indicates very small or zero mass values [1].'
    )
    result = await checker.check(
        'What does "ODE Message 3: body not finite" mean?', answer, chunks(ERRORS), [], None
    )
    assert not result.is_grounded


async def test_a_blank_left_for_the_fact_is_not_supported(checker):
    # The 0.5B model's answer to an unanswerable question, accepted at confidence 0.83.
    setup = "ROS 2 Humble Hawksbill is the LTS version required for this curriculum."
    answer = f"{setup} [1] ROS 2 Humble Hawksbill reaches its end of life on [specific date]. [1]"
    result = await checker.check(
        "When does ROS 2 Humble reach its end of life?", answer, chunks(setup), [], None
    )
    assert not result.is_grounded
    assert "[specific date] is a blank" in claim_verdict(result, "ROS 2 Humble Hawksbill reaches").reason
    # Brackets the book writes are quoted, not blanks.
    usage = "Run ros2 launch with [options] after the package name."
    quoted = await checker.check("How do I run a launch file?", f"{usage} [1]", chunks(usage), [], None)
    assert quoted.is_grounded, quoted.claims


# Two pages' openings, as HaluEval QA's knowledge joins them (qa_data.dev.jsonl, record 1172).
WRITERS = (
    "Robin Hobb is the pen name of Margaret Astrid Lindholm Ogden (born March 5, 1952), an American "
    "writer. Sir Winston Leonard Spencer-Churchill (30 November 1874 - 24 January 1965) was a British "
    "statesman, army officer, and writer. He served as Prime Minister of the United Kingdom."
)


@pytest.mark.parametrize(
    ("question", "answer", "grounded"),
    [
        (
            "Are Robin Hobb and Winston Churchill both American writers?",
            "Yes, both are American writers.",
            False,
        ),
        ("Are Robin Hobb and Winston Churchill both writers?", "Yes, both are writers.", True),
        # "He served ..." is still about Churchill.
        (
            "Did Robin Hobb and Winston Churchill both serve as Prime Minister?",
            "Yes, both served as Prime Minister.",
            False,
        ),
        # A choice between the two pairs them too (record 1012: "Actually, both breeds are extinct.").
        (
            "Who served as Prime Minister, Robin Hobb or Winston Churchill?",
            "Actually, both served as Prime Minister.",
            False,
        ),
        ("Which one is a writer, Robin Hobb or Winston Churchill?", "Actually, both are writers.", True),
    ],
)
async def test_one_thing_said_of_both_must_be_said_of_each(checker, question, answer, grounded):
    result = await checker.check(question, answer, chunks(WRITERS), [], None)
    assert result.is_grounded is grounded
    if not grounded:
        assert "is not said of both" in result.claims[0].reason


async def test_a_direct_answer_may_restate_the_question_it_answers(checker):
    # The 0.5B model's answer, replaced as not grounded over "setting" (the book never says it)
    # and "Python project" (not in the sentence that answers).
    answer = "Setting up a Python project with uv takes 30 seconds where pip takes 5 minutes."
    result = await checker.check(UV_QUESTION, answer, chunks(UV_SETUP), [], None)
    assert result.is_grounded, result.claims[0].reason


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # The restated frame does not excuse the answering words: the numbers are swapped.
        (UV_QUESTION, "Setting up a Python project with uv takes 5 minutes where pip takes 30 seconds."),
        # Words the question does not have are the claim's own, restated or not.
        ("What does uv eliminate?", "Setting up a Python project with uv eliminates the confusion entirely."),
        # After its verb a claim says what is true of its subject: the question's words there are
        # the fact to find (pip's sentence names its 5 minutes, not the confusion it eliminates).
        (
            "Which tool eliminates the confusion of the 5-minute setup?",
            "Pip eliminates the confusion of the 5-minute setup.",
        ),
        # A premise the book never states is not the reader's wording: two restated words it lacks.
        (
            "Why is the setup of a Python project with pip slow and painful?",
            "The slow and painful setup of a Python project with pip takes 5 minutes.",
        ),
    ],
)
async def test_a_restated_question_excuses_no_answering_word(checker, question, answer):
    result = await checker.check(question, answer, chunks(UV_SETUP), [], None)
    assert not result.is_grounded


async def test_a_claim_of_a_longer_answer_restating_the_question_is_as_sure_as_a_quote(checker):
    # Longer answers share a doubt budget: a restated question used to spend it ("setting" and
    # "Python project" counted as words the passage lacks), and the 0.5B model's correct af-53
    # answer ("The MCP server runs with stateless_http=True, which means ...") was replaced.
    answer = (
        "Setting up a Python project with uv takes 30 seconds where pip takes 5 minutes. "
        "More importantly, UV eliminates the confusion entirely."
    )
    asked = await checker.check(UV_QUESTION, answer, chunks(UV_SETUP), [], None)
    unasked = await checker.check("", answer, chunks(UV_SETUP), [], None)
    assert asked.claims[0].score == pytest.approx(1.0)
    assert unasked.claims[0].score < asked.claims[0].score
