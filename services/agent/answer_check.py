"""What is delivered once the model has answered: cited, validated, and grounded or flagged.

Small models cite nothing, answer from memory, or decline questions the book does answer; a
reader must never get any of that as a checked answer. In order:
1. the answer is validated against everything retrieved (no sources: nothing can support it);
2. the extractive answerer reads the same passages as a judge of whether they answer the question
   at all: a refusal ("the book does not cover this") is grounded only when they do not, and an
   answer (even one quoting them) only when they do; an answer giving a reader's highlight back
   when they asked for it in other words is not grounded when the judge's answer says more;
3. an answer to deliver whose supported sentences carry no marker gets one after each, naming the
   source the validator found supporting it; a marker naming a source that does not support its
   sentence is re-pointed to one that does (else the answer is not grounded: the reader follows
   the marker); the marked answer is validated again (and delivered as written when its markers
   would unground an answer that stood without them); an answer the validator finds grounded but
   not an answer (it never addresses what the question asks about:
   ValidateResponse.answers_question) counts as not grounded below; under `enforce`, a grounded
   answer to a question asking for several things that names fewer than half the items of the
   list the judge answers with (incomplete) is replaced by that list when the list is grounded;
4. an answer not grounded because some of its sentences are unsupported is, under `enforce`,
   replaced by the rest of it (trimmed: the model's own words, still its model's answer) when
   that part keeps the first sentence and stands through steps 1-3 on its own;
5. any other answer not grounded is, under `enforce`, replaced by the extractive answer (labelled
   offline-extractive, or its decline when the passages do not answer) when that one is
   grounded, else by a statement that the book does not support an answer (delivered with the
   verdict of the answer it replaces); under `annotate` it is delivered with its verdict, flagged
   not grounded.
So an answer is validated once, twice (once more when markers were added or re-pointed, or for
its stand-in), or up to five times (re-pointed markers that did not ground it, its supported part
with its markers, then its stand-in).
An empty answer (the model wrote only withheld text) is replaced the same way under any policy.
A replacement is never silent: its reason (empty, not_grounded, off_topic, wrong_refusal, echo,
incomplete, not_an_answer, trimmed) leads the note it is delivered with, the log line `answer_replaced` and the counter
glossator_answers_replaced_total{reason}. A model that is slow or cut off is not a reason: that
run fails with its status (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNAVAILABLE) before this check.
Under `enforce` an answer that cannot be validated at all (the validation service is down or too
slow) is withheld: the call ends UNAVAILABLE (reason ANSWER_VOID: discard what was streamed).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import grpc

from glossator.v1 import common_pb2, validation_pb2, validation_pb2_grpc
from services.agent.citations import MARKER_RE, marker_indexes
from services.agent.events import AnswerFinished
from services.agent.extractive import is_decline, listed_items
from services.agent.models import OFFLINE_MODEL_NAME
from services.agent.sessions import Grounding, Source
from services.common.errors import Reason, Unavailable
from services.common.logging import get_logger
from services.common.metrics import ANSWERS_REPLACED, observe_stage
from services.common.text.prose import REFERS_BACK_RE
from services.common.text.question import understand
from services.common.text.repeats import repeats
from services.common.text.units import LIST_BULLET_RE, sentence_spans
from services.common.text.words import Analysis

log = get_logger("glossator.answer_check")

# Worded as a refusal ("the book does not answer"), so that it validates as one.
NOT_SUPPORTED_ANSWER = (
    "The book does not answer this question verifiably: the draft answer could not be checked "
    "against the retrieved text, so it was withheld."
)
WRONG_REFUSAL_NOTE = "the answer declines, but the retrieved passages answer the question"
OFF_TOPIC_NOTE = "none of the retrieved passages answers the question, so neither can the answer"
ECHO_NOTE = "the reader asked for other words, and the answer gives their highlight back"
INCOMPLETE_NOTE = (
    "the question asks for several things, and the answer names fewer than half the items the passages list"
)
NOT_AN_ANSWER_REASON = "grounded, but it does not address what the question asks about"
REPOINTED_NOTE = "citation markers were re-pointed to the sources that support their sentences"

Policy = Literal["annotate", "enforce", "off"]
# A validation call's timeout: the time left until the deadline, at most the validation timeout.
Timeout = Callable[[], float]


@dataclass(frozen=True, kw_only=True)
class Validated:
    status: str  # validated | replaced | unavailable | skipped
    verdict: validation_pb2.ValidateResponse | None
    validation_ms: float

    def summary(self) -> Grounding:
        """The verdict in brief, as responses carry it and turns keep it."""
        verdict = self.verdict
        if verdict is None:
            return Grounding(status=self.status)
        return Grounding(
            status=self.status,
            is_grounded=verdict.is_grounded,
            grounding_score=verdict.grounding_score,
            claims=len(verdict.claims),
            supported_claims=sum(1 for claim in verdict.claims if claim.supported),
            citations_found=verdict.citations_found,
            citations_valid=verdict.citations_valid,
            answers_question=verdict.answers_question,
        )


@dataclass(frozen=True, kw_only=True)
class Checked:
    """The answer to deliver, its verdict, who wrote it, and the sources it cites."""

    answer: str
    validated: Validated
    model: str
    cited: list[Source]
    # Cited here for the first time (markers added, or a replacement's): clients get Citation events.
    new_citations: list[int]
    not_covered: bool


class AnswerChecker:
    """Applies the steps of the module docstring with the validation service."""

    def __init__(
        self,
        validation: validation_pb2_grpc.ValidationServiceStub,
        policy: Policy,
        timeout: Timeout,
        highlight: str = "",
    ) -> None:
        """`highlight`: the reader's selection when they ask for it in other words."""
        self._validation = validation
        self._policy = policy
        self._timeout = timeout
        self._highlight = highlight

    async def check(self, query: str, finished: AnswerFinished) -> Checked:
        started = time.perf_counter()
        streamed_citations = set(marker_indexes(finished.answer))
        if self._policy == "off":
            if not finished.answer:
                raise Unavailable(f"the model {finished.model!r} returned an empty answer")
            validated = Validated(status="skipped", verdict=None, validation_ms=0.0)
            return self._checked(finished, finished.answer, validated, finished.model, streamed_citations)
        answer, verdict = finished.answer, None
        if answer:
            verdict = await self._validate(query, answer, finished)
            if verdict is None:
                if self._policy == "enforce":
                    raise Unavailable(
                        "the answer could not be validated (the validation service did not answer), "
                        "so it is withheld; any text streamed is void",
                        reason=Reason.ANSWER_VOID,
                        metadata={"cause": "UNAVAILABLE", "service": "validation"},
                    )
                validated = Validated(status="unavailable", verdict=None, validation_ms=_ms(started))
                return self._checked(finished, answer, validated, finished.model, streamed_citations)
            verdict = await _judged_against_the_passages(verdict, finished, answer, self._highlight)
            if stands(verdict) or self._policy == "annotate" or only_citations_wrong(verdict):
                answer, verdict = await self._cited(query, answer, verdict, finished)
            if stands(verdict) and self._policy == "enforce" and await _incomplete(query, answer, finished):
                listed, listed_verdict = await self._replacement(query, finished)
                if listed_verdict is not None:
                    return self._replaced(
                        finished, listed, listed_verdict, "incomplete", verdict, started, streamed_citations
                    )
            if stands(verdict) or self._policy == "annotate":
                validated = Validated(status="validated", verdict=verdict, validation_ms=_ms(started))
                return self._checked(finished, answer, validated, finished.model, streamed_citations)
        reason = replacement_reason(verdict)
        if reason == "not_grounded" and self._policy == "enforce" and verdict is not None:
            part, part_verdict = await self._supported_part(query, answer, verdict, finished)
            if part_verdict is not None:
                return self._replaced(
                    finished,
                    part,
                    part_verdict,
                    "trimmed",
                    verdict,
                    started,
                    streamed_citations,
                    finished.model,
                )
        replacement, replaced_verdict = await self._replacement(query, finished)
        return self._replaced(
            finished, replacement, replaced_verdict, reason, verdict, started, streamed_citations
        )

    def _replaced(
        self,
        finished: AnswerFinished,
        replacement: str,
        replaced_verdict: validation_pb2.ValidateResponse | None,
        reason: str,
        verdict: validation_pb2.ValidateResponse | None,
        started: float,
        streamed_citations: set[int],
        model: str = OFFLINE_MODEL_NAME,
    ) -> Checked:
        """The replacement delivered (written by `model`), its reason in its notes, the log and the
        counter."""
        note = _replaced_note(finished.model, reason, verdict)
        ANSWERS_REPLACED.labels(reason=reason).inc()
        log.info(
            "answer_replaced", model=finished.model, reason=reason, note=note, answer=finished.answer[:300]
        )
        delivered = replaced_verdict or verdict
        if delivered is not None:
            delivered.notes.append(note)
        validated = Validated(status="replaced", verdict=delivered, validation_ms=_ms(started))
        return self._checked(finished, replacement, validated, model, streamed_citations)

    async def _supported_part(
        self,
        query: str,
        answer: str,
        verdict: validation_pb2.ValidateResponse,
        finished: AnswerFinished,
    ) -> tuple[str, validation_pb2.ValidateResponse | None]:
        """The answer without its unsupported sentences (supported_part), with its verdict when
        that part stands on its own as an answer would (validated, judged against the passages,
        its markers re-pointed, not too few of a list's items); else no verdict. A capable model
        paraphrases, and one sentence the checker cannot match (a reworded clause, or a fact the
        book lacks) used to cost the whole answer, the right sentences with it."""
        part = supported_part(answer, verdict)
        if not part:
            return "", None
        part_verdict = await self._validate(query, part, finished)
        if part_verdict is None:
            return "", None
        part_verdict = await _judged_against_the_passages(part_verdict, finished, part, self._highlight)
        if stands(part_verdict) or only_citations_wrong(part_verdict):
            part, part_verdict = await self._cited(query, part, part_verdict, finished)
        if not stands(part_verdict) or await _incomplete(query, part, finished):
            return "", None
        return part, part_verdict

    async def _cited(
        self, query: str, answer: str, verdict: validation_pb2.ValidateResponse, finished: AnswerFinished
    ) -> tuple[str, validation_pb2.ValidateResponse]:
        """The answer with its supported claims cited (cite_supported), and its verdict, judged as
        the first one was (the judge's answer is computed once per run). Markers never undo an
        answer that stood without them: a marker added after a clause ends its sentence's claim
        there ("Each event has: event [1]: Event type ...", the clause's best chunk named for the
        whole), and the answer as written is delivered instead, its claims uncited as they were."""
        marked = cite_supported(answer, verdict)
        if marked == answer:
            return answer, verdict
        remarked = await self._validate(query, marked, finished)
        if remarked is None:
            return answer, verdict
        if only_citations_wrong(verdict):
            remarked.notes.append(REPOINTED_NOTE)
        judged = await _judged_against_the_passages(remarked, finished, marked, self._highlight)
        if stands(verdict) and not stands(judged):
            return answer, verdict
        return marked, judged

    async def _replacement(
        self, query: str, finished: AnswerFinished
    ) -> tuple[str, validation_pb2.ValidateResponse | None]:
        """The extractive answer (or its decline) with its verdict when it is grounded, else the
        withheld-answer statement with none (it states nothing about the book to check). Its
        markers are re-pointed as the offline model's own answer's are: a list's label holding a
        colon ("Three Requirements for Vertical Success: All Three, or None [6]:") is read as two
        claims, the second under a marker of the item after it, and the offline answer that stood
        on its own path was withheld on this one."""
        fallback = await finished.fallback() if finished.fallback is not None else ""
        if fallback:
            verdict = await self._validate(query, fallback, finished)
            if verdict is not None and only_citations_wrong(verdict):
                fallback, verdict = await self._cited(query, fallback, verdict, finished)
            if verdict is not None and stands(verdict):
                return fallback, verdict
        return NOT_SUPPORTED_ANSWER, None

    async def _validate(
        self, query: str, answer: str, finished: AnswerFinished
    ) -> validation_pb2.ValidateResponse | None:
        """The verdict on `answer` against every chunk the run retrieved, whole."""
        context = [context_chunk(source, finished.chunk_texts) for source in finished.sources]
        request = validation_pb2.ValidateRequest(query=query, response=answer, context=context)
        try:
            with observe_stage("validation"):
                return await self._validation.Validate(request, timeout=self._timeout())
        except grpc.aio.AioRpcError as error:
            log.warning("validation_unavailable", code=error.code().name, details=error.details())
            return None

    @staticmethod
    def _checked(
        finished: AnswerFinished, answer: str, validated: Validated, model: str, streamed: set[int]
    ) -> Checked:
        numbers = [n for n in marker_indexes(answer) if 1 <= n <= len(finished.sources)]
        verdict = validated.verdict
        refusal = verdict.is_refusal if verdict is not None else False
        return Checked(
            answer=answer,
            validated=validated,
            model=model,
            cited=[finished.sources[n - 1] for n in sorted(numbers)],
            new_citations=[n for n in numbers if n not in streamed],
            # A decline cites the sections nearby: it is still a decline.
            not_covered=refusal or _declines(answer) or not finished.sources,
        )


