"""The offline extractive model: the Agents SDK Model interface without a language model.

It runs through the same agent loop as an LLM. Asked a question, it calls retrieval_tool with it;
given the tool's output, it answers with the best supporting sentences (models/extractive.py), each
cited and streamed as one delta of Responses API events. Nothing leaves the process, so it is the
embedded default and what tests and benchmarks measure.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import numpy as np
from agents import ModelResponse, ModelSettings, Tool, Usage
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelTracing
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_prompt_param import ResponsePromptParam

from services.agent.models.extractive import (
    Weights,
    choose_sentences,
    compose_answer,
    parse_passages,
)
from services.agent.prompt import question_of
from services.agent.tools import TOOL_NAME
from services.common.embedding import Embed, EmbeddingCache

MODEL_NAME = "offline-extractive"
NOT_COVERED = "The book does not cover this question: none of the retrieved passages answer it."
NOTHING_FOUND = "The book does not cover this question: the search found no matching passages."
CANNOT_SEARCH = "I cannot search the book right now, so I cannot answer this question."
# A delta ends after a citation marker and the space that follows it: the answer arrives whole, so
# each sentence streams with its citation, in one message instead of one per few words.
_DELTA_RE = re.compile(r".*?\[\d+\]\s*|.+", re.DOTALL)


class OfflineExtractiveModel(Model):
    """Answers from retrieved text only, by extraction; see the module docstring.

    `embed` defaults to the local MiniLM model behind an EmbeddingCache. `scored` maps sentences to
    the similarity Search gave them; `reading` binds one run's map (the SDK gives a model no run
    context, so each run gets its own light copy).
    """

    def __init__(
        self,
        embed: Embed | None = None,
        weights: Weights | None = None,
        scored: Mapping[str, float] | None = None,
    ) -> None:
        self._embed = embed or EmbeddingCache(_local_embed)
        self._weights = weights or Weights()
        self._scored = scored if scored is not None else {}

    def reading(self, scored: Mapping[str, float]) -> OfflineExtractiveModel:
        """This model (same embedding cache), ranking with one run's sentence scores."""
        return OfflineExtractiveModel(self._embed, self._weights, scored)

    def warm_up(self) -> None:
        """Loads the embedding model now (seconds), so that the first question does not wait for it."""
        self._embed(["warm up"])

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        item = await self._next_output(input, tools)
        return ModelResponse(output=[item], usage=Usage(requests=1), response_id=None)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        item = await self._next_output(input, tools)
        for event in stream_events(item):
            yield event

    async def _next_output(
        self, input: str | list[TResponseInputItem], tools: list[Tool]
    ) -> ResponseFunctionToolCall | ResponseOutputMessage:
        """A retrieval call for a new question; an answer once the latest call's output is in."""
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        question, outputs = _latest_question(items)
        if not outputs:
            if not any(tool.name == TOOL_NAME for tool in tools):
                return _message(CANNOT_SEARCH)
            arguments = {"query": question, "top_k": None, "section": None}
            return ResponseFunctionToolCall(
                type="function_call",
                id=f"fc_{uuid.uuid4().hex}",
                call_id=f"call_{uuid.uuid4().hex}",
                name=TOOL_NAME,
                arguments=json.dumps(arguments, ensure_ascii=False),
                status="completed",
            )
        return _message(await self.answer(question, outputs))

    async def answer(self, question: str, tool_outputs: list[str]) -> str:
        """The answer text for a question, given what retrieval_tool returned."""
        passages = {p.number: p for output in tool_outputs for p in parse_passages(output)}
        if not passages:
            searched = any(not output.startswith("retrieval failed") for output in tool_outputs)
            return NOTHING_FOUND if searched else CANNOT_SEARCH
        picks = await asyncio.to_thread(
            choose_sentences, question, list(passages.values()), self._embed, self._weights, self._scored
        )
        return compose_answer(picks) if picks else NOT_COVERED


def _local_embed(texts: list[str]) -> np.ndarray:
    from services.common.embedding import local_embedding_model

    return local_embedding_model().embed(texts)


