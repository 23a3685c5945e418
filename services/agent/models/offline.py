"""The offline extractive model: the Agents SDK Model interface without a language model.

It runs through the same agent loop as an LLM. Asked a question, it calls retrieval_tool with it;
given the tool's output, it answers with the best supporting sentences (models/extractive.py), each
cited and streamed one sentence a delta as Responses API events. Nothing leaves the process, so it is the
embedded default and what tests and benchmarks measure.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import numpy as np
from agents import ModelResponse, ModelSettings, Tool, Usage
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelTracing
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage
from openai.types.responses.response_prompt_param import ResponsePromptParam

from services.agent.models.extractive import (
    Weights,
    choose_sentences,
    compose_answer,
    parse_passages,
)
from services.agent.models.response_stream import ResponseWriter, function_call, message
from services.agent.prompt import latest_question
from services.agent.tools import FAILURE_PREFIX, TOOL_NAME
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
        search_query: str = "",
    ) -> None:
        self._embed = embed or EmbeddingCache(_local_embed)
        self._weights = weights or Weights()
        self._scored = scored if scored is not None else {}
        self._search_query = search_query

    def reading(self, scored: Mapping[str, float], search_query: str = "") -> OfflineExtractiveModel:
        """This model (same embedding cache) for one run: it searches for `search_query` (the
        question resolved against the conversation) and ranks with that run's sentence scores."""
        return OfflineExtractiveModel(self._embed, self._weights, scored, search_query)

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
        writer = ResponseWriter(MODEL_NAME)
        yield writer.created()
        if isinstance(item, ResponseFunctionToolCall):
            for event in writer.call(item):
                yield event
        else:
            for delta in text_deltas(item.content[0].text):
                for event in writer.text(delta):
                    yield event
        for event in writer.completed():
            yield event

    async def _next_output(
        self, input: str | list[TResponseInputItem], tools: list[Tool]
    ) -> ResponseFunctionToolCall | ResponseOutputMessage:
        """A retrieval call for a new question; an answer once the latest call's output is in."""
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        question, outputs = latest_question(items)
        query = self._search_query or question
        if not outputs:
            if not any(tool.name == TOOL_NAME for tool in tools):
                return message(CANNOT_SEARCH)
            return function_call(TOOL_NAME, json.dumps({"query": query}, ensure_ascii=False))
        return message(await self.answer(query, outputs))

    async def answer(self, question: str, tool_outputs: list[str]) -> str:
        """The answer text for a question, given what retrieval_tool returned."""
        passages = {p.number: p for output in tool_outputs for p in parse_passages(output)}
        if not passages:
            searched = any(not output.startswith(FAILURE_PREFIX) for output in tool_outputs)
            return NOTHING_FOUND if searched else CANNOT_SEARCH
        picks = await asyncio.to_thread(
            choose_sentences, question, list(passages.values()), self._embed, self._weights, self._scored
        )
        return compose_answer(picks) if picks else NOT_COVERED


def _local_embed(texts: list[str]) -> np.ndarray:
    from services.common.embedding import local_embedding_model

    return local_embedding_model().embed(texts)


def text_deltas(text: str) -> list[str]:
    """The text in the pieces a client streams: each cited sentence with its marker, then the rest."""
    return _DELTA_RE.findall(text)