def stands(verdict: validation_pb2.ValidateResponse) -> bool:
    """Grounded, and an answer to the question (or a refusal, which answers nothing by design)."""
    return verdict.is_grounded and (verdict.answers_question or verdict.is_refusal)


def cite_supported(answer: str, verdict: validation_pb2.ValidateResponse) -> str:
    """The answer with every supported claim cited by a chunk that supports it.

    A supported claim citing nothing gets `[n]` after it, n its best chunk. A supported claim
    whose markers name a chunk that does not support it has them re-pointed: the markers that do
    support it are kept, the others dropped, and when none is left its best chunk is cited. Small
    models write the marker before the sentence it cites ("[1] ROS 2 uses DDS. [2] Nodes ..."), so
    every marker within a line lands on the sentence before (one opening a line is read as citing
    the sentences after it on that line: services/validation/claims.py). An unsupported claim
    keeps its markers as written: a marker cannot make it true, and a wrong one keeps the answer
    ungrounded."""
    markers = [(m.start(2) - 1, m.end()) for m in MARKER_RE.finditer(answer)]
    edits: list[tuple[int, int, str]] = []
    for claim in verdict.claims:
        if not claim.supported or claim.best_chunk_index < 0:
            continue
        supporting = {claim.best_chunk_index, *claim.supporting_chunk_indexes}
        cited = list(dict.fromkeys(claim.citations))
        kept = [n for n in cited if n - 1 in supporting]
        if cited and kept == cited:
            continue
        own = [(start, end) for start, end in markers if claim.start <= start < claim.end]
        edits += [_unmarked(answer, start, end) for start, end in own]
        numbers = kept or [claim.best_chunk_index + 1]
        edits.append((claim.end, claim.end, f" [{', '.join(str(n) for n in numbers)}]"))
    for start, end, text in sorted(edits, reverse=True):
        answer = answer[:start] + text + answer[end:]
    return answer


