"""The agent's only knowledge tool: RetrievalService.Search over gRPC, as `retrieval_tool`.

The model sees one argument, the query (`retrieval_tool_with_section` adds a section filter, for
models strong enough not to invent section names); the request's top_k and min_relevance apply.

Everything a call needs or produces lives in the run's AskContext: the stub, the collection and
defaults of the request, the absolute deadline every Search must finish by, and what was found so
far. Sources are numbered 1.. across all calls of a run and deduplicated by chunk_id, so a number
the model cites names exactly one retrieved chunk; each is kept as a Passage (passages.py), which
the answerers read, and the model gets a rendering of them. A chunk cut among the blocks a
lead-in in it announces ("four permission modes:" above "### Mode 1"), or ending with a count
of what follows ("a three-phase strategy" above "## Phase 1"), brings the first chunk of each of
the section's later blocks with it (one more Search, filtered by document and section); so does a
chunk whose parent heading counts its sections ("The 5-Step Safety Pattern"), for all of them. A
failed Search is not an exception: the model is told in words, the client gets a ToolError event. Until
a search of the run has found anything, a failure that no rewording can fix ends the run with its
status instead (fail closed): a missing collection is NOT_FOUND, retrieval down or overloaded
UNAVAILABLE, the request's deadline passed DEADLINE_EXCEEDED. A reader never gets "I cannot
search the book" as a successful answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import grpc
from agents import ModelBehaviorError, RunContextWrapper, function_tool
from agents.tool_context import ToolContext

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.agent.events import AgentEvent, RetrievalResults, ToolError, ToolStep
from services.agent.passages import Passage, render
from services.agent.sessions.model import Source
from services.common.contract_limits import DEFAULT_TOP_K, MAX_EXTRACT_CHARS, MAX_QUERY_CHARS
from services.common.errors import DeadlineExceeded, GlossatorError, Reason, Unavailable, collection_not_found
from services.common.text.prose import blocks_run_on, inner_sections, sections_counted
from services.common.text.words import heading_count

TOOL_NAME = "retrieval_tool"
# Below this much time left, a Search cannot usefully run: fail fast instead of timing out.
MIN_CALL_SECONDS = 0.05
# Chunks cut among the blocks they announce that a search looks past (one more Search each), the
# blocks it keeps (a lead-in's list is quoted up to Weights.max_list_items), and the chunks of the
# section it reads to find the first of each block (a section of 19 chunks holds three phases).
MAX_BLOCK_SEARCHES = 2
MAX_BLOCKS = 8
MAX_BLOCK_CHUNKS = 20
# Tool outputs are kept this long in the session history.
MAX_RECORDED_OUTPUT_CHARS = 2000


# A Search request and the response it got.
Prefetched = tuple[retrieval_pb2.SearchRequest, retrieval_pb2.SearchResponse]


def _discard(_event: AgentEvent) -> None:
    return None


@dataclass
class AskContext:
    """Per-request state of one run, shared by the tool calls the model makes.

    `deadline` is a time.monotonic() instant: each Search gets the time left until then (at most
    `call_timeout_s`) as its gRPC timeout. `emit` receives RetrievalResults and ToolError events as
    calls finish.
    """

    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    deadline: float
    collection: str = "default"
    # The question resolved against the conversation and the reader's selection (search_query.py):
    # what the run's first search looks for.
    search_query: str = ""
    top_k: int = DEFAULT_TOP_K
    min_relevance: float | None = None
    call_timeout_s: float = 10.0
    emit: Callable[[AgentEvent], None] = _discard
    # A search already made (the response cache's key is made of it): the run's first search
    # asking exactly the same uses its response instead of searching again.
    prefetched: Prefetched | None = None
    sources: list[Source] = field(default_factory=list)
    # Every retrieved chunk whole, by source number, with Search's sentence scores: what the
    # answerers read and an answer is validated against (sources keep an excerpt).
    passages: dict[int, Passage] = field(default_factory=dict, repr=False)
    # Whether a search of the run succeeded (even one that found nothing).
    searched: bool = False
    steps: list[ToolStep] = field(default_factory=list)
    retrieval_ms: float = 0.0
    _number_of: dict[str, int] = field(default_factory=dict, repr=False)

    def source(self, index: int) -> Source | None:
        """The retrieved source numbered `index`, if there is one."""
        return self.sources[index - 1] if 1 <= index <= len(self.sources) else None

    def is_known(self, index: int) -> bool:
        return 1 <= index <= len(self.sources)

    def number(self, scored: common_pb2.ScoredChunk, *, continues: bool = False) -> int:
        """The chunk's source number, assigning the next one the first time it is retrieved
        (`continues`: fetched for the blocks another chunk announces, see Passage.continues)."""
        chunk = scored.chunk
        if chunk.chunk_id not in self._number_of:
            number = len(self.sources) + 1
            self._number_of[chunk.chunk_id] = number
            self.sources.append(source_of(number, scored))
            self.passages[number] = Passage.of(number, scored, continues=continues)
        return self._number_of[chunk.chunk_id]

    def take_prefetched(self, request: retrieval_pb2.SearchRequest) -> retrieval_pb2.SearchResponse | None:
        """The prefetched response when `request` is the request it answered (once per run)."""
        found, self.prefetched = self.prefetched, None
        return found[1] if found is not None and found[0] == request else None

    def record(self, context: ToolContext[AskContext], started: float, output: str, error: str = "") -> None:
        """Keeps the step and tells the client about a failure."""
        duration_ms = (time.perf_counter() - started) * 1000
        self.retrieval_ms += duration_ms
        self.steps.append(
            ToolStep(
                name=context.tool_name,
                call_id=context.tool_call_id,
                arguments=context.tool_arguments,
                duration_ms=duration_ms,
                error=error,
                output=output[:MAX_RECORDED_OUTPUT_CHARS],
            )
        )
        if error:
            self.emit(ToolError(name=context.tool_name, call_id=context.tool_call_id, message=error))


def source_of(index: int, scored: common_pb2.ScoredChunk) -> Source:
    chunk = scored.chunk
    return Source(
        index=index,
        chunk_id=chunk.chunk_id,
        source_url=chunk.source_url,
        section_title=chunk.section_title,
        section_path=list(chunk.section_path),
        chunk_index=chunk.chunk_index,
        relevance_score=scored.relevance,
        extracted_text=chunk.text[:MAX_EXTRACT_CHARS],
        title=chunk.title,
        document_id=chunk.document_id,
    )


FAILURE_PREFIX = "retrieval failed:"


def failure_message(reason: str) -> str:
    """What the model is told when a search failed: the failure, and what to answer."""
    return f"{failure_report(reason)}; answer that you cannot search the book right now"


def failure_report(reason: str) -> str:
    """What the client is told (a ToolError event): the failure alone, no instruction to the model."""
    return f"{FAILURE_PREFIX} {reason}"


def _bad_arguments(context: RunContextWrapper[AskContext], error: Exception) -> str:
    """Malformed arguments from the model are its mistake to fix, not a crash; anything else is a bug."""
    if not isinstance(error, ModelBehaviorError) or not isinstance(context, ToolContext):
        raise error
    problem = f"invalid arguments for {TOOL_NAME} ({error})"
    message = f'{problem}; call it again with a JSON object such as {{"query": "..."}}'
    context.context.record(context, time.perf_counter(), message, error=problem)
    return message


@function_tool(name_override=TOOL_NAME, failure_error_function=_bad_arguments)
async def retrieval_tool(context: ToolContext[AskContext], query: str) -> str:
    """Search the book for the passages most relevant to a query. Cite them by their [n] numbers.

    Args:
        query: What to look for: the question, or a few keywords from it.
    """
    return await search(context, query)


@function_tool(name_override=TOOL_NAME, failure_error_function=_bad_arguments)
async def retrieval_tool_with_section(
    context: ToolContext[AskContext], query: str, section: str | None = None
) -> str:
    """Search the book for the passages most relevant to a query. Cite them by their [n] numbers.

    Args:
        query: What to look for: the question, or a few keywords from it.
        section: Only search sections whose heading path contains this heading (a chapter or section title the reader named); null for the whole book.
    """
    return await search(context, query, section)


async def search(context: ToolContext[AskContext], query: str, section: str | None = None) -> str:
    """Runs Search for the tool and numbers what it found; failures come back as words for the model.

    A section filter that matches nothing is dropped and the search run again: small models invent
    section names, and an empty result would leave them nothing to answer from.
    """
    state = context.context
    started = time.perf_counter()
    remaining = state.deadline - time.monotonic()
    if remaining < MIN_CALL_SECONDS:
        reason = "the request's deadline has passed"
        message = failure_message(reason)
        state.record(context, started, message, error=failure_report(reason))
        if not state.searched:
            raise DeadlineExceeded("the request's deadline passed before the book could be searched")
        return message
    request = retrieval_pb2.SearchRequest(
        collection=state.collection, query=query.strip()[:MAX_QUERY_CHARS], top_k=state.top_k
    )
    if state.min_relevance is not None:
        request.min_relevance = state.min_relevance
    if section and section.strip():
        request.filters["section"] = section.strip()
    try:
        response = state.take_prefetched(request) or await state.retrieval.Search(
            request, timeout=min(state.call_timeout_s, remaining)
        )
        if not response.results and request.filters:
            request.ClearField("filters")
            remaining = state.deadline - time.monotonic()
            response = await state.retrieval.Search(request, timeout=min(state.call_timeout_s, remaining))
    except grpc.aio.AioRpcError as error:
        reason = f"{error.code().name}: {error.details() or 'no details'}"
        message = failure_message(reason)
        state.record(context, started, message, error=failure_report(reason))
        fatal = None if state.searched else _run_stopping(error, state)
        if fatal is not None:
            raise fatal from error
        return message
    blocks = await _blocks_after(state, request, response.results)
    found = [*response.results, *blocks]
    continued = {block.chunk.chunk_id for block in blocks}
    numbers = [state.number(scored, continues=scored.chunk.chunk_id in continued) for scored in found]
    output = render(state.passages[number] for number in numbers)
    state.searched = True
    state.record(context, started, output)
    state.emit(RetrievalResults(call_id=context.tool_call_id, chunks=found, metadata=response.metadata))
    return output


async def _blocks_after(
    state: AskContext, request: retrieval_pb2.SearchRequest, results: Sequence[common_pb2.ScoredChunk]
) -> list[common_pb2.ScoredChunk]:
    """The chunks that go on with blocks a found chunk announces and is cut after ("Claude Agent
    SDK offers four permission modes:" above "### Mode 1: default", the other modes in the chunks
    after it; "... a three-phase strategy ..." above "## Phase 1: ..."), or with the sibling
    sections its parent heading counts ("## The 5-Step Safety Pattern" above "### Step 1: Ask" to
    "### Step 5: Execute"): one more Search, within its document and section, for the first chunk
    of each of those subsections. Blocks a count announces are taken when there are as many (a
    paragraph ending "... at ten hertz." announces no ten sections). Best effort: a failed or late
    search adds nothing."""
    found: list[common_pb2.ScoredChunk] = []
    known = {scored.chunk.chunk_id for scored in results}
    for scored, blocks in islice(_running_on(results), MAX_BLOCK_SEARCHES):
        remaining = state.deadline - time.monotonic()
        if remaining < MIN_CALL_SECONDS:
            break
        follow = retrieval_pb2.SearchRequest(
            collection=request.collection, query=request.query, top_k=MAX_BLOCK_CHUNKS, min_relevance=0.0
        )
        follow.filters["document_id"] = scored.chunk.document_id
        follow.filters["section"] = blocks.section[-1]
        try:
            reply = await state.retrieval.Search(follow, timeout=min(state.call_timeout_s, remaining))
        except grpc.aio.AioRpcError:
            continue
        new = [block for block in blocks.firsts(reply.results) if block.chunk.chunk_id not in known]
        known.update(block.chunk.chunk_id for block in new)
        found += new
    return found


@dataclass(frozen=True)
class _Blocks:
    """The blocks a found chunk leads to: the subsections one level under the heading path
    `section`, those after chunk `after` in its document, and how many it counts (0: as many as
    there are)."""

    section: tuple[str, ...]
    after: int
    counted: int

    def firsts(self, found: Sequence[common_pb2.ScoredChunk]) -> list[common_pb2.ScoredChunk]:
        """Of the section's chunks, the first of each of its subsections, in document order, until
        as many as counted. Counting sibling sections (`after` -1), the section's own first chunk
        comes first with the subsections it opens inside it (services.common.text.prose.
        inner_sections: a first subsection often has too little text for a chunk of its own)."""
        seen: set[tuple[str, ...]] = set()
        firsts = []
        sections = 0
        for block in sorted(found, key=lambda r: r.chunk.chunk_index):
            path = tuple(block.chunk.section_path)
            if path in seen or sections >= (self.counted or MAX_BLOCKS):
                continue
            if path[:-1] == self.section and block.chunk.chunk_index > self.after:
                sections += 1
            elif self.after < 0 and path == self.section and (inside := inner_sections(block.chunk.text)):
                sections += len(inside)
            else:
                continue
            seen.add(path)
            firsts.append(block)
        return firsts if sections >= self.counted else []


def _running_on(
    results: Sequence[common_pb2.ScoredChunk],
) -> Iterator[tuple[common_pb2.ScoredChunk, _Blocks]]:
    """The found chunks whose blocks go on outside them: a lead-in's blocks or a counted set of
    sections after the chunk (its last paragraph counts them), or the sibling sections its
    parent heading counts ("### Step 3: Understand" under "## The 5-Step Safety Pattern"), those
    once for all the siblings found: one search brings them all."""
    counted_parents: set[tuple[str, tuple[str, ...]]] = set()
    for scored in results:
        chunk = scored.chunk
        path = tuple(chunk.section_path)
        if chunk.chunk_index + 1 < chunk.total_chunks and chunk.section_title:
            if blocks_run_on(chunk.text):
                yield scored, _Blocks(path, chunk.chunk_index, 0)
                continue
            if counted := sections_counted(chunk.text):
                yield scored, _Blocks(path, chunk.chunk_index, counted)
                continue
        parent = (chunk.document_id, path[:-1])
        if len(path) >= 2 and parent not in counted_parents and (counted := heading_count(path[-2])):
            counted_parents.add(parent)
            yield scored, _Blocks(path[:-1], -1, counted)


# Search failures the model can do something about (its own bad arguments); every other one ends
# a run that has found nothing yet.
_MODELS_TO_FIX = frozenset({grpc.StatusCode.INVALID_ARGUMENT})


def _run_stopping(error: grpc.aio.AioRpcError, state: AskContext) -> GlossatorError | None:
    """The status a failed Search ends the run with, or None when the model should be told instead."""
    code = error.code()
    if code in _MODELS_TO_FIX:
        return None
    if code == grpc.StatusCode.NOT_FOUND:
        return collection_not_found(state.collection, "; ingest documents into it first")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED and state.deadline - time.monotonic() < MIN_CALL_SECONDS:
        return DeadlineExceeded("the request's deadline passed while the book was being searched")
    return Unavailable(
        f"the retrieval service could not search the book ({code.name})",
        reason=Reason.DEPENDENCY_UNAVAILABLE,
        metadata={"service": "retrieval"},
    )
