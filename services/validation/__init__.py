"""Validation service domain: claim-level grounding of answers in their retrieved context."""

from services.validation.grounding import (
    ClaimVerdict,
    ContextChunk,
    GroundingChecker,
    GroundingResult,
    OfflineChecker,
    UnsupportedSpan,
)
from services.validation.grounding_config import GroundingConfig

__all__ = [
    "ClaimVerdict",
    "ContextChunk",
    "GroundingChecker",
    "GroundingConfig",
    "GroundingResult",
    "OfflineChecker",
    "UnsupportedSpan",
]
