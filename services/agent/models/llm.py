"""A language model at any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM).

The endpoint is reached with its own AsyncOpenAI client, never the SDK's global default, so the
base URL and key of one configuration cannot leak into another. Requests go through
`CompatTransport` (wire.py) and the model is wrapped in a `GuidedModel` (guided.py). The client
retries once: a run has a deadline, and the SDK's own retry policy is off unless configured.

Failures are sorted for the person running the endpoint: a request the endpoint refuses for good
(wrong model or path, bad key, rejected request) is FAILED_PRECONDITION naming the endpoint and
model; a server that is down or failing is UNAVAILABLE, marked not to be retried (the run was
long, and the client already retried once). Server bodies go to the log, never into the status.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from agents import ModelSettings, OpenAIChatCompletionsModel, OpenAIResponsesModel
from agents.models.interface import Model
from openai import APIConnectionError, APIStatusError, APITimeoutError, AsyncOpenAI

from services.agent.admission import Admission
from services.agent.config import AgentSettings
from services.agent.extractive import ExtractiveAnswerer
from services.agent.models.guided import GuidedModel
from services.agent.models.wire import BrokenStream, CompatTransport
from services.common.errors import DeadlineExceeded, FailedPrecondition, GlossatorError, Reason, Unavailable
from services.common.logging import get_logger
from services.common.metrics import LLM_CALLS_IN_FLIGHT

log = get_logger("glossator.agent.llm")

# One retry absorbs a dropped connection; more would eat the caller's deadline.
CLIENT_MAX_RETRIES = 1
# Local servers (Ollama, llama.cpp) accept any key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"
# What a permanent refusal usually means, by HTTP status.
_REFUSALS = {
    400: "it rejected the request",
    401: "it refused the API key (GLOSSATOR_AGENT_LLM_API_KEY)",
    403: "it refused the API key (GLOSSATOR_AGENT_LLM_API_KEY)",
    404: "it has no such model or path: check GLOSSATOR_AGENT_LLM_MODEL and that the base URL ends in /v1",
    422: "it rejected the request",
}


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str

    def failure(self, error: BaseException) -> GlossatorError | None:
        """The domain error for a failure of this endpoint; None when `error` did not come from it."""
        where = {"endpoint": self.base_url, "model": self.model}
        if isinstance(error, APIStatusError):
            status = error.status_code
            log.warning("llm_http_error", http_status=status, body=str(error.body)[:500], **where)
            if status in _REFUSALS:
                return FailedPrecondition(
                    f"the LLM endpoint {self.base_url} refused model {self.model!r} (HTTP {status}): "
                    f"{_REFUSALS[status]}",
                    reason=Reason.LLM_REJECTED,
                    metadata={**where, "http_status": str(status)},
                )
            return Unavailable(
                f"the LLM endpoint {self.base_url} failed with HTTP {status} for model {self.model!r}",
                reason=Reason.LLM_UNAVAILABLE,
                metadata={**where, "http_status": str(status)},
                retryable=False,
            )
        if isinstance(error, APITimeoutError):
            return DeadlineExceeded(
                f"the LLM endpoint {self.base_url} (model {self.model!r}) did not answer in time",
                reason=Reason.LLM_UNAVAILABLE,
                metadata=where,
            )
        if isinstance(error, BrokenStream):
            log.warning("llm_stream_broken", detail=str(error)[:200], **where)
            return Unavailable(
                f"the LLM endpoint {self.base_url} failed for model {self.model!r}: {error}",
                reason=Reason.LLM_UNAVAILABLE,
                metadata=where,
            )
        if isinstance(error, APIConnectionError | httpx.TransportError):
            log.warning("llm_connection_error", error=repr(error)[:300], **where)
            return Unavailable(
                f"cannot reach the LLM endpoint {self.base_url} (model {self.model!r})",
                reason=Reason.LLM_UNAVAILABLE,
                metadata=where,
                retryable=False,
            )
        return None


def llm_model(settings: AgentSettings, extractive: ExtractiveAnswerer | None = None) -> GuidedModel:
    """The SDK model for settings.llm_base_url, speaking Chat Completions or Responses, guided;
    `extractive` chooses which sections of the passages its answer turn shows first."""
    if not settings.llm_model:
        raise ValueError(
            "GLOSSATOR_AGENT_LLM_MODEL must name a model when GLOSSATOR_AGENT_LLM_BASE_URL is set"
        )
    client = AsyncOpenAI(
        base_url=settings.llm_base_url,
        api_key=settings.llm_api_key or _PLACEHOLDER_KEY,
        timeout=settings.llm_timeout_seconds,
        max_retries=CLIENT_MAX_RETRIES,
        http_client=httpx.AsyncClient(transport=CompatTransport()),
    )
    inner: Model
    if settings.llm_api == "responses":
        inner = OpenAIResponsesModel(model=settings.llm_model, openai_client=client)
    else:
        inner = OpenAIChatCompletionsModel(model=settings.llm_model, openai_client=client)
    return GuidedModel(
        inner,
        settings.llm_model,
        max_searches=settings.llm_max_searches,
        model_searches=settings.llm_model_searches,
        calls=Admission(settings.llm_max_concurrent_calls, jobs="model calls", in_flight=LLM_CALLS_IN_FLIGHT),
        extractive=extractive,
        context_chars=settings.llm_context_chars,
    )


def model_settings(settings: AgentSettings) -> ModelSettings:
    """Sampling settings of every run; the offline model ignores them."""
    return ModelSettings(temperature=settings.llm_temperature, max_tokens=settings.llm_max_tokens)
