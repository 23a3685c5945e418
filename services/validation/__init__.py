"""Validation service domain: claim-level grounding of answers in their retrieved context."""

from services.validation.grounding import (
    ClaimVerdict,
    ContextChunk,
    GroundingChecker,
    GroundingConfig,
    GroundingResult,
    OfflineChecker,
    UnsupportedSpan,
)

__all__ = [
    "ClaimVerdict",
    "ContextChunk",
    "GroundingChecker",
    "GroundingConfig",
    "GroundingResult",
    "OfflineChecker",
    "UnsupportedSpan",
]
