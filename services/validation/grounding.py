"""Grounding checks: does an answer say only what its context supports?

The domain of the validation service. An answer is split into claims; a checker decides claim by
claim whether some context chunk supports it; `assemble_result` turns those verdicts into the
response-level figures (grounding score, citations, unsupported spans, notes), the same way for
every checker. `OfflineChecker` is the default: CPU only, lexical evidence plus the local
embedding model plus hard checks. `services.validation.llm_judge` holds the optional LLM judge.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from services.common.embedding import EmbeddingCache
from services.common.text.question import asks_for_other_words
from services.common.text.words import Analysis
from services.validation.claim_model import ClaimModel, doubtful_claims, shipped_claim_model
from services.validation.claims import (
    CitationMarker,
    Claim,
    find_citations,
    split_claims,
    without_source_frame,
)
from services.validation.commands import cited_command_notes, command_notes
from services.validation.evidence import (
    NO_FRAME,
    ChunkEvidence,
    PassageMatch,
    QuestionFrame,
    mentions_anything,
    rank_passages,
)
from services.validation.focus import TITLES_ONLY_NOTE, missed_focus, titles_only
from services.validation.grounding_config import GroundingConfig
from services.validation.lexical import LexicalEvidence, has_checkable_content, lexical_evidence
from services.validation.refusals import is_refusal
from services.validation.stopping import StopSignal
from services.validation.subjects import leading_terms, paired_sides, speaker_terms, subject_terms
from services.validation.support import ChunkVerdict, judge_claim, wants_similarity
from services.validation.word_vectors import word_vector

# Texts embedded per model call by a check, with a stop check between calls: a check embeds up
# to every sentence of its context, thousands on a long one. 32 texts took about 1.5 s of model
# time on a busy 2-core machine. A HaluEval check embeds at most 29, so those are still embedded
# in one call as before and their figures do not move.
EMBED_BATCH = 32


@dataclass(frozen=True)
class ContextChunk:
    """A retrieved chunk the answer must rest on; [n] in the answer refers to context[n-1]."""

    chunk_id: str
    text: str
    source_url: str = ""
    # Its place in the book ("Title > Section") and its page (the document it was cut from): a
    # section rarely repeats the name its page is about, so the names a claim may take from its
    # supporting chunk are those of its page and place too (missing_names).
    place: str = ""
    page: str = ""


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim as it appears in the answer (markers removed), with its verdict."""

    text: str
    start: int
    end: int
    supported: bool
    score: float
    best_chunk_index: int
    best_chunk_id: str
    reason: str
    citations: list[int] = field(default_factory=list)
    supporting_chunks: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class UnsupportedSpan:
    start: int
    end: int
    text: str
    reason: str


@dataclass(frozen=True)
class GroundingResult:
    is_grounded: bool
    grounding_score: float
    citations_found: int
    citations_valid: int
    content_match_score: float
    claims: list[ClaimVerdict]
    unsupported_spans: list[UnsupportedSpan]
    notes: list[str]
    is_refusal: bool
    checker: str
    threshold: float
    # Grounded is not answered: False when the answer never addresses what the question asks
    # about (services.validation.focus); the reason is among the notes.
    answers_question: bool = True


class GroundingChecker(Protocol):
    """What the servicer calls; implementations differ only in how they judge each claim.

    `stop` ends the work early (see services.validation.stopping); none: it runs to the end.
    """

    name: str

    async def check(
        self,
        query: str,
        answer: str,
        context: list[ContextChunk],
        expected_sources: list[str],
        threshold: float | None,
        *,
        stop: StopSignal | None = None,
    ) -> GroundingResult: ...

    async def warm_up(self) -> None:
        """Makes the first real check as fast as the next (loads what it loads lazily)."""


@dataclass(frozen=True)
class ClaimAssessment:
    """A checker's verdict on one claim, before the response-level figures are computed."""

    claim: Claim
    supported: bool
    score: float
    best_chunk_index: int
    reason: str
    supporting_chunks: frozenset[int] = frozenset()
    doubt: float = 0.0  # the claim model's −log P(supported); inf when no chunk mentions it
    # Words of the passage supporting it (a list item with its heading): what the claim is about.
    passage_terms: frozenset[str] = frozenset()


@dataclass(frozen=True)
class AnswerClaims:
    """The answer's claims, refusals ("the book does not say") set apart: they claim nothing."""

    checkable: list[Claim]
    refusals: list[Claim]