def supported_part(answer: str, verdict: validation_pb2.ValidateResponse) -> str:
    """The answer without the sentences (or list lines) holding an unsupported claim, and without
    a sentence leaning on a sentence left out just before it ("This will cancel the running Job"
    after the wrong "use the Replace option"); "" when nothing is left out, or when its first
    sentence is: the first sentence is the model's answer, and what follows leans on it ("It also
    provides built-in models for testing" says nothing once "Gazebo is used because it is faster
    than Unity" is gone)."""
    unsupported = [(claim.start, claim.end) for claim in verdict.claims if not claim.supported]
    spans = sentence_spans(answer)
    dropped: list[tuple[int, int]] = []
    previous_dropped = False
    for start, end in spans:
        unsupported_here = any(start < e and s < end for s, e in unsupported)
        previous_dropped = unsupported_here or (previous_dropped and _leans_on(answer[start:end]))
        if previous_dropped:
            dropped.append((start, end))
    if not dropped or dropped[0] == spans[0] or len(dropped) == len(spans):
        return ""
    for start, end in reversed(dropped):
        # A sentence's span runs on to the marker opening the next line ("... eats.\n\n[2]"): that
        # marker cites the next line's sentences, and the line break stays.
        if (line_break := answer.find("\n", start, end)) >= 0:
            end = line_break
        line_start = answer.rfind("\n", 0, start) + 1
        line_end = answer.find("\n", end)
        line_end = len(answer) if line_end < 0 else line_end
        before = LIST_BULLET_RE.sub("", MARKER_RE.sub("", answer[line_start:start])).strip()
        if not (before + answer[end:line_end].strip()):
            answer = answer[:line_start] + answer[line_end + 1 :]  # the sentence was its line
        elif answer[end:line_end].strip():
            answer = answer[:start] + answer[end:].lstrip(" \t")
        else:
            answer = answer[:start].rstrip(" \t") + answer[end:]
    return _BLANK_LINES_RE.sub("\n\n", answer).strip()


