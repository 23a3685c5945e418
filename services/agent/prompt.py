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
from collections.abc import Mapping, Sequence
from typing import Any

from services.agent.citations import MARKER_RE
from services.agent.sessions.model import Turn

QUESTION_LABEL = "Question:"
# Per-value cap of user_context entries: context, not content.
_MAX_CONTEXT_VALUE_CHARS = 300
# Per-turn cap of earlier answers: history orients the model, the book answers.
_MAX_HISTORY_ANSWER_CHARS = 1200

INSTRUCTIONS = """\
You answer questions about one book (or documentation site) for its readers.

How to answer:
1. Always call retrieval_tool first with a short, focused search query made from the question.
   You may call it again with another query, or with a `section` filter when the reader asks
   about a named chapter or section, if the first results miss the point.
2. Answer only from the passages retrieval_tool returned in this conversation. Do not use outside
   knowledge, and do not treat the reader's selected passage or context as a source.
3. Cite the passage each statement comes from with its number in square brackets right after the
   sentence, e.g. "ROS 2 uses DDS for transport. [2]". Use only numbers of passages you were
   given; never invent a source, a number, a title or a URL.
4. If the passages do not answer the question, say plainly that the book does not cover it, with
   no citation. If retrieval_tool reports an error, say that you cannot search the book right now.
5. Be brief: a few sentences that answer the question directly, in the reader's language.
"""


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
    notes = [f"(Earlier search: {call.name} {_compact_json(call.arguments)})" for call in turn.tool_calls]
    return "\n".join([*notes, answer])


def _compact_json(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return _one_line(arguments, 300)


def _one_line(text: str, max_chars: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"