def split_answer(answer: str, config: GroundingConfig) -> AnswerClaims:
    """The answer's claims. A direct answer's "and" joins two claims, each to be found phrase by
    phrase ("He was born in Paris and died in London" from two sentences of its source); a longer
    answer's sentence stays whole unless it cites several chunks: judged by the claim model, a
    clause cut from its sentence lost its subject and most of its doubt, and fabricated summary
    sentences passed as two supported halves."""
    claims = _claims(split_claims(answer, config.min_clause_words))
    if not is_direct_answer(claims.checkable, config):
        claims = _claims(split_claims(answer, config.min_clause_words, and_clauses=False))
    return claims


def _claims(claims: list[Claim]) -> AnswerClaims:
    refusals = [claim for claim in claims if is_refusal(claim.text)]
    return AnswerClaims([claim for claim in claims if claim not in refusals], refusals)


def is_direct_answer(claims: list[Claim], config: GroundingConfig) -> bool:
    return len({claim.sentence for claim in claims}) <= config.direct_answer_max_sentences


def assemble_result(
    query: str,
    answer: str,
    claims: AnswerClaims,
    assessments: list[ClaimAssessment],
    context: list[ContextChunk],
    expected_sources: list[str],
    threshold: float,
    checker: str,
) -> GroundingResult:
    """The response-level verdict from per-claim assessments, identical for every checker."""
    verdicts = [_verdict(a, context) for a in assessments]
    verdicts += [
        ClaimVerdict(c.text, c.start, c.end, True, 1.0, -1, "", "refusal: claims nothing", c.citations)
        for c in claims.refusals
    ]
    verdicts.sort(key=lambda v: v.start)
    weights = [len(a.claim.text) for a in assessments]
    supported_weight = sum(w for w, a in zip(weights, assessments, strict=True) if a.supported)
    grounding_score = supported_weight / sum(weights) if assessments else 1.0
    is_refusal = not assessments and bool(claims.refusals)
    citations_valid, misattributed, notes = _check_citations(answer, assessments, claims.refusals, context)
    notes += _expected_source_notes(answer, context, expected_sources)
    notes += command_notes(answer)
    notes += cited_command_notes((m.number for m in find_citations(answer)), [c.text for c in context])
    missed = ""
    if is_refusal:
        notes.append("the answer declines to answer: it claims nothing, so it is grounded")
    elif not assessments:
        notes.append("the answer states no checkable claim")
    else:
        missed = missed_focus(
            query,
            " ".join(a.claim.text for a in assessments),
            (a.passage_terms for a in assessments if a.supported),
        )
        if not missed and titles_only(
            (a.claim.text for a in assessments), (c.text for c in context), (c.place for c in context)
        ):
            missed = TITLES_ONLY_NOTE
        if missed:
            notes.append(missed)
    return GroundingResult(
        # A marker that points nowhere or at a chunk that does not support its claim makes the
        # answer ungrounded, however well the rest is supported: the reader follows the marker.
        is_grounded=grounding_score >= threshold and not misattributed,
        grounding_score=grounding_score,
        citations_found=len(find_citations(answer)),
        citations_valid=citations_valid,
        content_match_score=content_match(answer, context),
        claims=verdicts,
        unsupported_spans=[
            UnsupportedSpan(a.claim.start, a.claim.end, answer[a.claim.start : a.claim.end], a.reason)
            for a in assessments
            if not a.supported
        ],
        notes=notes,
        is_refusal=is_refusal,
        checker=checker,
        threshold=threshold,
        answers_question=not missed,
    )


def content_match(answer: str, context: list[ContextChunk]) -> float:
    """Share of the answer's content words found anywhere in the context (1 when it has none)."""
    answer_terms = Analysis(answer).term_set
    if not answer_terms:
        return 1.0
    context_terms = frozenset().union(*(Analysis(chunk.text).term_set for chunk in context))
    return len(answer_terms & context_terms) / len(answer_terms)


def _verdict(assessment: ClaimAssessment, context: list[ContextChunk]) -> ClaimVerdict:
    claim, best = assessment.claim, assessment.best_chunk_index
    return ClaimVerdict(
        text=claim.text,
        start=claim.start,
        end=claim.end,
        supported=assessment.supported,
        score=assessment.score,
        best_chunk_index=best,
        best_chunk_id=context[best].chunk_id if 0 <= best < len(context) else "",
        reason=assessment.reason,
        citations=claim.citations,
        supporting_chunks=sorted(assessment.supporting_chunks) if assessment.supported else [],
    )


