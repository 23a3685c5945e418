"""Settings of the validation service (env prefix GLOSSATOR_VALIDATION_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from services.common.contract_limits import MAX_QUERY_CHARS
from services.common.settings import ServiceSettings
from services.validation.grounding_config import GroundingConfig


class ValidationSettings(ServiceSettings):
    model_config = SettingsConfigDict(
        env_prefix="GLOSSATOR_VALIDATION_", env_file=".env", extra="ignore", env_nested_delimiter="__"
    )

    port: int = Field(50053, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    checker: Literal["offline", "llm-judge"] = Field(
        "offline",
        description="offline: embedding + lexical + hard checks on CPU; llm-judge: an LLM endpoint.",
    )
    judge_base_url: str = Field("", description="OpenAI-compatible base URL of the LLM judge.")
    judge_model: str = Field("", description="Model name of the LLM judge.")
    judge_api_key: str = Field("", description="API key of the LLM judge endpoint.")
    judge_timeout_seconds: float = Field(30.0, gt=0, description="Timeout of one judge call.")
    max_answer_chars: int = Field(20_000, ge=1, description="Longest answer accepted.")
    max_query_chars: int = Field(MAX_QUERY_CHARS, ge=1, description="Longest query accepted.")
    max_context_chunks: int = Field(100, ge=1, description="Most context chunks in one request.")
    max_chunk_chars: int = Field(20_000, ge=1, description="Longest context chunk accepted.")
    # Bounds on the work of one check, which grows with the answer's claims times the context's
    # sentences (each of them embedded) and with its citations. The agent sends at most 20 chunks
    # of at most 224 tokens (about 1,000 characters); a HaluEval summary's document has up to 11,000.
    max_context_chars: int = Field(
        50_000, ge=1, description="Most characters of context (all chunks together) in one request."
    )
    max_citations: int = Field(500, ge=0, description="Most citation markers ([n]) in one answer.")
    grounding: GroundingConfig = Field(
        default_factory=GroundingConfig,
        description="Thresholds and weights of the offline checker (nested: GLOSSATOR_VALIDATION_GROUNDING__<NAME>).",
    )
