"""What a small model writes besides its answer: recognised in text, and kept from the reader.

Small self-hosted models (0.5B-1.5B behind an OpenAI-compatible server) often write a tool call as
text instead of making it, leak their chat template's control tokens, ramble on into the next turn,
or recite their system prompt. This module recognises all of that in plain text, and `ProseGate`
does it on a stream in three stages: template tokens are stripped (a turn-ending one ends the
turn), the start of the turn is held until it is clearly prose, and tool-call blocks are held from
their opener until they close. Each stage holds a tail that could still open something until the
next delta decides it, so whatever the delta boundaries, the text released is the text cleaning the
whole turn at once gives.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from services.common.text.lists import read_list

# Control tokens of the common chat templates (ChatML/Qwen, Llama 2 and 3, Mistral, Gemma, Phi,
# DeepSeek). Any other <|name|> is a control token too: it is stripped.
_TEMPLATE_TOKEN = re.compile(
    r"<\|[\w.:▁-]{1,40}\|>|<｜[\w.:▁-]{1,40}｜>|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>|</?s>|<[be]os>"
)
TURN_END_TOKENS = re.compile(
    r"<[|｜](?:im_start|im_end|endoftext|end_of_text|eot_id|eom_id|start_header_id|user|system|end"
    r"|endofprompt|end▁of▁sentence)[|｜]>|<(?:start|end)_of_turn>|\[INST\]|</s>|<<SYS>>|<eos>",
    re.IGNORECASE,
)
_TOKEN_LITERALS = read_list(__package__, "wordlists/template_tokens.txt")
_PARTIAL_BAR_TOKEN = re.compile(r"<(?:\|[\w.:▁-]{0,40}\|?|｜[\w.:▁-]{0,40}｜?)?")
_LONGEST_TOKEN = 44
# A turn that opens with its own header ("<|im_start|>assistant") goes on: only the header is dropped.
_HEADER_TOKENS = ("<|im_start|>", "<start_of_turn>", "<|start_header_id|>")
_ANSWER_ROLES = ("assistant", "model")

# Tags models wrap calls in (Qwen/Hermes <tool_call>, <tools>, Llama 3.1 <function=name>, ...).
_TAG_NAME_LIST = read_list(__package__, "wordlists/tool_call_tags.txt")
_TAG_NAMES = "|".join(sorted(_TAG_NAME_LIST, key=len, reverse=True))
_TAG = re.compile(rf"</?(?:{_TAG_NAMES})(?:[\s=/][^<>]{{0,200}})?>", re.IGNORECASE)
_CLOSING_TAG = re.compile(rf"</(?:{_TAG_NAMES})\s*>", re.IGNORECASE)
_OPEN_TAG_ATTRIBUTES = re.compile(rf"</?(?:{_TAG_NAMES})[\s=/][^<>]{{0,200}}", re.IGNORECASE)
# Markup a call may sit in, with prose around it: a tag pair (closing optional) or a ``` fence.
_WRAPPED = re.compile(
    rf"<(?:{_TAG_NAMES})(?:=(?P<fn>[\w.-]+))?[^<>]*>(?P<tag>.*?)(?:</(?:{_TAG_NAMES})\s*>|$)"
    r"|```[\w-]*[^\S\n]*\n?(?P<fence>.*?)(?:```|$)",
    re.IGNORECASE | re.DOTALL,
)
_CALL_WORDING = re.compile(r"(?:tool|function)[\s_-]*calls?\s*:|(?:action|tool|function)\s*:", re.IGNORECASE)
# The same wording, normalised, for telling whether a start still could become it.
_CALL_WORDING_LITERALS = read_list(__package__, "wordlists/tool_call_wording.txt")
_FUNCTION_STYLE = re.compile(r"([A-Za-z_][\w.]*)\s*\((.*)\)\s*;?", re.DOTALL)
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")

_CITATION = re.compile(r"\[\d{1,4}(?:\s*,\s*\d{1,4})*\]")
_OPEN_CITATION = re.compile(r"\[[\d,\s]{0,24}")
_QUERY_KEY = re.compile(r"""[{,]\s*["']query["']\s*:""")
_NAME_WITH_ARGUMENTS = re.compile(
    r"""[{,]\s*["'](?:name|function|tool|tool_name)["']\s*:\s*["'][^"'\n]{1,80}["']\s*,\s*"""
    r"""["'](?:arguments|parameters|args)["']\s*:"""
)
_PUNCTUATION = ".,;:!?\"'()[]{}«»“”‘’*_`"
_WORD_CHAR = re.compile(r"[\w.]")
ECHO_WORDS = 8

_WAIT, _HOLD, _PROSE = "wait", "hold", "prose"
_TAG_BLOCK, _FENCE_BLOCK, _JSON_BLOCK, _CALL_BLOCK = "tag", "fence", "json", "call"
_NO, _PARTIAL = "no", "partial"


def strip_template_tokens(text: str) -> str:
    """Removes chat-template control tokens; drops everything from a turn-ending token on.

    A turn-start token at the very beginning that opens the answer's own turn ("<|im_start|>assistant")
    is a header, not another turn: the header goes and the text after it stays.
    """
    return _TokenFilter().feed(text, final=True)


@dataclass(frozen=True)
class TextToolCall:
    name: str
    arguments: dict[str, Any]


def parse_text_tool_call(text: str, tool_names: Collection[str]) -> TextToolCall | None:
    """A tool call written as text, or None.

    Shapes: a JSON (or Python-literal) object naming the tool under "name"/"function"/"tool" with
    arguments under "arguments"/"parameters"/"args" (possibly a JSON string), OpenAI's
    {"type": "function", "function": {...}}, a list of those (the first counts), `tool({...})`,
    `tool(key="value")`, and, when exactly one tool is given, a bare object with a "query" key.
    Prose may surround the call only when tags or a ``` fence wrap it; otherwise the whole text
    (after an optional "Tool call:" label) must be the call, so a sentence that mentions a tool is
    not one. An echoed tool definition (it has a "description") is not a call either.
    """
    names = frozenset(tool_names)
    if not names:
        return None
    for match in _WRAPPED.finditer(text):
        body = match.group("tag") if match.group("fence") is None else match.group("fence")
        call = _call_in(body, names, match.group("fn"))
        if call is None and len(body) < len(text):
            call = parse_text_tool_call(body, names)  # <tools><tool_call>...</tool_call></tools>
        if call is not None:
            return call
    body = text.strip()
    label = _CALL_WORDING.match(body)
    if label:
        body = body[label.end() :].strip()
    return _call_in(body.strip("`"), names)


def find_leaks(text: str, instructions: str = "", *, tool_names: Collection[str] = ()) -> list[str]:
    """What in a final answer must never reach a user, as found in text; an empty list = clean.

    Template tokens, tool-call markup, JSON that has a "query" key or names a call's arguments
    (or, given tool_names, names one of those tools), a `tool(...)` call of a given tool, and
    echoed instructions: 8 or more consecutive words of them, compared case- and whitespace-
    insensitively (and without the punctuation around each word).
    """
    leaks = [m.group() for m in _TEMPLATE_TOKEN.finditer(text)]
    leaks += [m.group() for m in _TAG.finditer(text)]
    leaks += [m.group() for m in _QUERY_KEY.finditer(text)]
    leaks += [m.group() for m in _NAME_WITH_ARGUMENTS.finditer(text)]
    if tool_names:
        alternatives = "|".join(re.escape(name) for name in tool_names)
        named = re.compile(
            rf"""["'](?:name|function|tool|tool_name)["']\s*:\s*["'](?:functions\.)?(?:{alternatives})["']"""
            rf"""|(?<![\w.])(?:{alternatives})\s*\(\s*(?:\{{|\w+\s*=)"""
        )
        leaks += [m.group() for m in named.finditer(text)]
    leaks += _echoes(text, _words(instructions))
    return list(dict.fromkeys(leaks))


@dataclass(frozen=True)
class GateResult:
    text: str  # the rest of the text to show (cleaned), released at finish
    tool_call: TextToolCall | None  # a tool call the turn wrote as text (its markup never shown)
    dropped: str  # what was withheld (for logs), "" if nothing


class ProseGate:
    """Streams a model turn's text so that nothing of a tool call, template or echoed prompt reaches the user.

    The start of the turn is held until it is clearly prose: `min_prose_chars` long, not opening
    with markup, JSON, a tool's name or "Tool call:" wording, and not reciting the instructions (a
    recited start is dropped and the rest judged afresh). A start that never gets there is decided
    at finish: a tool call, junk (dropped) or a short answer (shown). After the start, text streams
    through; a tool-call block is held from its opener to its end, and the first one that parses
    ends the turn's text (the call runs, the model answers after it). `finish()` releases what was
    held and turned out harmless, such as a trailing "[" or "<".
    """

    def __init__(
        self, tool_names: Collection[str], instructions: str = "", min_prose_chars: int = 40
    ) -> None:
        self._tools = tuple(dict.fromkeys(tool_names))
        self._instruction_words = _words(instructions)
        self._min_prose_chars = min_prose_chars
        self._tokens = _TokenFilter()
        self._dropped: list[str] = []
        self._blocks = _BlockFilter(self._tools, self._dropped)
        self._start: str | None = ""  # the held start of the turn; None once it was released
        self._held_to_finish = False
        self._released: list[str] = []

    def feed(self, delta: str) -> str:
        """Text that can be shown now (may be "")."""
        text = self._advance(self._tokens.feed(delta, final=False), final=False)
        self._released.append(text)
        return text

    def finish(self) -> GateResult:
        """Releases what was held and harmless; call once, at the end of the turn."""
        text = self._advance(self._tokens.feed("", final=True), final=True)
        self._released.append(text)
        dropped = "".join(self._dropped) + self._tokens.tail
        return GateResult(text=text, tool_call=self._blocks.call, dropped=dropped)

    @property
    def released(self) -> str:
        """Everything shown so far (feed outputs and finish text)."""
        return "".join(self._released)

    def _advance(self, clean: str, final: bool) -> str:
        if self._start is None:
            return self._blocks.feed(clean, final)
        start = (self._start + clean).lstrip()
        while start and not self._held_to_finish:
            verdict, echo_end = self._judge_start(start, final)
            if echo_end:
                self._dropped.append(start[:echo_end])
                start = start[echo_end:].lstrip()
                continue
            if verdict == _PROSE:
                self._start = None
                return self._blocks.feed(start, final)
            self._held_to_finish = verdict == _HOLD
            break
        self._start = start
        return self._settle_start(start) if final and start else ""

    def _judge_start(self, text: str, final: bool) -> tuple[str, int]:
        """(verdict, length of a recited start to drop) for the start of the turn as held so far."""
        echo_end = _echo_end(text, self._instruction_words, final)
        if echo_end is None or echo_end:
            return _WAIT, echo_end or 0
        head = re.sub(r"\s*:", ":", re.sub(r"[\s_-]+", " ", text[:40].lower()))
        if any(head.startswith(words) for words in _CALL_WORDING_LITERALS):
            return _HOLD, 0
        if any(words.startswith(head) for words in _CALL_WORDING_LITERALS):
            return _WAIT, 0
        for name in self._tools:
            if text.lower().startswith(name.lower()):
                return _HOLD, 0
            if name.lower().startswith(text.lower()):
                return _WAIT, 0
        if text[0] in "{<" or text.startswith("```"):
            return _HOLD, 0
        if text[0] == "`" and text == "`" * len(text):
            return _WAIT, 0
        if text[0] == "[" and not _CITATION.match(text):
            return (_WAIT if _OPEN_CITATION.fullmatch(text) else _HOLD), 0
        return (_PROSE if len(text) >= self._min_prose_chars else _WAIT), 0

    def _settle_start(self, start: str) -> str:
        """The end of a turn that never got clearly going: a call, junk to drop, or a short answer."""
        self._start = None
        call = parse_text_tool_call(start, self._tools)
        if call is not None:
            self._blocks.end_with(call, start)
            return ""
        if _CALL_WORDING.match(start):
            self._dropped.append(start)
            return ""
        shown = self._blocks.feed(start, final=True)
        if any(ch.isalnum() for ch in re.sub(r"<[^<>]*>|```[\w-]*", "", shown)):
            return shown
        self._dropped.append(shown)
        return ""


class _TokenFilter:
    """Template tokens out of streamed text: complete ones stripped, a possible beginning held."""

    def __init__(self) -> None:
        self._pending = ""
        self._at_start = True
        self.tail = ""  # the turn-ending token and everything after it

    def feed(self, delta: str, final: bool) -> str:
        if self.tail:
            self.tail += delta
            return ""
        buffer, self._pending = self._pending + delta, ""
        out: list[str] = []
        position = 0
        while match := _TEMPLATE_TOKEN.search(buffer, position):
            out.append(buffer[position : match.start()])
            self._at_start = self._at_start and not buffer[position : match.start()].strip()
            position = match.end()
            if not TURN_END_TOKENS.fullmatch(match.group()):
                continue
            header = self._header_length(match.group(), buffer[position:], final)
            if header is None:
                self._pending = buffer[match.start() :]
                return "".join(out)
            if header < 0:
                self.tail = buffer[match.start() :]
                return "".join(out)
            position += header
        rest = buffer[position:]
        cut = next(
            (
                p
                for p in range(max(0, len(rest) - _LONGEST_TOKEN), len(rest))
                if rest[p] in "<[" and _could_open_token(rest[p:])
            ),
            len(rest),
        )
        if final and rest[cut : cut + 2] in ("<|", "<｜"):
            self.tail = rest[cut:]  # a token cut short by the end of the turn
        elif final:
            cut = len(rest)
        self._pending = "" if final else rest[cut:]
        out.append(rest[:cut])
        self._at_start = self._at_start and not rest[:cut].strip()
        return "".join(out)

    def _header_length(self, token: str, after: str, final: bool) -> int | None:
        """Length of the role after a turn-start token that opens the answer's turn; -1: another turn."""
        if not self._at_start or token.lower() not in _HEADER_TOKENS:
            return -1
        word = after.lstrip()
        for role in _ANSWER_ROLES:
            rest = word[len(role) :]
            if word.startswith(role) and not _WORD_CHAR.match(rest[:1]):
                return len(after) - len(rest) if rest or final else None
            if role.startswith(word) and not final:
                return None
        return -1


def _could_open_token(tail: str) -> bool:
    return any(literal.startswith(tail) for literal in _TOKEN_LITERALS) or bool(
        _PARTIAL_BAR_TOKEN.fullmatch(tail)
    )


class _BlockFilter:
    """Text after the start: tool-call blocks held from their opener to their end, then judged."""

    def __init__(self, tools: tuple[str, ...], dropped: list[str]) -> None:
        self._tools = tools
        self._dropped = dropped
        self._openers = _json_openers(tools)
        self._pending = ""  # a possible opener, or the block being held (from its opener)
        self._kind: str | None = None
        self._previous = ""  # the character before the pending text, for word boundaries
        self.call: TextToolCall | None = None

    def end_with(self, call: TextToolCall, text: str) -> None:
        """The turn's call is made: text, and all that follows, is withheld."""
        self.call = call
        self._dropped.append(text)

    def feed(self, text: str, final: bool) -> str:
        if self.call is not None:
            self._dropped.append(text)
            return ""
        buffer, self._pending = self._pending + text, ""
        out: list[str] = []
        while buffer:
            if self._kind is None:
                start, self._kind = self._next_opener(buffer, final)
                out.append(buffer[:start])
                self._previous = buffer[start - 1] if start else self._previous
                buffer = buffer[start:]
                if self._kind is None:
                    break
            end = _block_end(buffer, self._kind)
            if end is None and not final:
                break
            end = len(buffer) if end is None else end
            block, buffer = buffer[:end], buffer[end:]
            call = parse_text_tool_call(block, self._tools)
            if call is not None:
                self.end_with(call, block + buffer)
                return "".join(out)
            if self._kind == _TAG_BLOCK or find_leaks(block, tool_names=self._tools):
                self._dropped.append(block)
            else:
                out.append(block)
                self._previous = block[-1]
            self._kind = None
        self._pending = buffer
        return "".join(out)

    def _next_opener(self, text: str, final: bool) -> tuple[int, str | None]:
        """Where the first block opener (its kind) or possible opener (None) is; len(text) if none.

        At the end of the turn a possible opener is plain text, and the search goes on past it.
        """
        for index, char in enumerate(text):
            before = text[index - 1] if index else self._previous
            status = _NO
            if char == "<":
                status = _tag_status(text[index:])
            elif char == "`":
                rest = text[index:]
                status = _FENCE_BLOCK if rest.startswith("```") else _PARTIAL if rest in ("`", "``") else _NO
            elif char in "{[":
                status = _json_status(text[index : index + 200], self._openers)
            elif not _WORD_CHAR.match(before):
                status = _call_status(text[index:], self._tools)
            if status != _NO and not (final and status == _PARTIAL):
                return index, (None if status == _PARTIAL else status)
        return len(text), None


def _tag_status(text: str) -> str:
    if _TAG.match(text):
        return _TAG_BLOCK
    letters = re.fullmatch(r"</?([A-Za-z_]*)", text)
    if letters and any(name.startswith(letters.group(1).lower()) for name in _TAG_NAME_LIST):
        return _PARTIAL
    return _PARTIAL if _OPEN_TAG_ATTRIBUTES.fullmatch(text) else _NO


def _json_openers(tools: tuple[str, ...]) -> tuple[str, ...]:
    """How JSON written as a call starts, without whitespace: {"name":"tool", {"query":, ...}."""
    heads = [
        '{"function":{',
        '{"type":"function"',
        '{"query":',
        '{"arguments":',
        '{"parameters":',
        '{"tool_calls":',
    ]
    heads += [
        f'{{"{key}":"{prefix}{tool}"' for key in _NAME_KEYS for tool in tools for prefix in ("", "functions.")
    ]
    heads += [head.replace('"', "'") for head in heads]
    return tuple(heads + ["[" + head for head in heads])


def _json_status(text: str, openers: tuple[str, ...]) -> str:
    squeezed = re.sub(r"\s+", "", text)
    if any(squeezed.startswith(opener) for opener in openers):
        return _JSON_BLOCK
    if len(text) < 200 and any(opener.startswith(squeezed) for opener in openers):
        return _PARTIAL
    return _NO


def _call_status(text: str, tools: tuple[str, ...]) -> str:
    for tool in tools:
        if text.startswith(tool):
            rest = text[len(tool) :]
            if re.match(r"\s*\(\s*(?:\{|\w+\s*=)", rest):
                return _CALL_BLOCK
            if re.fullmatch(r"\s*(?:\(\s*\w*\s*)?", rest):
                return _PARTIAL
        elif tool.startswith(text):
            return _PARTIAL
    return _NO


def _block_end(text: str, kind: str) -> int | None:
    """Where the block that text opens ends, or None while it is still open."""
    if kind == _TAG_BLOCK:
        opener = _TAG.match(text)
        assert opener is not None
        if text.startswith("</") or opener.group().endswith("/>"):
            return opener.end()
        closing = _CLOSING_TAG.search(text, opener.end())
        return closing.end() if closing else None
    if kind == _FENCE_BLOCK:
        closing = text.find("```", 3)
        return closing + 3 if closing >= 0 else None
    return _balanced_end(text, text.index("(") if kind == _CALL_BLOCK else 0)


def _balanced_end(text: str, start: int) -> int | None:
    """The end of the bracketed expression opening at start (strings skipped), or None if unclosed."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if escaped:
            escaped = False
        elif quote:
            escaped = char == "\\"
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _call_in(body: str, names: frozenset[str], function: str | None = None) -> TextToolCall | None:
    """The call that body is, whole: JSON/literal, or tool(...); `function` is a tag's =name."""
    body = body.strip()
    if function is not None:
        arguments = _load(body) if body else {}
        return (
            TextToolCall(function, arguments) if function in names and isinstance(arguments, dict) else None
        )
    if body[:1] in ("{", "["):
        return _call_from_value(_load(body), names)
    match = _FUNCTION_STYLE.fullmatch(body)
    if not match or match.group(1).removeprefix("functions.") not in names:
        return None
    inner = match.group(2).strip()
    arguments = _load(inner) if inner.startswith("{") else _keyword_arguments(inner)
    return (
        TextToolCall(match.group(1).removeprefix("functions."), arguments)
        if isinstance(arguments, dict)
        else None
    )


def _call_from_value(value: Any, names: frozenset[str]) -> TextToolCall | None:
    if isinstance(value, list):
        return _call_from_value(value[0], names) if value else None
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("tool_calls"), list):
        return _call_from_value(value["tool_calls"], names)
    if isinstance(value.get("function"), dict):
        return _call_from_value(value["function"], names)
    name = next((value[key] for key in _NAME_KEYS if isinstance(value.get(key), str)), None)
    if name is None:
        only = next(iter(names)) if len(names) == 1 else None
        return TextToolCall(only, dict(value)) if only and "query" in value else None
    name = name.removeprefix("functions.")
    if name not in names or "description" in value:
        return None
    key = next((key for key in _ARGUMENT_KEYS if key in value), None)
    if key is None:
        arguments: Any = {k: v for k, v in value.items() if k not in (*_NAME_KEYS, "type", "id")}
    else:
        arguments = value[key]
    if isinstance(arguments, str):
        arguments = _load(arguments) if arguments.strip() else {}
    if not isinstance(arguments, dict) or "properties" in arguments:
        return None
    return TextToolCall(name, arguments)


def _load(text: str) -> Any:
    """JSON, or a Python literal (small models write single quotes and True); None if neither."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # a model (or a page it echoes) can nest 20,000 "["
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _keyword_arguments(source: str) -> dict[str, Any] | None:
    """The arguments of `tool(key="value", n=3)`; None unless every one is a keyword with a literal."""
    try:
        node = ast.parse(f"f({source})", mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(node, ast.Call) or node.args or any(k.arg is None for k in node.keywords):
        return None
    json_names = {"true": True, "false": False, "null": None}
    arguments = {}
    for keyword in node.keywords:
        if isinstance(keyword.value, ast.Name) and keyword.value.id in json_names:
            arguments[keyword.arg] = json_names[keyword.value.id]
            continue
        try:
            arguments[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            return None
    return arguments


def _echo_end(text: str, instruction_words: list[str], final: bool) -> int | None:
    """Length of text's start that recites ECHO_WORDS+ consecutive instruction words; 0: none; None: undecided.

    Only complete words count (the last one may still grow) unless the turn is over, and a run
    that matches as far as the text goes is undecided: it may go on.
    """
    if len(instruction_words) < ECHO_WORDS:
        return 0
    words = list(re.finditer(r"\S+", text))
    if words and words[-1].end() == len(text) and not final:
        words.pop()
    said = [_word_key(word.group()) for word in words]
    run = 0
    for start in range(len(instruction_words)):
        length = 0
        while length < len(said) and start + length < len(instruction_words):
            if instruction_words[start + length] != said[length]:
                break
            length += 1
        run = max(run, length)
    if run == len(said) and not final:
        return None
    return words[run - 1].end() if run >= ECHO_WORDS else 0


def _echoes(text: str, instruction_words: list[str]) -> list[str]:
    """Runs of ECHO_WORDS+ words of text that appear, consecutively, in the instructions."""
    grams = {
        tuple(instruction_words[i : i + ECHO_WORDS]) for i in range(len(instruction_words) - ECHO_WORDS + 1)
    }
    words = list(re.finditer(r"\S+", text))
    said = [_word_key(word.group()) for word in words]
    found, index = [], 0
    while grams and index + ECHO_WORDS <= len(said):
        if tuple(said[index : index + ECHO_WORDS]) not in grams:
            index += 1
            continue
        end = index + ECHO_WORDS
        while end < len(said) and tuple(said[end - ECHO_WORDS + 1 : end + 1]) in grams:
            end += 1
        found.append(text[words[index].start() : words[end - 1].end()])
        index = end
    return found


def _words(text: str) -> list[str]:
    return [_word_key(word) for word in text.split()]


def _word_key(word: str) -> str:
    """A word as recitals are compared: case and the punctuation around it do not count."""
    return word.lower().strip(_PUNCTUATION) or word
