"""The models that can answer: an OpenAI-compatible LLM when one is configured, else offline extraction."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agents import set_tracing_disabled
from agents.models.interface import Model

from services.agent.config import AgentSettings
from services.agent.extractive import ExtractiveAnswerer
from services.agent.models.llm import llm_model, model_settings
from services.agent.models.offline import MODEL_NAME as OFFLINE_MODEL_NAME
from services.agent.models.offline import OfflineExtractiveModel
from services.agent.tools import AskContext

__all__ = ["OFFLINE_MODEL_NAME", "OfflineExtractiveModel", "RunBoundModel", "make_model", "model_settings"]


@runtime_checkable
class RunBoundModel(Protocol):
    """A model that reads one run's state (its resolved search query, the passages it retrieved):
    the SDK gives a model no run context, so each run gets its own bound copy."""

    def for_run(self, context: AskContext) -> Model: ...


def make_model(settings: AgentSettings, extractive: ExtractiveAnswerer | None = None) -> tuple[Model, str]:
    """The model to answer with and the name responses report; offline, it answers with
    `extractive` (the answerer the judge and the fallback share), and an LLM's answer turn shows
    the sections it would answer from first.

    Also switches the SDK's trace export off for the process unless settings.tracing_export is set:
    traces would otherwise be sent to OpenAI's backend with whatever key the environment holds.
    """
    set_tracing_disabled(not settings.tracing_export)
    if not settings.llm_base_url:
        return OfflineExtractiveModel(extractive), OFFLINE_MODEL_NAME
    return llm_model(settings, extractive), settings.llm_model
