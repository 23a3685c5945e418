"""ValidationService: protobuf <-> domain translation around a grounding checker."""

from __future__ import annotations

import time

import grpc

from glossator.v1 import validation_pb2, validation_pb2_grpc
from services.common.errors import Violations
from services.common.metrics import observe_stage
from services.validation.claims import find_citations
from services.validation.config import ValidationSettings
from services.validation.grounding import ContextChunk, GroundingChecker, GroundingResult
from services.validation.stopping import StopSignal


class ValidationServicer(validation_pb2_grpc.ValidationServiceServicer):
    def __init__(self, checker: GroundingChecker, settings: ValidationSettings) -> None:
        self._checker = checker
        self._settings = settings

    async def Validate(
        self, request: validation_pb2.ValidateRequest, context: grpc.aio.ServicerContext
    ) -> validation_pb2.ValidateResponse:
        self._check_request(request)
        start = time.perf_counter()
        context_chunks = [
            ContextChunk(
                chunk_id=chunk.chunk_id or str(i + 1),
                text=chunk.text,
                source_url=chunk.source_url,
                place=" > ".join(part for part in (chunk.title, *chunk.section_path) if part),
                page=chunk.document_id or chunk.source_url.split("#", 1)[0],
            )
            for i, chunk in enumerate(request.context)
        ]
        threshold = request.threshold if request.HasField("threshold") else None
        stop = StopSignal(seconds_left=context.time_remaining())
        try:
            with observe_stage("validation"):
                result = await self._checker.check(
                    request.query,
                    request.response,
                    context_chunks,
                    list(request.expected_sources),
                    threshold,
                    stop=stop,
                )
        finally:
            # Whatever ended the call early (the client cancelled, gRPC ended it at its deadline)
            # cancelled this coroutine, not the thread the checker works in: stop that too.
            stop.abandon()
        return to_proto(result, validation_ms=(time.perf_counter() - start) * 1000)

    def _check_request(self, request: validation_pb2.ValidateRequest) -> None:
        """Input limits, which also bound the work of a check (INVALID_ARGUMENT, not
        RESOURCE_EXHAUSTED: the request itself is too large, and sending it again cannot help)."""
        limits = self._settings
        v = Violations()
        v.text("response", request.response, max_chars=limits.max_answer_chars)
        if len(request.response) <= limits.max_answer_chars:
            citations = len(find_citations(request.response))
            v.check(
                citations <= limits.max_citations,
                "response",
                f"at most {limits.max_citations} citation markers (got {citations})",
            )
        v.text("query", request.query, max_chars=limits.max_query_chars, required=False)
        # No context is a question too: nothing can support a claim, only a refusal stands.
        v.check(
            len(request.context) <= limits.max_context_chunks,
            "context",
            f"at most {limits.max_context_chunks} chunks (got {len(request.context)})",
        )
        for i, chunk in enumerate(request.context[: limits.max_context_chunks]):
            v.text(f"context[{i}].text", chunk.text, max_chars=limits.max_chunk_chars)
        context_chars = sum(len(chunk.text) for chunk in request.context)
        v.check(
            context_chars <= limits.max_context_chars,
            "context",
            f"at most {limits.max_context_chars} characters in all (got {context_chars})",
        )
        if request.HasField("threshold"):
            v.in_range("threshold", request.threshold, 0.0, 1.0)
        v.raise_if_any()


def to_proto(result: GroundingResult, validation_ms: float) -> validation_pb2.ValidateResponse:
    return validation_pb2.ValidateResponse(
        is_grounded=result.is_grounded,
        grounding_score=result.grounding_score,
        citations_found=result.citations_found,
        citations_valid=result.citations_valid,
        content_match_score=result.content_match_score,
        claims=[
            validation_pb2.ClaimVerdict(
                text=claim.text,
                start=claim.start,
                end=claim.end,
                supported=claim.supported,
                score=claim.score,
                best_chunk_index=claim.best_chunk_index,
                best_chunk_id=claim.best_chunk_id,
                reason=claim.reason,
                citations=claim.citations,
                supporting_chunk_indexes=claim.supporting_chunks,
            )
            for claim in result.claims
        ],
        unsupported_spans=[
            validation_pb2.UnsupportedSpan(start=span.start, end=span.end, text=span.text, reason=span.reason)
            for span in result.unsupported_spans
        ],
        notes=result.notes,
        validation_ms=validation_ms,
        checker=result.checker,
        threshold=result.threshold,
        is_refusal=result.is_refusal,
        answers_question=result.answers_question,
    )
