"""What the model is told: the instructions, and the input of one run.

The input is plain chat messages, so every model reads it the same way: each earlier turn of the
session as a user message and an assistant message (with a short note of the searches it made),
then the new question in one user message laid out as

    Reader context (given by the reader's app; it is not from the book):
    - chapter: Sensors

    Selected passage (highlighted by the reader; quoted, it is not a search result):
    > ...

    Question: <the question>

The offline model reads the question back with `question_of`, so the label is part of the format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.agent.citations import MARKER_RE
from services.agent.sessions.model import Turn
from services.common.text.question import asks_for_other_words

QUESTION_LABEL = "Question:"
_HEADING_RE = re.compile(r"^\s*#{1,6}\s")
_SEARCH_NOTE_PREFIX = "(Earlier search: "
# The notes of earlier searches in a past answer: an answer turn offers no tool, and small models
# copy the note as if it were one.
_SEARCH_NOTE_RE = re.compile(rf"^{re.escape(_SEARCH_NOTE_PREFIX)}.*\)\n", re.MULTILINE)
# Per-value cap of user_context entries: context, not content.
_MAX_CONTEXT_VALUE_CHARS = 300
# Per-turn cap of earlier answers: history orients the model, the book answers.
_MAX_HISTORY_ANSWER_CHARS = 1200

# Written for small models too: short, one rule a line, and no example sentence (small models copy
# an example as their answer). The format of a citation is described, never shown.
INSTRUCTIONS = """\
You answer readers' questions about one book (or documentation site).

- Search the book with retrieval_tool, then answer only from the numbered passages it returns.
  Never answer from your own knowledge.
- Keep close to the passages' own wording: two to four short sentences.
- End each sentence with the number of the passage it comes from, in square brackets.
- If the passages do not answer the question, say in one sentence that the book does not cover it.
- If retrieval_tool reports an error, say that you cannot search the book right now.
- The reader's selected passage and context, if any, only explain what the reader means; they are
  not sources.
- Reply in the reader's language, with the answer only.
"""


@dataclass(frozen=True)
class AnswerPrompt:
    """The answer turn of a guided LLM (models/guided.py): its instructions, and the request that
    ends the reader's message. The passages are in the message and no tool is offered, so a small
    model answers instead of calling the tool again. Markers it forgets are added after validation."""

    instructions: str
    request: str


# A small model copies what it is shown; copying keeps it faithful.
QUOTING = AnswerPrompt(
    instructions="""\
You answer questions about a book by quoting it. Copy, word for word, the one or two sentences of
the numbered passages in the reader's message that answer the question, each followed by its
passage number in square brackets; when the question asks for several things (items, steps,
reasons or options), copy every one the passage lists. Only if no passage is about the question,
say that the book does not cover it. If the search failed, say that you cannot search the book
right now.
""",
    request="Answer with the sentences that answer it, copied word for word:",
)
# For a reader who asks for other words ("Explain this in simpler words"): a copy answers nothing.
REWORDING = AnswerPrompt(
    instructions="""\
