"""A language model at any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM).

The endpoint is reached with its own AsyncOpenAI client, never the SDK's global default, so the
base URL and key of one configuration cannot leak into another. The client retries once: a run has
a deadline, and the SDK's own retry policy is off unless configured in ModelSettings.
"""

from __future__ import annotations

from agents import ModelSettings, OpenAIChatCompletionsModel, OpenAIResponsesModel
from agents.models.interface import Model
from openai import AsyncOpenAI

from services.agent.config import AgentSettings

# One retry absorbs a dropped connection; more would eat the caller's deadline.
CLIENT_MAX_RETRIES = 1
# Local servers (Ollama, llama.cpp) accept any key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"


def llm_model(settings: AgentSettings) -> Model:
    """The SDK model for settings.llm_base_url, speaking Chat Completions or Responses."""
    if not settings.llm_model:
        raise ValueError(
            "GLOSSATOR_AGENT_LLM_MODEL must name a model when GLOSSATOR_AGENT_LLM_BASE_URL is set"
        )
    client = AsyncOpenAI(
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key or _PLACEHOLDER_KEY,
        timeout=settings.llm_timeout_seconds,
        max_retries=CLIENT_MAX_RETRIES,
    )
    if settings.llm_api == "responses":
        return OpenAIResponsesModel(model=settings.llm_model, openai_client=client)
    return OpenAIChatCompletionsModel(model=settings.llm_model, openai_client=client)


def model_settings(settings: AgentSettings) -> ModelSettings:
    """Sampling settings of every run; the offline model ignores them."""
    return ModelSettings(temperature=settings.llm_temperature, max_tokens=settings.llm_max_tokens)
