"""Text-written tool calls, template tokens and recited prompts: recognised, and kept from the reader."""

from __future__ import annotations

import random

import pytest

from services.agent.models.textguard import (
    TURN_END_TOKENS,
    ProseGate,
    TextToolCall,
    find_leaks,
    parse_text_tool_call,
    strip_template_tokens,
)

TOOLS = ["retrieval_tool"]
CALL = TextToolCall("retrieval_tool", {"query": "dds discovery"})
INSTRUCTIONS = (
    "You are Glossator. Answer questions about ROS 2 from the retrieved documentation only, "
    "and cite every claim with its source number as [n]."
)
ANSWER = "ROS 2 uses DDS for discovery [1]. Nodes exchange messages over topics [2]; services reply [1, 3]."
JSON_CALL = '{"name": "retrieval_tool", "arguments": {"query": "dds discovery"}}'

CALL_SHAPES = [
    JSON_CALL,
    '  {"function": "retrieval_tool", "parameters": {"query": "dds discovery"}}\n',
    '{"tool": "retrieval_tool", "args": "{\\"query\\": \\"dds discovery\\"}"}',
    '{"type": "function", "function": {"name": "retrieval_tool", "arguments": "{\\"query\\": \\"dds discovery\\"}"}}',
    "{'name': 'retrieval_tool', 'arguments': {'query': 'dds discovery'}}",
    f"[{JSON_CALL}]",
    f"I need to search first.\n<tool_call>\n{JSON_CALL}\n</tool_call>",
    f"<tools>{JSON_CALL}</tools>",
    f"<tool_call>{JSON_CALL}",
    f"Searching the docs:\n```json\n{JSON_CALL}\n```\nOne moment.",
    'retrieval_tool({"query": "dds discovery"})',
    "retrieval_tool(query='dds discovery')",
    '`retrieval_tool(query="dds discovery")`',
    'Tool call: retrieval_tool(query="dds discovery")',
    '{"query": "dds discovery"}',
    '<function=retrieval_tool>{"query": "dds discovery"}</function>',
]


def run(deltas: list[str], tools: list[str] = TOOLS, instructions: str = INSTRUCTIONS):
    """Feeds deltas through a gate; returns what each feed showed, the finish result, and all shown."""
    gate = ProseGate(tools, instructions)
    shown = [gate.feed(delta) for delta in deltas]
    result = gate.finish()
    assert "".join(shown) + result.text == gate.released
    return shown, result, gate.released


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("text", CALL_SHAPES)
def test_each_shape_of_text_call_parses(text):
    assert parse_text_tool_call(text, TOOLS) == CALL


@pytest.mark.parametrize(
    "text",
    [
        "I will use retrieval_tool to search",
        "Call retrieval_tool(query) when unsure.",
        "In C, a block is {x = 1;} and a struct is {int a;}.",
        f"The format is {JSON_CALL} as shown.",  # bare JSON inside prose, no markup around it
        '{"name": "web_search", "arguments": {"query": "dds"}}',  # not an offered tool
        '{"type": "function", "function": {"name": "retrieval_tool", "description": "Searches.", '
        '"parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}',
        '<tool_call>{"name": "retrieval_tool", "arguments": "not json"}</tool_call>',
    ],
)
def test_prose_and_near_misses_are_not_calls(text):
    assert parse_text_tool_call(text, TOOLS) is None


