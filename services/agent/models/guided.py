"""An LLM kept on the rails: it always retrieves first, and nothing but its prose reaches the reader.

Small self-hosted models (0.5B-1.5B on CPU) rarely call a tool on their own: with
`tool_choice="auto"` they answer from memory, write the call as text, or leak template tokens.
`GuidedModel` wraps any SDK model and
- makes the first retrieval call of a run itself, for the question resolved against the
  conversation, without a model call: a model asked for it spent most of the first-token time on
  it, and one in eight ran to the token cap writing an answer from memory into the query. With
  `model_searches` (capable models) the model is asked, naming the retrieval tool in `tool_choice`,
  and its query's new words are added when they read like a query (`merged_query`); an endpoint
  that rejects a named `tool_choice` gets the call made for it, from then on;
- once the run has made `max_searches` searches, asks for the answer with no tool offered and the
  passages written into the question (tool messages make small models call the tool again), each
  cut to its place in the book and the section holding its best sentence (contiguous sentences
  around it, a list under its lead-in), the sections of the extractive answerer's choice first
  (it ranks by what the question asks for; Search by similarity alone): a small model copies from what it
  is shown, and a short prompt is read several times faster on a CPU; a question asking for other
  words ("explain this in simpler words") gets a prompt that lets it reword, any other one a
  prompt to copy (prompt.py);
  before that (max_searches > 1) the model may search again, natively or by a call written as text;
- streams every turn through a ProseGate: the start of a turn is held until it is clearly prose,
  template tokens and echoed instructions are dropped, and a tool call written as text becomes a
  real call (so the SDK runs it, with the same events as a native one); then through an
  EchoFilter (echoes.py): the passages' places and the request it copies back are dropped;
- takes its turn at the endpoint (`calls`, admission.py) within the run's deadline: a CPU server
  computes one answer at a time, and llama-cpp-python's cuts a streaming answer short when another
  request arrives, which used to leave every answer of concurrent questions truncated and replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agents import ModelResponse, ModelSettings, Tool, Usage
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelTracing
from openai import APIStatusError
from openai.types.responses import ResponseCompletedEvent, ResponseFunctionToolCall, ResponseOutputMessage
from openai.types.responses.response_prompt_param import ResponsePromptParam

from services.agent.admission import Admission
from services.agent.config import ANSWER_CONTEXT_CHARS
from services.agent.extractive import (
    ExtractiveAnswerer,
    Pick,
    is_meta_section,
    is_meta_sentence,
    shown_sentence,
)
from services.agent.models.echoes import EchoFilter, shown_places
from services.agent.models.response_stream import ResponseWriter, function_call
from services.agent.models.textguard import ProseGate, parse_text_tool_call
from services.agent.passages import Passage
from services.agent.prompt import QUESTION_LABEL, answer_input, answer_prompt, latest_question
from services.agent.tools import TOOL_NAME, AskContext
from services.common.contract_limits import MAX_QUERY_CHARS
from services.common.logging import get_logger
from services.common.text.display import display_text
from services.common.text.prose import ProseSentence, sectioned_sentences
from services.common.text.units import UnitKind, line_kinds
from services.common.text.words import Analysis, is_content_word, stem

log = get_logger("glossator.agent.llm")

# Characters an answer turn shows the model of each passage (its best section, around its best
# sentence), at least; in all it is shown settings.llm_context_chars (ANSWER_CONTEXT_CHARS).
PASSAGE_CHARS = 500
# A model's search query is a few keywords: a longer one is an answer written from memory (an
# invented IMU spec, 512 tokens of it), and its words would steer the search.
MAX_MODEL_QUERY_WORDS = 16
MAX_ADDED_WORDS = 6
# A wait for the endpoint this long is logged (llm_call_waited).
_LOGGED_WAIT_MS = 100.0
# Statuses with which servers turn down a named tool_choice they do not support (llama.cpp: 500).
_TOOL_CHOICE_REJECTED = frozenset({400, 422, 500, 501})


@dataclass
class EndpointTraits:
    """What was learnt about the endpoint, shared by every run of the process."""

    named_tool_choice: bool = True


class GuidedModel(Model):
    """See the module docstring. `for_run` binds one run (its resolved query, its passages and its
    deadline); `calls` is shared by every run of the process (None: no limit)."""

    def __init__(
        self,
        inner: Model,
        name: str,
        *,
        max_searches: int = 1,
        model_searches: bool = False,
        calls: Admission | None = None,
        run: AskContext | None = None,
        traits: EndpointTraits | None = None,
        extractive: ExtractiveAnswerer | None = None,
        context_chars: int = ANSWER_CONTEXT_CHARS,
    ) -> None:
        self.inner = inner
        self.name = name
        self._max_searches = max_searches
        self._model_searches = model_searches
        self._calls = calls
        self._run = run
        self._traits = traits or EndpointTraits()
        self._extractive = extractive
        self.context_chars = context_chars

    def for_run(self, context: AskContext) -> GuidedModel:
        """This model for one run: its resolved query, the passages its searches keep, its deadline."""
        return GuidedModel(
            self.inner,
            self.name,
            max_searches=self._max_searches,
            model_searches=self._model_searches,
            calls=self._calls,
            run=context,
            traits=self._traits,
            extractive=self._extractive,
            context_chars=self.context_chars,
        )

    @contextlib.asynccontextmanager
    async def _endpoint_turn(self) -> AsyncIterator[None]:
        """Holds one of the endpoint's call slots, waited for within the run's deadline
        (RESOURCE_EXHAUSTED at once when the calls ahead would not leave it time)."""
        if self._calls is None or self._run is None:
            yield
            return
        asked = time.perf_counter()
        async with self._calls.slot(self._run.deadline):
            waited_ms = (time.perf_counter() - asked) * 1000
            if waited_ms >= _LOGGED_WAIT_MS:
                log.info("llm_call_waited", model=self.name, waited_ms=round(waited_ms))
            yield

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """The streamed response, collected (the run loop streams; this serves callers that do not)."""
        output: list[Any] = []
        async for event in self.stream_response(*args, **kwargs):
            if isinstance(event, ResponseCompletedEvent):
                output = list(event.response.output)
        return ModelResponse(output=output, usage=Usage(requests=1), response_id=None)

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
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        question, outputs = latest_question(items)
        searches = len(outputs)
        writer = ResponseWriter(self.name)
        yield writer.created()
        if searches == 0 and any(tool.name == TOOL_NAME for tool in tools):
            call = await self._first_search(
                (self._run.search_query if self._run is not None else "") or question,
                (system_instructions, items, model_settings, tools, output_schema, handoffs, tracing),
            )
            for event in writer.call(call):
                yield event
        else:
            answering = searches >= self._max_searches
            offered = [] if answering else tools
            echoes = EchoFilter(())
            if answering:
                framing = answer_prompt(question)
                system_instructions = framing.instructions
                found = list(self._run.passages.values()) if self._run is not None else []
                passages = focused(found, self.context_chars, await self._picks(question, found))
                searched = self._run is not None and self._run.searched
                items = answer_input(
                    items, passages, search_failed=bool(outputs) and not searched, prompt=framing
                )
                echoes = EchoFilter(
                    [*(p.heading for p in found), *shown_places(text for _, text in passages)],
                    (framing.request, f"{QUESTION_LABEL} {question}"),
                )
            gate = ProseGate([tool.name for tool in tools] or [TOOL_NAME], system_instructions or "")
            native: list[ResponseFunctionToolCall] = []
            async with self._endpoint_turn():
                async for event in self.inner.stream_response(
                    system_instructions,
                    items,
                    replace(model_settings, tool_choice=None),
                    offered,
                    output_schema,
                    handoffs,
                    tracing,
                    previous_response_id=None,
                    conversation_id=None,
                    prompt=prompt,
                ):
                    if event.type == "response.output_text.delta":
                        for out in writer.text(echoes.feed(gate.feed(event.delta))):
                            yield out
                    elif isinstance(event, ResponseCompletedEvent):
                        native = [item for item in event.response.output if item.type == "function_call"]
            result = gate.finish()
            for out in writer.text(echoes.feed(result.text) + echoes.finish()):
                yield out
            if result.dropped:
                log.info("llm_text_withheld", model=self.name, withheld=result.dropped[:300])
            if echoes.dropped:
                log.info("llm_echo_dropped", model=self.name, echoes=echoes.dropped[:5])
            call = _first_known_call(native, result.tool_call, offered)
            if call is not None:
                for out in writer.call(call):
                    yield out
        for event in writer.completed():
            yield event

    async def _picks(self, question: str, found: list[Passage]) -> list[Pick]:
        """The sentences the extractive answerer would answer with, best first: the answer turn
        shows their sections first (none without an answerer or passages)."""
        if self._extractive is None or not found:
            return []
        query = (self._run.search_query if self._run is not None else "") or question
        return await asyncio.to_thread(self._extractive.choose, query, found)

    async def _first_search(self, query: str, request: tuple[Any, ...]) -> ResponseFunctionToolCall:
        """The run's first retrieval call, searching for the resolved question: the agent's own,
        or with model_searches the model's, its query merged in (merged_query).

        `request` is what stream_response was given (instructions, input, settings, tools, schema,
        handoffs, tracing).
        """
        instructions, items, settings, tools, schema, handoffs, tracing = request
        arguments: dict[str, Any] = {}
        if self._model_searches and self._traits.named_tool_choice:
            try:
                async with self._endpoint_turn():
                    response = await self.inner.get_response(
                        instructions,
                        items,
                        replace(settings, tool_choice=TOOL_NAME),
                        tools,
                        schema,
                        handoffs,
                        tracing,
                        previous_response_id=None,
                        conversation_id=None,
                        prompt=None,
                    )
                arguments = _call_arguments(response.output, [tool.name for tool in tools])
            except APIStatusError as error:
                if error.status_code not in _TOOL_CHOICE_REJECTED:
                    raise
                if error.status_code in (400, 422):
                    self._traits.named_tool_choice = False
                log.warning("llm_tool_choice_rejected", model=self.name, http_status=error.status_code)
        arguments["query"] = merged_query(query, str(arguments.get("query") or ""))
        return function_call(TOOL_NAME, json.dumps(arguments, ensure_ascii=False))


def merged_query(resolved: str, model_query: str) -> str:
    """The resolved question, with the content words of the model's query it lacks added, when
    that query reads like one: at most MAX_MODEL_QUERY_WORDS words, MAX_ADDED_WORDS new content
    words, and no number the question lacks (a figure the model brings is an answer from memory)."""
    model, question = Analysis(" ".join(model_query.split())), Analysis(resolved)
    added = list(
        dict.fromkeys(w for w in model.words if is_content_word(w) and stem(w) not in question.term_set)
    )
    looks_like_a_query = (
        len(model.words) <= MAX_MODEL_QUERY_WORDS
        and len(added) <= MAX_ADDED_WORDS
        and model.numbers <= question.numbers
    )
    if not added or not looks_like_a_query:
        return resolved
    return " ".join([resolved, *added])[:MAX_QUERY_CHARS]


def _call_arguments(output: list[Any], tool_names: list[str]) -> dict[str, Any]:
    """Arguments of the first retrieval call in a response: native, or written as text."""
    for item in output:
        if getattr(item, "type", None) == "function_call" and item.name == TOOL_NAME:
            try:
                arguments = json.loads(item.arguments or "{}")
            except ValueError:
                return {}
            return arguments if isinstance(arguments, dict) else {}
    text = "".join(
        part.text
        for item in output
        if isinstance(item, ResponseOutputMessage)
        for part in item.content
        if getattr(part, "type", None) == "output_text"
    )
    call = parse_text_tool_call(text, tool_names)
    return dict(call.arguments) if call is not None and call.name == TOOL_NAME else {}


def focused(
    found: Iterable[Passage], budget: int = ANSWER_CONTEXT_CHARS, picks: Sequence[Pick] = ()
) -> list[tuple[int, str]]:
    """The passages as the model is shown them: each as its place in the book, then the section
    of it that holds its best sentence (and those of the answerer's other picks from it), as
    contiguous sentences around that one (at most a third of the budget, PASSAGE_CHARS at
    least), as a reader sees them (Markdown rendered, a list item closed by a period, a
    list under its lead-in), until `budget` characters are shown. The best sentence of a passage
    is the first of `picks` (the extractive answerer's choice: it ranks by what the question asks
    for, not by similarity alone) from it, else the one Search scored most similar to the
    question; the passages of `picks` come first, in their order, then the others, those whose
    best sentence scores highest first for the budget, in their numbers' order. Sentences about
    the text ("This tutorial covers ...") are left out, and so is a passage with none scored left.
    A passage Search scored no sentence of is code, mostly: it is shown as read (_as_read) after
    the scored ones, as the budget allows ("colcon build --packages-select" answers "How do I build
    just one package?" from Search's first hit, which the model was not shown); when no passage is
    scored (sparse mode, an older index) every passage stays whole. A small model copies what it is
    shown, and mostly from the first passage: isolated sentences lose what they are about ("Used
    for streaming data" without "Topics"), and `**Goal**:` and tutorial intros came back verbatim
    in its answers."""
    passages = sorted(found, key=lambda passage: passage.number)
    if not any(p.sentence_scores for p in passages):
        return [(p.number, p.text) for p in passages]
    chosen: dict[int, list[str]] = {}
    for pick in picks:
        chosen.setdefault(pick.number, []).append(pick.sentence)
    limit = min(max(PASSAGE_CHARS, budget // 3), budget)
    sections = {
        p.number: (
            _best_section(p, limit, chosen.get(p.number, []))
            if p.sentence_scores or p.number in chosen
            else (0.0, _as_read(p, limit))
        )
        for p in passages
    }
    first = [n for n in chosen if sections.get(n, (0.0, ""))[1]]
    rest = sorted((n for n in sections if n not in first), key=lambda n: -sections[n][0])
    shown: dict[int, str] = {}
    for number in [*first, *rest]:
        text = sections[number][1]
        if text and (not shown or sum(map(len, shown.values())) + len(text) <= budget):
            shown[number] = text
    return [(n, shown[n]) for n in first if n in shown] + sorted(
        (n, text) for n, text in shown.items() if n not in first
    )


def _best_section(passage: Passage, budget: int, anchors: Sequence[str] = ()) -> tuple[float, str]:
    """The passage's best score and `(place) sentences` of its best section (see focused), the place
    ending with the heading the section stands under in the chunk; "" when none is scored. The
    best sentence is the first shown as one of `anchors` (the answerer's picks from it) when there
    is one, else Search's best; the sections of the other anchors are shown with its own (an
    intro sentence and the list of modes under the next heading).
    Sentences about the text, and sections of them (learning objectives, exercises), are not
    shown: a small model quoted "Master the use of xacro" as what xacro does. A table's rows are
    shown as they read, each cell under its header (as the answerer quotes them)."""
    innermost = passage.heading.rsplit(" > ", 1)[-1]
    sentences = [
        s
        for s in sectioned_sentences(passage.text, for_answers=True)
        if not is_meta_sentence(_shown(passage, s)) and not is_meta_section(s.heading or innermost)
    ]
    scores = passage.sentence_scores
    scored = [i for i, s in enumerate(sentences) if (s.start, s.end) in scores]
    anchored = [i for i, s in enumerate(sentences) if _shown(passage, s) in anchors]
    if not scored and not anchored:
        return 0.0, ""
    best = (
        anchored[0] if anchored else max(scored, key=lambda i: scores[(sentences[i].start, sentences[i].end)])
    )
    headings = {sentences[i].heading for i in [best, *anchored]}
    section = [i for i, s in enumerate(sentences) if s.heading in headings]
    chosen, used = [best], len(_shown(passage, sentences[best]))
    before, after = best - 1, best + 1
    while before in section or after in section:
        for index in (after, before):
            if index in section and index not in chosen:
                size = len(_shown(passage, sentences[index]))
                if used + size <= budget:
                    chosen.append(index)
                    used += size
        before, after = before - 1, after + 1
    pieces, lead_in = [], ""
    for index in sorted(chosen):
        sentence = sentences[index]
        label = sentence.label if sentence.label != sentences[best].heading else ""
        if label and label != lead_in:
            pieces.append(f"{label}:")
        lead_in = label
        pieces.append(_shown(passage, sentence))
    place = passage.heading
    heading = sentences[best].heading
    if heading and not place.endswith(heading):
        place = f"{place} > {heading}"
    return scores.get((sentences[best].start, sentences[best].end), 0.0), f"({place}) " + " ".join(pieces)


def _as_read(passage: Passage, budget: int) -> str:
    """`(place) text` of a passage without a scored sentence, on one line as a reader reads it:
    code as written (a comment is no heading), prose without its markup, headings left to the
    place; whole lines, as many as `budget` characters hold."""
    raw = passage.text.splitlines()
    lines, used = [], 0
    for line, kind in zip(raw, line_kinds(raw), strict=True):
        if kind in (UnitKind.HEADING, UnitKind.MARKUP):
            continue
        shown = " ".join(line.split()) if kind == UnitKind.CODE else display_text(line)
        if not shown:
            continue
        if used + len(shown) > budget:
            break
        lines.append(shown)
        used += len(shown) + 1
    return f"({passage.heading}) " + " ".join(lines) if lines else ""


def _shown(passage: Passage, sentence: ProseSentence) -> str:
    return shown_sentence(sentence.reading or passage.text[sentence.start : sentence.end])


def _first_known_call(
    native: list[ResponseFunctionToolCall], written: Any, offered: list[Tool]
) -> ResponseFunctionToolCall | None:
    """The call to run next, if the model made one of an offered tool (natively or as text)."""
    names = {tool.name for tool in offered}
    for call in native:
        if call.name in names:
            return function_call(call.name, call.arguments or "{}")
    if written is not None and written.name in names:
        return function_call(written.name, json.dumps(written.arguments, ensure_ascii=False))
    return None
