"""Settings of the agent service (env prefix GLOSSATOR_AGENT_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from services.common.settings import ServiceSettings

# Characters of the passages an LLM's answer turn is shown by default (llm_context_chars). At 1200
# the answer's words were in what the model saw for 0.67 of agentfactory's tune questions (0.80 at
# 3000); the 0.5B model's own answers were right for 0.43 / 0.64 (agentfactory / physical-ai) at
# 1200 and 0.55 / 0.73 at 3000, at the same first-token time on 2 CPU cores.
ANSWER_CONTEXT_CHARS = 3000


class AgentSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_AGENT_", env_file=".env", extra="ignore")

    port: int = Field(50051, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    retrieval_target: str = Field("127.0.0.1:50052", description="host:port of the retrieval service.")
    validation_target: str = Field("127.0.0.1:50053", description="host:port of the validation service.")
    retrieval_timeout_seconds: float = Field(10.0, gt=0, description="Deadline of one retrieval call.")
    validation_timeout_seconds: float = Field(10.0, gt=0, description="Deadline of one validation call.")
    llm_base_url: str = Field(
        "", description="OpenAI-compatible endpoint; unset answers with the offline extractive model."
    )
    llm_model: str = Field("", description="Model name at that endpoint.")
    llm_api_key: str = Field("", description="API key of that endpoint.")
    llm_api: Literal["chat_completions", "responses"] = Field(
        "chat_completions", description="Which OpenAI API the endpoint speaks."
    )
    llm_temperature: float = Field(0.1, ge=0, le=2, description="Sampling temperature.")
    # An answer is at most max_answer_chars (2000, about 500 tokens); a CPU model writes 10-30
    # tokens a second, so a longer budget only lets a rambling model run on.
    llm_max_tokens: int = Field(512, ge=16, description="Most tokens the model may generate per turn.")
    # A 0.5B model on 2 CPU cores takes 5-40 s a question (one call reading the passages; more while
    # other questions wait for the model).
    llm_timeout_seconds: float = Field(
        180.0, gt=0, description="Deadline of a whole model run (CPU models are slow)."
    )
    # Every run searches once, for the question; a capable model may be allowed to search again.
    # Small CPU models offered the tool again only repeat the search (and pay a model call for it).
    llm_max_searches: int = Field(
        1, ge=1, le=3, description="Searches an LLM run may make (the first is always made)."
    )
    llm_model_searches: bool = Field(
        False,
        description="Ask the model for the first search's query (capable models); its words are added "
        "to the question when they read like a query. Off: the agent searches for the question itself "
        "and the model is called once, to answer.",
    )
    llm_context_chars: int = Field(
        ANSWER_CONTEXT_CHARS,
        ge=300,
        description="Characters of the retrieved passages the answer turn shows the model: the section "
        "around each passage's best sentence, each at most a third of this (500 at least). Less is read "
        "faster by a model on a slow CPU, but holds the answer less often.",
    )
    llm_max_concurrent_calls: int = Field(
        1,
        ge=1,
        description="Calls open to the LLM endpoint at once; the others wait their turn within their "
        "deadline, or are refused RESOURCE_EXHAUSTED when it would pass. 1 suits a CPU server (and "
        "llama-cpp-python's cuts a streaming answer short when another request arrives); raise it for "
        "vLLM, Ollama with OLLAMA_NUM_PARALLEL, or a hosted API.",
    )
    llm_probe_seconds: float = Field(
        5.0, gt=0, description="Timeout of the start-up check that the endpoint lists the model."
    )
    tool_section_filter: bool = Field(
        False,
        description="Offer the model a section filter in the retrieval tool (small models invent sections).",
    )
    tracing_export: bool = Field(False, description="Export Agents SDK traces (off unless configured).")
    validation_policy: Literal["annotate", "enforce", "off"] = Field(
        "enforce",
        description="enforce: an ungrounded answer is replaced by the extractive one (or a decline); "
        "annotate: delivered with its verdict; off.",
    )
    max_answer_chars: int = Field(2000, ge=100, description="Answers are capped at this length.")
    max_selected_text_chars: int = Field(5000, ge=0, description="Longest selected_text accepted.")
    max_concurrent_answers: int = Field(
        8,
        ge=1,
        description="Answers run at once; others wait, and one that would miss its deadline waiting "
        "is refused RESOURCE_EXHAUSTED.",
    )
    session_backend: Literal["sqlite", "redis"] = Field(
        "sqlite", description="sqlite: a file under data_dir; redis: shared by several replicas."
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        description="Redis URL for session_backend=redis; rediss:// for TLS, with the files in the query "
        "(?ssl_ca_certs=ca.pem, and ssl_certfile= / ssl_keyfile= when Redis wants a client certificate).",
    )
    redis_password: SecretStr | None = Field(
        None,
        description="Password the agent AUTHs to Redis with (kept out of the URL, so that an overlay can "
        "change the URL without the secret; a password in the URL wins).",
    )
    session_inactive_minutes: float = Field(30, gt=0, description="Idle time before a session is INACTIVE.")
    session_expire_hours: float = Field(24, gt=0, description="Idle time before a session is EXPIRED.")
    session_max_turns: int = Field(100, ge=1, description="Turns kept per session (oldest dropped).")
    session_sweep_seconds: float = Field(60, gt=0, description="Period of the expiry sweep.")
    session_max_open_per_user: int = Field(
        100,
        ge=1,
        description="Open sessions a user may have at once, an anonymous caller (a client address, a "
        "principal) likewise; starting one more ends that caller's own least recently active one (ended "
        "and expired sessions do not count).",
    )
    # A reader's turn took 33.7 KB (five passages, tool output, the answer): 64 MB keep about 2,000.
    session_storage_quota_mb: float = Field(
        64,
        gt=0,
        description="Session history (turns, as stored) kept per user, an anonymous caller likewise, until "
        "ended sessions are deleted after retention; past it that caller's questions are RESOURCE_EXHAUSTED "
        "(reason SESSION_STORAGE_FULL) and nobody else's.",
    )
    max_concurrent_asks_per_caller: int = Field(
        4,
        ge=1,
        description="Questions (Ask, AskStream) one caller may have running at once, a stream until its "
        "last reply is taken; more are RESOURCE_EXHAUSTED with a retry hint. Per user, else per client "
        "address (the edge's for widget readers); the service token acting for nobody, and with auth off "
        "callers the edge does not name (loopback tools), are not counted.",
    )
    questions_per_minute_per_session: int = Field(
        20,
        ge=0,
        description="Questions one session may ask a minute (a reader of a public widget; 0: no limit); "
        "more are RESOURCE_EXHAUSTED saying when to try again. Counted in Redis (every replica together) "
        "with session_backend=redis, else in the process.",
    )
    history_turns: int = Field(10, ge=0, description="Past turns given to the model in each run.")
    response_cache_ttl_seconds: float = Field(
        300, ge=0, description="TTL of cached answers to session-less questions (0: off)."
    )