def test_a_bare_query_object_is_a_call_only_when_one_tool_is_offered():
    one = TextToolCall("retrieval_tool", {"query": "qos"})
    assert parse_text_tool_call('{"query": "qos"}', ["retrieval_tool"]) == one
    assert parse_text_tool_call('{"query": "qos"}', ["retrieval_tool", "web_search"]) is None
    assert parse_text_tool_call(JSON_CALL, []) is None


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("Hello [1].<|im_end|>\n<|im_start|>user\nMore?", "Hello [1]."),  # ChatML / Qwen
        ("<|im_start|>assistant\nHello<|endoftext|>junk", "\nHello"),
        ("<s>Answer [/INST] here</s>[INST] next question", "Answer  here"),  # Llama 2 / Mistral
        ("Answer<<SYS>> be helpful <</SYS>>", "Answer"),
        ("Answer <</SYS>>here", "Answer here"),
        ("<|start_header_id|>assistant<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>user", "\n\nHi"),
        ("<start_of_turn>model\nHi<end_of_turn>\n<start_of_turn>user\nq", "\nHi"),  # Gemma
        ("<|assistant|>Hi<|end|>\n<|user|>again", "Hi"),  # Phi
        ("Hi<|system|>be nice", "Hi"),
        ("Hi<｜end▁of▁sentence｜>more", "Hi"),  # DeepSeek
        ("a <|fim_pad|>b", "a b"),
        ("<|im_start|>user\nWhat is ROS?", ""),  # the model writing the user's turn
    ],
)
def test_template_families_are_stripped_and_a_turn_end_cuts(text, clean):
    assert strip_template_tokens(text) == clean


def test_turn_end_tokens_are_those_that_end_or_start_a_turn():
    ending = "<|im_start|> <|im_end|> <|endoftext|> [INST] </s> <|eot_id|> <end_of_turn> <start_of_turn>"
    for token in (ending + " <|user|> <|system|> <|end|> <|start_header_id|> <<SYS>>").split():
        assert TURN_END_TOKENS.fullmatch(token), token
    for token in ["<|assistant|>", "[/INST]", "<s>", "<|end_header_id|>", "[1]"]:
        assert not TURN_END_TOKENS.fullmatch(token), token


def test_a_streamed_answer_passes_unchanged_and_before_the_turn_ends():
    shown, result, released = run(chunks(ANSWER, 7))
    assert released == ANSWER
    assert "".join(shown).startswith(ANSWER[:60])  # released once clearly prose, not at finish
    assert result.dropped == "" and result.tool_call is None


def test_a_short_answer_is_held_until_finish():
    shown, result, _ = run(["Yes ", "[1]."])
    assert shown == ["", ""]
    assert result.text == "Yes [1]."


@pytest.mark.parametrize("text", CALL_SHAPES)
def test_a_call_written_at_the_start_is_never_shown(text):
    _, result, released = run(chunks(text, 3))
    assert "dds" not in released and "retrieval_tool" not in released
    assert released in ("", "I need to search first.\n", "Searching the docs:\n")  # prose before markup
    assert result.tool_call == CALL


def test_a_call_block_mid_turn_is_held_and_what_follows_dropped():
    prose = "Let me check the documentation for that one first. "
    text = f"{prose}<tool_call>\n{JSON_CALL}\n</tool_call>\nDDS is a middleware [1]."
    shown, result, released = run(chunks(text, 5))
    assert released == prose
    assert "".join(shown) == prose  # the prose went out before the block closed
    assert result.tool_call == CALL
    assert result.dropped.startswith("<tool_call>") and result.dropped.endswith("[1].")


def test_unparsable_call_markup_is_dropped_and_the_answer_goes_on():
    text = ANSWER + ' <tool_call>{"name": "retrieval_tool", "arguments": {</tool_call> See [2].'
    _, result, released = run(chunks(text, 4))
    assert released == ANSWER + "  See [2]."
    assert result.tool_call is None and "<tool_call>" in result.dropped


def test_prose_mentioning_the_tool_and_code_with_braces_pass_through():
    mention = "I will use retrieval_tool to search the docs, but DDS discovery is described in [1]."
    code = "A launch file maps names:\n```python\nremap = {'chatter': 'talk'}\n```\nSee `retrieval_tool` [2]."
    for text in (mention, code):
        _, result, released = run(chunks(text, 2))
        assert released == text and result.tool_call is None


def test_a_turn_end_token_stops_the_turn():
    text = ANSWER + "<|im_end|>\n<|im_start|>user\nAnd QoS?<|im_end|>"
    _, result, released = run(chunks(text, 6))
    assert released == ANSWER
    assert result.dropped == "<|im_end|>\n<|im_start|>user\nAnd QoS?<|im_end|>"


