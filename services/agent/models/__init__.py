"""The models that can answer: an OpenAI-compatible LLM when one is configured, else offline extraction."""

from __future__ import annotations

from agents import set_tracing_disabled
from agents.models.interface import Model

from services.agent.config import AgentSettings
from services.agent.models.llm import llm_model, model_settings
from services.agent.models.offline import MODEL_NAME as OFFLINE_MODEL_NAME
from services.agent.models.offline import OfflineExtractiveModel

__all__ = ["OFFLINE_MODEL_NAME", "OfflineExtractiveModel", "make_model", "model_settings"]


def make_model(settings: AgentSettings) -> tuple[Model, str]:
    """The model to answer with and the name responses report.

    Also switches the SDK's trace export off for the process unless settings.tracing_export is set:
    traces would otherwise be sent to OpenAI's backend with whatever key the environment holds.
    """
    set_tracing_disabled(not settings.tracing_export)
    if not settings.llm_base_url:
        return OfflineExtractiveModel(), OFFLINE_MODEL_NAME
    return llm_model(settings), settings.llm_model