def _check_citations(
    answer: str, assessments: list[ClaimAssessment], refusals: list[Claim], context: list[ContextChunk]
) -> tuple[int, int, list[str]]:
    """Counts markers whose chunk supports a claim they are attached to, and those that point
    nowhere or at a chunk that does not support their claim (noted). A refusal's marker claims no
    support: it names where the book comes closest ("Nearby, the book covers: ... [2]"), so it is
    valid when it points at a context chunk."""
    notes = []
    valid = misattributed = 0
    carriers_of: dict[CitationMarker, list[ClaimAssessment]] = {}
    for assessment in assessments:
        for marker in dict.fromkeys(assessment.claim.markers):
            carriers_of.setdefault(marker, []).append(assessment)
    in_refusals = {marker for claim in refusals for marker in claim.markers}
    for marker in find_citations(answer):
        if not 1 <= marker.number <= len(context):
            notes.append(f"citation [{marker.number}] points nowhere ({len(context)} context chunks)")
            misattributed += 1
            continue
        carriers = carriers_of.get(marker, [])
        names_a_place = marker in in_refusals and not carriers
        if names_a_place or any(marker.number - 1 in a.supporting_chunks for a in carriers):
            valid += 1
        elif carriers:
            notes.append(f"citation [{marker.number}] does not support: {_shorten(carriers[0].claim.text)}")
            misattributed += 1
    uncited = [a for a in assessments if not a.claim.markers]
    if uncited and len(uncited) < len(assessments):
        notes.append(f"{len(uncited)} of {len(assessments)} claims carry no citation")
    return valid, misattributed, notes


def _expected_source_notes(answer: str, context: list[ContextChunk], expected: list[str]) -> list[str]:
    cited = {marker.number - 1 for marker in find_citations(answer)}
    cited_sources = {
        source
        for i in cited
        if 0 <= i < len(context)
        for source in (context[i].chunk_id, context[i].source_url)
    }
    return [f"expected source {source} is not cited" for source in expected if source not in cited_sources]


def _shorten(text: str, limit: int = 60) -> str:
    return f"“{text}”" if len(text) <= limit else f"“{text[: limit - 1]}…”"


@dataclass(frozen=True)
class ClaimEvidence:
    """What OfflineChecker.gather finds; (i, j) keys are (claim, chunk) indexes."""

    analyses: list[Analysis]
    direct: bool
    rankings: list[dict[int, list[PassageMatch]]]
    evidence: dict[tuple[int, int], LexicalEvidence]
    similarities: dict[tuple[int, int], float]
    quoted: list[frozenset[int]]  # per claim, the chunks it quotes word for word


