"""Domain events of one answer run, in the order a client sees them.

They mirror the glossator.v1 AskStreamResponse events one for one, so the servicer only translates;
`started`, `validation` and `completed` are the servicer's own and are not produced here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from glossator.v1 import common_pb2
from services.agent.sessions.model import Source


@dataclass(frozen=True, kw_only=True)
class ToolStep:
    """One tool call as it ran: what the model asked for, how long it took, what it got back."""

    name: str
    call_id: str
    arguments: str
    duration_ms: float
    # Empty on success; the readable message the model saw otherwise.
    error: str = ""
    # What the tool returned to the model, for the session history.
    output: str = ""


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """The model asked for a tool; emitted before the tool runs."""

    name: str
    call_id: str
    arguments: str


@dataclass(frozen=True, kw_only=True)
class ToolError:
    """A tool call failed; the model saw the same message and the run goes on."""

    name: str
    call_id: str
    message: str


@dataclass(frozen=True, kw_only=True)
class RetrievalResults:
    """What one retrieval_tool call returned, exactly as the retrieval service ranked it."""

    call_id: str
    chunks: list[common_pb2.ScoredChunk]
    metadata: common_pb2.SearchMetadata


@dataclass(frozen=True, kw_only=True)
class AnswerDelta:
    """A piece of the answer text; markers pointing at no retrieved source are already removed."""

    text: str


@dataclass(frozen=True, kw_only=True)
class Citation:
    """The answer cited source [index] for the first time."""

    index: int
    source: Source


@dataclass(frozen=True, kw_only=True)
class AnswerFinished:
    """The last event of a run: the answer as it stands, with what it rests on.

    `answer` is authoritative: it is capped on a sentence boundary, so it can end before the last
    streamed delta did. `cited` keeps the [n] numbering of the text; `sources` lists everything
    retrieved. `not_covered` is true when the answer cites nothing or is the extractive decline
    (which cites the sections nearby). `answer` may be empty when the model wrote nothing but
    withheld text.
    """

    answer: str
    cited: list[Source]
    sources: list[Source]
    steps: list[ToolStep]
    model: str
    generation_ms: float
    retrieval_ms: float
    not_covered: bool
    # The model's text ran past max_answer_chars and was cut.
    truncated: bool = False
    # The whole text of each retrieved chunk by chunk_id (sources carry an excerpt).
    chunk_texts: Mapping[str, str] = field(default_factory=dict)
    # The question resolved against the conversation and the reader's selection (what the run
    # searched for): what the answer is validated as an answer to.
    search_query: str = ""
    # The extractive answer from the same passages (offline-extractive), computed when asked for.
    fallback: Callable[[], Awaitable[str]] | None = None
    # What the question asks about that no retrieved passage mentions (a name, or a word the
    # embedding model's vocabulary lacks), found when asked for: a model that declines to answer
    # it is believed.
    unmentioned: Callable[[], Sequence[str]] = field(default=lambda: ())


AgentEvent = ToolCall | ToolError | RetrievalResults | AnswerDelta | Citation | AnswerFinished