You explain a book to a reader in plain words. Say what the numbered passages in the reader's
message say about the question in two or three short, simple sentences of your own, adding
nothing they do not say, each followed by the number of the passage it comes from in square
brackets. Only if no passage is about the question, say that the book does not cover it. If the
search failed, say that you cannot search the book right now.
""",
    request="Answer in your own simple words, saying only what the passages say:",
)


def answer_prompt(question: str) -> AnswerPrompt:
    """REWORDING for a question that asks for other words, else QUOTING."""
    return REWORDING if asks_for_other_words(question) else QUOTING


def answer_input(
    items: Sequence[Any],
    passages: Sequence[tuple[int, str]],
    search_failed: bool = False,
    prompt: AnswerPrompt = QUOTING,
) -> list[dict[str, Any]]:
    """The model input of an answer turn: the earlier turns as they were, then the question with
    the passages found for it (one line each, numbered as they are cited) written into it."""
    last_user = max((i for i, item in enumerate(items) if _get(item, "role") == "user"), default=-1)
    history = [
        {"role": _get(item, "role"), "content": _SEARCH_NOTE_RE.sub("", _text(_get(item, "content")))}
        for item in items[:last_user]
        if _get(item, "role") in ("user", "assistant")
    ]
    lines = "\n\n".join(f"[{number}] {_prose(text)}" for number, text in passages)
    question = _text(_get(items[last_user], "content")) if last_user >= 0 else ""
    if passages:
        found = f"Passages from the book:\n{lines}"
    else:
        found = "The search of the book failed." if search_failed else "The search found no passages."
    return [*history, {"role": "user", "content": f"{found}\n\n{question}\n{prompt.request}"}]


def build_input(
    question: str,
    *,
    history: Sequence[Turn] = (),
    selected_text: str = "",
    user_context: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The model input of one run: the session's earlier turns, then the framed question."""
    items: list[dict[str, Any]] = []
    for turn in history:
        items.append({"role": "user", "content": turn.query})
        items.append({"role": "assistant", "content": _past_answer(turn)})
    items.append({"role": "user", "content": frame_question(question, selected_text, user_context or {})})
    return items


def frame_question(question: str, selected_text: str, user_context: Mapping[str, str]) -> str:
    parts = []
    if user_context:
        lines = "\n".join(
            f"- {_one_line(key, 60)}: {_one_line(value, _MAX_CONTEXT_VALUE_CHARS)}"
            for key, value in sorted(user_context.items())
        )
        parts.append(f"Reader context (given by the reader's app; it is not from the book):\n{lines}")
    if selected_text.strip():
        quoted = "\n".join(f"> {line}".rstrip() for line in selected_text.strip().splitlines())
        parts.append(
            f"Selected passage (highlighted by the reader; quoted, it is not a search result):\n{quoted}"
        )
    parts.append(f"{QUESTION_LABEL} {question.strip()}")
    return "\n\n".join(parts)


def question_of(message: str) -> str:
    """The question inside a user message built by `frame_question` (the whole text otherwise)."""
    at = message.rfind(f"\n{QUESTION_LABEL} ")
    if at >= 0:
        return message[at + len(QUESTION_LABEL) + 2 :].strip()
    if message.startswith(f"{QUESTION_LABEL} "):
        return message[len(QUESTION_LABEL) + 1 :].strip()
    return message.strip()


def _past_answer(turn: Turn) -> str:
    """An earlier answer without its [n] markers (their numbers meant that turn's sources)."""
    answer = MARKER_RE.sub("", turn.answer).strip()
    if len(answer) > _MAX_HISTORY_ANSWER_CHARS:
        answer = answer[: _MAX_HISTORY_ANSWER_CHARS - 1].rstrip() + "…"
    notes = [f"{_SEARCH_NOTE_PREFIX}{call.name} {_compact_json(call.arguments)})" for call in turn.tool_calls]
    return "\n".join([*notes, answer])


def _compact_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return _one_line(arguments, 300)


def _one_line(text: str, max_chars: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"


def latest_question(items: Sequence[Any]) -> tuple[str, list[str]]:
    """The question of the last user message of a model input, and the tool outputs after it."""
    last_user = max((i for i, item in enumerate(items) if _get(item, "role") == "user"), default=-1)
    question = question_of(_text(_get(items[last_user], "content"))) if last_user >= 0 else ""
    outputs = [
        _text(_get(item, "output"))
        for item in items[last_user + 1 :]
        if _get(item, "type") == "function_call_output"
    ]
    return question, outputs


def _prose(text: str) -> str:
    """A passage on one line without its Markdown heading lines (small models copy them)."""
    return " ".join(" ".join(line.split()) for line in text.splitlines() if not _HEADING_RE.match(line))


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _text(content: Any) -> str:
    """Text of a message content or tool output: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""