def test_template_tokens_split_across_deltas_are_removed():
    _, _, released = run(["<|im_start|>assi", "stant\n", ANSWER[:50] + "<|", "fim_pad|>" + ANSWER[50:]])
    assert released == ANSWER


def test_a_recited_instruction_start_is_dropped():
    echo = "You are Glossator. Answer questions about ROS 2 from the retrieved documentation only. "
    _, result, released = run(chunks(echo + ANSWER, 9))
    assert released == ANSWER
    assert result.dropped.strip() == echo.strip()
    _, result, released = run([echo])
    assert released == "" and result.dropped.strip() == echo.strip()
    _, _, released = run([echo + ANSWER], instructions="")  # without instructions nothing is an echo
    assert released == echo + ANSWER


def test_a_possible_token_or_marker_is_held_then_released_at_finish():
    shown, result, released = run([ANSWER + " a <", " b [", "2] c ["])
    assert shown[1:] == ["< b ", "[2] c "]  # "<" and "[" wait for the next delta to decide them
    assert result.text == "["
    assert released == ANSWER + " a < b [2] c ["
    _, result, released = run([ANSWER + " <|im"])  # a token cut short by the end of the turn
    assert released == ANSWER + " " and result.dropped == "<|im"


INVARIANCE_CORPUS = [
    ANSWER,
    "Yes [1].",
    "<|im_start|>assistant\n" + ANSWER + "<|im_end|><|im_start|>user\nmore",
    "<s>" + ANSWER[:40] + "[/INST]" + ANSWER[40:] + "</s>[INST] q",
    "You are Glossator. Answer questions about ROS 2 from the retrieved documentation only. " + ANSWER,
    "Let me check the documentation for that one. <tool_call>" + JSON_CALL + "</tool_call> Done.",
    ANSWER + ' {"query": "qos"} and [',
    ANSWER + " retrieval_tool(query='qos') then retrieval_tool is [x] <b> <tools",
    "```json\n" + JSON_CALL + "\n```",
    "A map:\n```python\nremap = {'a': 'b'}\n```\nuse [1] or `` and < or <|im_",
    "Tool call: " + JSON_CALL,
    "[2] is the source: ROS 2 nodes discover each other through DDS.",
    '{"note": "plain json"} is what the node prints [1].',
]


@pytest.mark.parametrize("text", INVARIANCE_CORPUS)
def test_what_is_shown_does_not_depend_on_delta_boundaries(text):
    _, whole, reference = run([text])
    rng = random.Random(text)
    splits = [[text[:i], text[i:]] for i in range(len(text) + 1)] + [list(text)]
    for _ in range(30):
        cuts = sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, rng.randint(2, 12))))
        splits.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    for deltas in splits:
        _, result, released = run(deltas)
        assert released == reference, deltas
        assert (result.tool_call, result.dropped) == (whole.tool_call, whole.dropped), deltas
        assert not find_leaks(released, INSTRUCTIONS, tool_names=TOOLS)


@pytest.mark.parametrize(
    "text",
    [
        "DDS [1].<|im_end|>",
        "Answer [/INST]",
        "Use <tool_call> markup",
        'The call {"name": "retrieval_tool"} runs.',
        'Then {"query": "qos"} was sent.',
        '{"name": "search", "arguments": {}}',
        "Now retrieval_tool(query='qos') runs.",
        "As told: answer questions about ROS 2 from the retrieved documentation only, please.",
    ],
)
def test_find_leaks_reports_what_must_not_reach_a_user(text):
    assert find_leaks(text, INSTRUCTIONS, tool_names=TOOLS)


@pytest.mark.parametrize(
    "text",
    [
        ANSWER,
        "I used retrieval_tool to look this up; ROS 2 answers questions about robots [1].",
        "Write {x = 1;} in C, or a dict {'name': 'value'} in Python.",
        "Answer questions about ROS 2 from the docs.",  # 7 words of the instructions, not 8
        "Compare a < b and [x].",
    ],
)
def test_find_leaks_passes_clean_answers(text):
    assert find_leaks(text, INSTRUCTIONS, tool_names=TOOLS) == []