def _leans_on(sentence: str) -> bool:
    """Whether a sentence needs the one before it: it refers back to it ("This will ...") or goes
    on from it ("Instead, ...", "For example, ...")."""
    opening = MARKER_RE.sub("", sentence).lstrip()
    return bool(REFERS_BACK_RE.match(opening) or _GOES_ON_RE.match(opening))


# A sentence opening that goes on from the sentence before.
_GOES_ON_RE = re.compile(
    r"(?:instead|however|also|so|then|otherwise|therefore|thus|but|for example|for instance)\b", re.IGNORECASE
)
# A paragraph left out leaves its blank lines to those around it.
_BLANK_LINES_RE = re.compile(r"\n\s*\n(?:\s*\n)+")


def _unmarked(answer: str, start: int, end: int) -> tuple[int, int, str]:
    """The edit removing the marker at [start, end) with the spaces before it, or after it when it
    opens a line ("[1] ROS 2 uses DDS.")."""
    line_start = answer.rfind("\n", 0, start) + 1
    if not answer[line_start:start].strip(" \t"):
        return line_start, end + len(answer[end:]) - len(answer[end:].lstrip(" \t")), ""
    return len(answer[:start].rstrip(" \t")), end, ""


def only_citations_wrong(verdict: validation_pb2.ValidateResponse) -> bool:
    """Supported enough, and not grounded only because a marker names a chunk that does not
    support its claim: re-pointing the markers (cite_supported) may ground it."""
    return (
        not verdict.is_grounded
        and verdict.grounding_score >= verdict.threshold
        and verdict.citations_valid < verdict.citations_found
    )