def _latest_question(items: list[Any]) -> tuple[str, list[str]]:
    """The question of the last user message, and the tool outputs that came after it."""
    last_user = max((i for i, item in enumerate(items) if _role(item) == "user"), default=-1)
    question = question_of(_text(items[last_user].get("content", ""))) if last_user >= 0 else ""
    outputs = [
        _text(item.get("output", ""))
        for item in items[last_user + 1 :]
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    return question, outputs


def _role(item: Any) -> str | None:
    return item.get("role") if isinstance(item, dict) else None


def _text(content: Any) -> str:
    """Text of a message content or tool output: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id=f"msg_{uuid.uuid4().hex}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])],
    )


def stream_events(item: ResponseFunctionToolCall | ResponseOutputMessage) -> Iterator[TResponseStreamEvent]:
    """The Responses API event sequence of a response made of one output item.

    created -> output_item.added -> (argument or text deltas) -> output_item.done -> completed; the
    completed event carries the whole response, which is what the agent loop acts on.
    """
    response = Response(
        id=f"resp_{uuid.uuid4().hex}",
        created_at=time.time(),
        model=MODEL_NAME,
        object="response",
        output=[],
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
        status="in_progress",
    )
    sequence = iter(range(1_000_000))
    yield ResponseCreatedEvent(type="response.created", response=response, sequence_number=next(sequence))
    if isinstance(item, ResponseFunctionToolCall):
        yield ResponseOutputItemAddedEvent(
            type="response.output_item.added",
            item=item.model_copy(update={"arguments": "", "status": "in_progress"}),
            output_index=0,
            sequence_number=next(sequence),
        )
        yield ResponseFunctionCallArgumentsDeltaEvent(
            type="response.function_call_arguments.delta",
            item_id=item.id or item.call_id,
            output_index=0,
            delta=item.arguments,
            sequence_number=next(sequence),
        )
        yield ResponseFunctionCallArgumentsDoneEvent(
            type="response.function_call_arguments.done",
            item_id=item.id or item.call_id,
            output_index=0,
            arguments=item.arguments,
            sequence_number=next(sequence),
        )
    else:
        yield from _text_events(item, sequence)
    yield ResponseOutputItemDoneEvent(
        type="response.output_item.done", item=item, output_index=0, sequence_number=next(sequence)
    )
    done = response.model_copy(update={"output": [item], "status": "completed"})
    yield ResponseCompletedEvent(type="response.completed", response=done, sequence_number=next(sequence))


def _text_events(message: ResponseOutputMessage, sequence: Iterator[int]) -> Iterator[TResponseStreamEvent]:
    part = message.content[0]
    assert isinstance(part, ResponseOutputText)
    yield ResponseOutputItemAddedEvent(
        type="response.output_item.added",
        item=message.model_copy(update={"content": [], "status": "in_progress"}),
        output_index=0,
        sequence_number=next(sequence),
    )
    yield ResponseContentPartAddedEvent(
        type="response.content_part.added",
        item_id=message.id,
        output_index=0,
        content_index=0,
        part=part.model_copy(update={"text": ""}),
        sequence_number=next(sequence),
    )
    for delta in text_deltas(part.text):
        yield ResponseTextDeltaEvent(
            type="response.output_text.delta",
            item_id=message.id,
            output_index=0,
            content_index=0,
            delta=delta,
            logprobs=[],
            sequence_number=next(sequence),
        )
    yield ResponseTextDoneEvent(
        type="response.output_text.done",
        item_id=message.id,
        output_index=0,
        content_index=0,
        text=part.text,
        logprobs=[],
        sequence_number=next(sequence),
    )
    yield ResponseContentPartDoneEvent(
        type="response.content_part.done",
        item_id=message.id,
        output_index=0,
        content_index=0,
        part=part,
        sequence_number=next(sequence),
    )


def text_deltas(text: str) -> list[str]:
    """The text in the pieces a client streams: each cited sentence with its marker, then the rest."""
    return _DELTA_RE.findall(text)
