"""Does the configured LLM endpoint serve the configured model? Asked of `/models` at start-up.

A wrong model name or base URL otherwise shows only when the first reader asks a question. The
agent server reports the answer as the health of `LLM_HEALTH_SERVICE` (SERVING or NOT_SERVING;
the agent's own health stays as it is: a missing model must not take the service out of its load
balancer, whose errors then say what is wrong) and in its log, and asks again until the endpoint
is ready. Some servers (llama.cpp) answer under any
model name but still list the one they serve: a name missing from the list is reported all the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

LLM_HEALTH_SERVICE = "glossator.v1.AgentService.llm"
# Model ids named in a report of a missing model.
_MAX_LISTED = 5


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    detail: str


async def probe_models(base_url: str, api_key: str, model: str, timeout_s: float) -> ProbeResult:
    """Whether `model` is among the ids `GET {base_url}/models` lists, with a readable detail."""
    url = f"{base_url.rstrip('/')}/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as error:
        return ProbeResult(False, f"cannot reach {url}: {type(error).__name__}")
    if response.status_code != 200:
        return ProbeResult(False, f"{url} answered HTTP {response.status_code}")
    try:
        ids = [str(entry.get("id", "")) for entry in response.json().get("data", [])]
    except (ValueError, AttributeError):
        return ProbeResult(False, f"{url} did not answer with a model list")
    if model in ids:
        return ProbeResult(True, f"{url} serves {model!r}")
    listed = ", ".join(repr(i) for i in ids[:_MAX_LISTED]) or "none"
    return ProbeResult(False, f"{url} does not list model {model!r} (it lists {listed})")