async def _judged_against_the_passages(
    verdict: validation_pb2.ValidateResponse, finished: AnswerFinished, answer: str, highlight: str
) -> validation_pb2.ValidateResponse:
    """The verdict, not grounded when the answer misjudges what the passages say: a refusal
    although they answer the question (unless the question asks about something no passage
    mentions, finished.unmentioned: "How do I set up soft body simulation for a deformable object
    in Gazebo?" over passages on gravity, which the extractive judge answers with them, and a
    capable model rightly declines), or an answer although none of them is about it (quoting
    an unrelated passage is supported text, but it answers nothing), or the reader's highlight
    given back to a reader who asked for it in other words while the passages say more (4 of the
    0.5B model's 5 answers to such questions on the physical-ai tune split copied it)."""
    if not verdict.is_grounded or not finished.sources or finished.fallback is None:
        return verdict
    judged = await finished.fallback()
    covered = not _declines(judged)
    if verdict.is_refusal and covered and not finished.unmentioned():
        return _flagged(verdict, WRONG_REFUSAL_NOTE)
    if not verdict.is_refusal and not covered:
        return _flagged(verdict, OFF_TOPIC_NOTE)
    if highlight and _echoes(answer, highlight) and not _echoes(judged, highlight):
        return _flagged(verdict, ECHO_NOTE)
    return verdict