class OfflineChecker:
    """The default checker: lexical evidence, the local embedding model and hard checks, on CPU."""

    name = "offline"

    def __init__(
        self,
        config: GroundingConfig | None = None,
        embedding_model=None,
        claim_model: ClaimModel | None = None,
    ) -> None:
        self.config = config or GroundingConfig()
        self._embedding_model = embedding_model
        self._claim_model = claim_model
        # Answers cite the same chunks again and again, and an extractive answer's claims are
        # sentences of them: most texts to compare were embedded for an earlier answer.
        self._embed = EmbeddingCache(lambda texts: self._model().embed(texts))

    async def warm_up(self) -> None:
        """One small check: loads the embedding model and every analyser a first check would wait
        for (over 12 s in a fresh process, past the agent's validation deadline), and the word
        vectors the claim model of longer answers reads (20 ms)."""
        await asyncio.to_thread(self._embed, ["A lidar measures distance."])
        await asyncio.to_thread(word_vector, "lidar")
        context = [ContextChunk("1", "A lidar measures distance by timing laser pulses.", "")]
        await self.check("What does a lidar measure?", "A lidar measures distance [1].", context, [], None)

    async def check(
        self,
        query: str,
        answer: str,
        context: list[ContextChunk],
        expected_sources: list[str],
        threshold: float | None,
        *,
        stop: StopSignal | None = None,
    ) -> GroundingResult:
        """All of it in a worker thread: a long answer against a long context is seconds of CPU,
        which must not hold up the event loop (health checks, the other calls)."""
        return await asyncio.to_thread(
            self.check_now, query, answer, context, expected_sources, threshold, stop or StopSignal()
        )

    def check_now(
        self,
        query: str,
        answer: str,
        context: list[ContextChunk],
        expected_sources: list[str],
        threshold: float | None,
        stop: StopSignal,
    ) -> GroundingResult:
        """The check, on the calling thread."""
        claims = split_answer(answer, self.config)
        assessments = self.assess(claims.checkable, context, stop, query)
        threshold = self.config.threshold if threshold is None else threshold
        return assemble_result(
            query, answer, claims, assessments, context, expected_sources, threshold, self.name
        )

    def gather(
        self,
        claims: list[Claim],
        context: list[ContextChunk],
        stop: StopSignal,
        rephrasing: bool,
        sides: tuple[frozenset[str], ...] = (),
        frame: QuestionFrame = NO_FRAME,
    ) -> ClaimEvidence:
        """Everything the verdicts are made of: each claim's lexical evidence against every chunk
        that could support it (`sides`: the two things the question pairs, subjects.paired_sides;
        `frame`: the question a claim may restate), and its embedding similarity where
        the verdict reads one."""
        pages: dict[str, list[str]] = {}
        for i, chunk in enumerate(context):
            pages.setdefault(chunk.page or f"#{i}", []).extend((chunk.place, chunk.text))
        chunks = [
            ChunkEvidence(
                i,
                chunk.text,
                self.config.window_sentences,
                self.config.phrase_gap,
                page="\n".join(pages[chunk.page or f"#{i}"]),
            )
            for i, chunk in enumerate(context)
        ]
        analyses = [Analysis(without_source_frame(claim.text)) for claim in claims]
        # A subject the context never names is left to the word evidence (a summary words its
        # subjects its own way); one it names elsewhere must be what the supporting passage is about.
        context_terms = frozenset().union(*(chunk.analysis.term_set for chunk in chunks))
        subjects = [subject_terms(analysis) & context_terms for analysis in analyses]
        context_numbers = frozenset().union(*(chunk.analysis.numbers for chunk in chunks))
        direct = is_direct_answer(claims, self.config)
        rankings = []
        for claim, analysis, subject in zip(claims, analyses, subjects, strict=True):
            stop.check()
            rankings.append(
                self._rank(
                    claim,
                    analysis,
                    subject,
                    speaker_terms(analysis),
                    chunks,
                    frame.within(leading_terms(analysis)),
                )
            )
        quoted = [
            frozenset(chunk.index for chunk in chunks if chunk.quotes(analysis)) for analysis in analyses
        ]
        evidence = {
            (i, j): lexical_evidence(
                analyses[i], chunks[j], matches, self.config, subjects[i], context_numbers, sides
            )
            for i, ranking in enumerate(rankings)
            for j, matches in ranking.items()
        }
        # A quote's verdict reads no embedding (the claim model's trainer still reads its words).
        undecided = [
            (i, j)
            for (i, j), found in evidence.items()
            if not quoted[i] and wants_similarity(found, direct, rephrasing)
        ]
        similarities = self._similarities(undecided, claims, rankings, chunks, stop)
        return ClaimEvidence(analyses, direct, rankings, evidence, similarities, quoted)

    def assess(
        self, claims: list[Claim], context: list[ContextChunk], stop: StopSignal, query: str
    ) -> list[ClaimAssessment]:
        """Judges every claim against every chunk that could support it (CPU-bound: run in a
        thread). Checks `stop` between claims and between embedding batches."""
        rephrasing = asks_for_other_words(query)
        found = self.gather(claims, context, stop, rephrasing, paired_sides(query), QuestionFrame.of(query))
        model = None if found.direct else self._claim_model or shipped_claim_model()
        assessments = [
            _quoted(claim, found.quoted[i], found.rankings[i])
            if found.quoted[i]
            else _assess_claim(
                claim,
                analysis,
                found.rankings[i],
                [
                    judge_claim(
                        analysis,
                        found.evidence[(i, j)],
                        found.similarities.get((i, j)),
                        model,
                        self.config,
                        rephrasing=rephrasing,
                        answering=bool(query.strip()),
                    )
                    for j in found.rankings[i]
                ],
            )
            for i, (claim, analysis) in enumerate(zip(claims, found.analyses, strict=True))
        ]
        return assessments if model is None else _within_budget(assessments, model.doubt_budget)

    def _rank(
        self,
        claim: Claim,
        analysis: Analysis,
        subject: frozenset[str],
        speaker: frozenset[str],
        chunks: list[ChunkEvidence],
        frame: QuestionFrame,
    ) -> dict[int, list[PassageMatch]]:
        """The best passages of every chunk worth judging: those sharing words, and the cited ones.

        Only as many as the checks read: the best, the negation_passages best, and the
        semantic_candidates best."""
        keep = max(self.config.negation_passages, self.config.semantic_candidates)
        cited = {n - 1 for n in claim.citations if 1 <= n <= len(chunks)}
        return {
            chunk.index: rank_passages(analysis, chunk, keep, subject, speaker, frame)
            for chunk in chunks
            if chunk.index in cited or mentions_anything(analysis, chunk)
        }

    def _similarities(
        self,
        pairs: list[tuple[int, int]],
        claims: list[Claim],
        rankings: list[dict[int, list[PassageMatch]]],
        chunks: list[ChunkEvidence],
        stop: StopSignal,
    ) -> dict[tuple[int, int], float]:
        """Cosine of each (claim, chunk) pair with the chunk's best candidate passages.

        Every claim and every sentence involved is embedded once, EMBED_BATCH texts at a time.
        """
        if not pairs:
            return {}
        candidates = {(i, j): rankings[i][j][: self.config.semantic_candidates] for i, j in pairs}
        claim_keys = sorted({i for i, _ in pairs})
        sentence_keys = sorted(
            {
                (j, s)
                for (_, j), matches in candidates.items()
                for m in matches
                for s in range(m.passage.first, m.passage.last)
            }
        )
        texts = [claims[i].text for i in claim_keys] + [chunks[j].sentences[s] for j, s in sentence_keys]
        vectors = self._embed_stoppably(texts, stop)
        claim_vectors = dict(zip(claim_keys, vectors[: len(claim_keys)], strict=True))
        sentence_vectors = dict(zip(sentence_keys, vectors[len(claim_keys) :], strict=True))
        return {
            (i, j): max(float(_passage_vector(sentence_vectors, m) @ claim_vectors[i]) for m in matches)
            for (i, j), matches in candidates.items()
        }

    def _embed_stoppably(self, texts: list[str], stop: StopSignal) -> np.ndarray:
        """The texts' vectors, embedded EMBED_BATCH at a time with a stop check before each batch:
        thousands of sentences of a long context are minutes of model time."""
        batches = []
        for start in range(0, len(texts), EMBED_BATCH):
            stop.check()
            batches.append(self._embed(texts[start : start + EMBED_BATCH]))
        return np.concatenate(batches)

    def _model(self):
        if self._embedding_model is None:
            from services.common.embedding import local_embedding_model

            self._embedding_model = local_embedding_model()
        return self._embedding_model


