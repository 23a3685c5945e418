"""The LLM-judge checker: claim verdicts from any OpenAI-compatible Chat Completions endpoint.

Claims are split exactly as for the offline checker; the model sees the numbered context passages
and the numbered claims and answers one JSON verdict per claim. The response-level figures come
from the same `assemble_result`, so both checkers report alike. Anything that is not a usable
answer from the endpoint (unreachable, HTTP error, malformed reply) raises Unavailable.
"""

from __future__ import annotations

import asyncio
import json

import httpx
from pydantic import BaseModel, ValidationError

from services.common.errors import Unavailable
from services.validation.claims import Claim
from services.validation.grounding import (
    ClaimAssessment,
    ContextChunk,
    GroundingResult,
    assemble_result,
    split_answer,
)
from services.validation.grounding_config import GroundingConfig
from services.validation.stopping import StopSignal

INSTRUCTIONS = """You check whether an answer is grounded in context passages.
For every numbered claim, decide whether the passages state it (supported) or not (not stated,
contradicted, or only plausible). Numbers, names, dates and negations must match exactly.
Reply with JSON only, in this shape:
{"verdicts": [{"claim": 1, "supported": true, "chunks": [2], "reason": "short reason"}]}
"chunks" lists the passage numbers that support the claim (empty when unsupported)."""


class JudgeVerdict(BaseModel):
    claim: int
    supported: bool
    chunks: list[int] = []
    reason: str = ""


class JudgeReply(BaseModel):
    verdicts: list[JudgeVerdict]


class LlmJudgeChecker:
    """Asks an LLM for per-claim verdicts; slower and costlier than the offline checker, but it
    reads meaning rather than words."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 30.0,
        config: GroundingConfig | None = None,
    ) -> None:
        self.name = f"llm-judge:{model}"
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._api_key = api_key
        self._timeout = timeout
        self.config = config or GroundingConfig()

    async def warm_up(self) -> None:
        """Loads the claim splitter; the judge itself is remote."""
        await asyncio.to_thread(split_answer, "A lidar measures distance.", self.config)

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
        """Splitting and scoring run in a worker thread (they are CPU work on long texts); a
        reply that comes after the call's deadline is not scored."""
        claims = await asyncio.to_thread(split_answer, answer, self.config)
        assessments = await self._judge(query, claims.checkable, context) if claims.checkable else []
        if stop:
            stop.check()
        threshold = self.config.threshold if threshold is None else threshold
        return await asyncio.to_thread(
            assemble_result,
            query,
            answer,
            claims,
            assessments,
            context,
            expected_sources,
            threshold,
            self.name,
        )

    async def _judge(
        self, query: str, claims: list[Claim], context: list[ContextChunk]
    ) -> list[ClaimAssessment]:
        content = await self._complete(judge_prompt(query, claims, context))
        verdicts = parse_verdicts(content, len(claims))
        assessments = []
        for claim, verdict in zip(claims, verdicts, strict=True):
            supporting = (
                [n - 1 for n in verdict.chunks if 1 <= n <= len(context)] if verdict.supported else []
            )
            assessments.append(
                ClaimAssessment(
                    claim=claim,
                    supported=verdict.supported,
                    score=1.0 if verdict.supported else 0.0,
                    best_chunk_index=supporting[0] if supporting else -1,
                    reason=verdict.reason or ("supported" if verdict.supported else "not supported"),
                    supporting_chunks=frozenset(supporting),
                )
            )
        return assessments

    async def _complete(self, prompt: str) -> str:
        """One Chat Completions call; returns the message content."""
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        body = {
            "model": self._model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": prompt}],
        }
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as client:
                response = await client.post(self._url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise Unavailable(f"LLM judge at {self._url} unreachable: {exc!r}") from exc
        if response.status_code >= 400:
            raise Unavailable(
                f"LLM judge at {self._url} answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise Unavailable(f"LLM judge returned no chat completion: {response.text[:200]}") from exc
        if not isinstance(content, str):
            raise Unavailable("LLM judge returned an empty message")
        return content


def judge_prompt(query: str, claims: list[Claim], context: list[ContextChunk]) -> str:
    passages = "\n".join(f"[{i}] {chunk.text}" for i, chunk in enumerate(context, start=1))
    numbered = "\n".join(f"{i}. {claim.text}" for i, claim in enumerate(claims, start=1))
    question = f"Question: {query}\n\n" if query else ""
    return f"{question}Passages:\n{passages}\n\nClaims:\n{numbered}"


def parse_verdicts(content: str, claim_count: int) -> list[JudgeVerdict]:
    """The verdicts in claim order; a reply that is not JSON of the agreed shape, or that skips
    or repeats a claim, is unusable."""
    start, end = content.find("{"), content.rfind("}")
    try:
        reply = JudgeReply.model_validate(json.loads(content[start : end + 1] if start >= 0 else content))
    except (ValueError, ValidationError) as exc:
        raise Unavailable(f"LLM judge reply is not the expected JSON: {content[:200]!r}") from exc
    by_claim = {verdict.claim: verdict for verdict in reply.verdicts}
    if sorted(by_claim) != list(range(1, claim_count + 1)) or len(reply.verdicts) != claim_count:
        got = sorted(verdict.claim for verdict in reply.verdicts)
        raise Unavailable(f"LLM judge returned verdicts for claims {got}, expected 1..{claim_count}")
    return [by_claim[number] for number in range(1, claim_count + 1)]
