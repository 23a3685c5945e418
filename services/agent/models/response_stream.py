"""Responses API stream events for models of our own making (the offline answerer, the guard around an LLM).

The SDK's run loop acts on the `response.completed` event (its output items decide whether a tool
runs or the answer is final); the events before it are what a client streams. `ResponseWriter`
emits a valid sequence incrementally, so text can stream as it is decided:

    created -> [message added, part added, text deltas..., text done, part done, message done]
            -> [function call added, arguments delta, arguments done, call done] -> completed
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator

from agents.items import TResponseStreamEvent
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)


def function_call(name: str, arguments: str) -> ResponseFunctionToolCall:
    """A completed call of tool `name` with JSON `arguments`, under fresh ids."""
    return ResponseFunctionToolCall(
        type="function_call",
        id=f"fc_{uuid.uuid4().hex}",
        call_id=f"call_{uuid.uuid4().hex}",
        name=name,
        arguments=arguments,
        status="completed",
    )


def message(text: str) -> ResponseOutputMessage:
    """A completed assistant message holding `text`."""
    return ResponseOutputMessage(
        type="message",
        id=f"msg_{uuid.uuid4().hex}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])],
    )


class ResponseWriter:
    """Builds one response's event stream; call `created()` first and `completed()` last."""

    def __init__(self, model: str) -> None:
        self._model = model
        self._sequence = itertools.count()
        self._output: list[ResponseOutputItem] = []
        self._message_id = ""
        self._text = ""
        self._response = Response(
            id=f"resp_{uuid.uuid4().hex}",
            created_at=time.time(),
            model=model,
            object="response",
            output=[],
            parallel_tool_calls=False,
            tool_choice="auto",
            tools=[],
            status="in_progress",
        )

    def created(self) -> TResponseStreamEvent:
        return ResponseCreatedEvent(
            type="response.created", response=self._response, sequence_number=next(self._sequence)
        )

    def text(self, delta: str) -> Iterator[TResponseStreamEvent]:
        """A piece of the answer text (the message is opened on the first piece)."""
        if not delta:
            return
        if not self._message_id:
            self._message_id = f"msg_{uuid.uuid4().hex}"
            opened = ResponseOutputMessage(
                type="message", id=self._message_id, role="assistant", status="in_progress", content=[]
            )
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added",
                item=opened,
                output_index=len(self._output),
                sequence_number=next(self._sequence),
            )
            yield ResponseContentPartAddedEvent(
                type="response.content_part.added",
                item_id=self._message_id,
                output_index=len(self._output),
                content_index=0,
                part=ResponseOutputText(type="output_text", text="", annotations=[], logprobs=[]),
                sequence_number=next(self._sequence),
            )
        self._text += delta
        yield ResponseTextDeltaEvent(
            type="response.output_text.delta",
            item_id=self._message_id,
            output_index=len(self._output),
            content_index=0,
            delta=delta,
            logprobs=[],
            sequence_number=next(self._sequence),
        )

    def call(self, call: ResponseFunctionToolCall) -> Iterator[TResponseStreamEvent]:
        """A whole function call (any open message is closed first)."""
        yield from self._close_message()
        index = len(self._output)
        item_id = call.id or call.call_id
        yield ResponseOutputItemAddedEvent(
            type="response.output_item.added",
            item=call.model_copy(update={"arguments": "", "status": "in_progress"}),
            output_index=index,
            sequence_number=next(self._sequence),
        )
        yield ResponseFunctionCallArgumentsDeltaEvent(
            type="response.function_call_arguments.delta",
            item_id=item_id,
            output_index=index,
            delta=call.arguments,
            sequence_number=next(self._sequence),
        )
        yield ResponseFunctionCallArgumentsDoneEvent(
            type="response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=call.arguments,
            sequence_number=next(self._sequence),
        )
        yield from self._done(call)

    def completed(self) -> Iterator[TResponseStreamEvent]:
        """Closes any open message and ends the response with every output item."""
        yield from self._close_message()
        done = self._response.model_copy(update={"output": list(self._output), "status": "completed"})
        yield ResponseCompletedEvent(
            type="response.completed", response=done, sequence_number=next(self._sequence)
        )

    @property
    def output(self) -> list[ResponseOutputItem]:
        return list(self._output)

    def _close_message(self) -> Iterator[TResponseStreamEvent]:
        if not self._message_id:
            return
        index = len(self._output)
        part = ResponseOutputText(type="output_text", text=self._text, annotations=[], logprobs=[])
        yield ResponseTextDoneEvent(
            type="response.output_text.done",
            item_id=self._message_id,
            output_index=index,
            content_index=0,
            text=self._text,
            logprobs=[],
            sequence_number=next(self._sequence),
        )
        yield ResponseContentPartDoneEvent(
            type="response.content_part.done",
            item_id=self._message_id,
            output_index=index,
            content_index=0,
            part=part,
            sequence_number=next(self._sequence),
        )
        closed = message(self._text).model_copy(update={"id": self._message_id})
        self._message_id, self._text = "", ""
        yield from self._done(closed)

    def _done(self, item: ResponseOutputItem) -> Iterator[TResponseStreamEvent]:
        yield ResponseOutputItemDoneEvent(
            type="response.output_item.done",
            item=item,
            output_index=len(self._output),
            sequence_number=next(self._sequence),
        )
        self._output.append(item)