async def _incomplete(query: str, answer: str, finished: AnswerFinished) -> bool:
    """Whether a question asking for several things is answered with fewer than half the items of
    the list the judge answers it with: the 0.5B model quoted a list's lead-in alone ("Dapr
    Architecture — Sidecars, building blocks, and the component model") for "Which Dapr building
    blocks does the Dapr chapter cover?", and its first item alone for "Which General Agents
    dominate 2025?"."""
    if finished.fallback is None or not understand(query).wants_list:
        return False
    return _names_too_few(answer, listed_items(await finished.fallback()))


def _names_too_few(answer: str, items: list[str]) -> bool:
    """Whether the answer names fewer than half the items (an item is named when most of its
    content words are in the answer: "Mode 2: acceptEdits" is not named by "Mode 1: default"); a
    list of one item is no list."""
    if len(items) < 2:
        return False
    said = Analysis(MARKER_RE.sub(" ", answer)).term_set
    named = sum(len(terms & said) * 2 > len(terms) for terms in (Analysis(item).term_set for item in items))
    return named * 2 < len(items)


def _echoes(answer: str, highlight: str) -> bool:
    return repeats(MARKER_RE.sub(" ", answer), highlight)


def replacement_reason(verdict: validation_pb2.ValidateResponse | None) -> str:
    """Why an answer is replaced, in one word: empty (no verdict: the model wrote nothing to
    deliver), wrong_refusal, off_topic, echo (the judge's notes), not_an_answer (grounded, but
    the validator finds it does not address the question), else not_grounded."""
    if verdict is None:
        return "empty"
    if WRONG_REFUSAL_NOTE in verdict.notes:
        return "wrong_refusal"
    if OFF_TOPIC_NOTE in verdict.notes:
        return "off_topic"
    if ECHO_NOTE in verdict.notes:
        return "echo"
    if verdict.is_grounded and not stands(verdict):
        return "not_an_answer"
    return "not_grounded"


def _declines(answer: str) -> bool:
    """Whether the answer is one of the statements that give no answer (the extractive
    answerer's declines, or the withheld-answer statement)."""
    return is_decline(answer) or answer == NOT_SUPPORTED_ANSWER


def _replaced_note(model: str, reason: str, verdict: validation_pb2.ValidateResponse | None) -> str:
    """Why the answer of `model` was replaced, for the notes of the verdict delivered instead."""
    if verdict is None:
        return f"the answer of {model} was replaced ({reason}): it was empty"
    if reason == "incomplete":
        return f"the answer of {model} was replaced ({reason}): {INCOMPLETE_NOTE}"
    judged = [note for note in verdict.notes if note in (WRONG_REFUSAL_NOTE, OFF_TOPIC_NOTE, ECHO_NOTE)]
    if verdict.is_grounded and not stands(verdict):
        judged.append(NOT_AN_ANSWER_REASON)
    unsupported = [f"“{claim.text[:80]}”: {claim.reason}" for claim in verdict.claims if not claim.supported]
    # The validator's own notes last: a citation that does not support its sentence is a reason
    # when every claim is supported.
    noted = [note for note in verdict.notes if note not in judged]
    reasons = [*judged, *unsupported, *noted]
    return f"the answer of {model} was replaced ({reason}): " + ("; ".join(reasons[:3]) or "not grounded")


def _flagged(verdict: validation_pb2.ValidateResponse, note: str) -> validation_pb2.ValidateResponse:
    flagged = validation_pb2.ValidateResponse()
    flagged.CopyFrom(verdict)
    flagged.is_grounded = False
    flagged.grounding_score = 0.0
    flagged.notes.append(note)
    return flagged


def context_chunk(source: Source, texts: Mapping[str, str]) -> common_pb2.Chunk:
    """A retrieved chunk as Validate reads it: its whole text (`texts` by chunk id), its page and
    its place in the book."""
    return common_pb2.Chunk(
        chunk_id=source.chunk_id,
        document_id=source.document_id,
        source_url=source.source_url,
        title=source.title,
        section_path=source.section_path,
        section_title=source.section_title,
        chunk_index=source.chunk_index,
        text=texts.get(source.chunk_id, source.extracted_text),
    )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
