"""The offline extractive model: the Agents SDK Model interface without a language model.

It runs through the same agent loop as an LLM. Asked a question, it calls retrieval_tool with it;
once the tool has run, it answers from the passages the run keeps (not from the tool's text) with
the best supporting sentences (services/agent/extractive.py), each cited and streamed one sentence
a delta as Responses API events. Nothing leaves the process, so it is the
embedded default and what tests and benchmarks measure.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from agents import ModelResponse, ModelSettings, Tool, Usage
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelTracing
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage
from openai.types.responses.response_prompt_param import ResponsePromptParam

from services.agent.extractive import CANNOT_SEARCH, ExtractiveAnswerer
from services.agent.models.response_stream import ResponseWriter, function_call, message
from services.agent.prompt import latest_question
from services.agent.tools import TOOL_NAME, AskContext

MODEL_NAME = "offline-extractive"
# A delta ends after a citation marker and the space that follows it: the answer arrives whole, so
# each sentence streams with its citation, in one message instead of one per few words.
_DELTA_RE = re.compile(r".*?\[\d+\]\s*|.+", re.DOTALL)


class OfflineExtractiveModel(Model):
    """Answers from retrieved text only, by extraction; see the module docstring.

    The SDK gives a model no run context, so `for_run` binds one run's (its resolved search query
    and the passages its searches keep); the extractive answerer is shared by every run.
    """

    def __init__(self, answerer: ExtractiveAnswerer | None = None, run: AskContext | None = None) -> None:
        self.answerer = answerer or ExtractiveAnswerer()
        self._run = run

    def for_run(self, context: AskContext) -> OfflineExtractiveModel:
        """This model reading one run: it searches for the run's resolved query and answers from
        the passages that run retrieved."""
        return OfflineExtractiveModel(self.answerer, context)

    def warm_up(self) -> None:
        self.answerer.warm_up()

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
        run = self._run
        query = (run.search_query if run is not None else "") or question
        if not outputs:
            if not any(tool.name == TOOL_NAME for tool in tools):
                return message(CANNOT_SEARCH)
            return function_call(TOOL_NAME, json.dumps({"query": query}, ensure_ascii=False))
        if run is None:
            raise RuntimeError("the offline model answers only within a run (OfflineExtractiveModel.for_run)")
        return message(await self.answerer.answer(query, run.passages.values(), searched=run.searched))


def text_deltas(text: str) -> list[str]:
    """The text in the pieces a client streams: each cited sentence with its marker, then the rest."""
    return _DELTA_RE.findall(text)