def _passage_vector(sentence_vectors: dict[tuple[int, int], np.ndarray], match: PassageMatch) -> np.ndarray:
    """A passage's direction: the normalised sum of its sentences' unit vectors."""
    passage = match.passage
    total = np.sum(
        [sentence_vectors[(passage.chunk_index, s)] for s in range(passage.first, passage.last)], axis=0
    )
    return total / max(float(np.linalg.norm(total)), 1e-9)


def _quoted(claim: Claim, chunks: frozenset[int], passages: dict[int, list[PassageMatch]]) -> ClaimAssessment:
    """A claim copied word for word from the context (ChunkEvidence.quotes): supported by the
    chunks it copies, with no doubt."""
    best = min(chunks)
    terms = passages[best][0].passage.terms if passages.get(best) else frozenset()
    return ClaimAssessment(claim, True, 1.0, best, "supported: quoted", chunks, 0.0, terms)


def _assess_claim(
    claim: Claim, analysis: Analysis, passages: dict[int, list[PassageMatch]], verdicts: list[ChunkVerdict]
) -> ClaimAssessment:
    if not has_checkable_content(analysis):
        return ClaimAssessment(claim, True, 1.0, -1, "nothing to check")
    if not verdicts:
        return ClaimAssessment(claim, False, 0.0, -1, "no context chunk mentions it", doubt=math.inf)
    best = max(verdicts, key=lambda v: (v.supported, v.score))
    supporting = frozenset(v.chunk_index for v in verdicts if v.supported)
    return ClaimAssessment(
        claim,
        best.supported,
        best.score,
        best.chunk_index,
        best.reason,
        supporting,
        best.doubt,
        passages[best.chunk_index][0].passage.terms,
    )


def _within_budget(assessments: list[ClaimAssessment], budget: float) -> list[ClaimAssessment]:
    """Flags the most doubtful claims of a longer answer until the others fit its doubt budget.

    Claims no chunk mentions are unsupported already; the budget is shared by the rest."""
    judged = [i for i, a in enumerate(assessments) if math.isfinite(a.doubt)]
    flagged = {judged[k] for k in doubtful_claims([assessments[i].doubt for i in judged], budget)}
    return [
        a
        if i not in flagged or not a.supported
        else replace(
            a,
            supported=False,
            reason=f"too doubtful beside the answer's other claims (support {a.score:.2f})",
            supporting_chunks=frozenset(),
        )
        for i, a in enumerate(assessments)
    ]
