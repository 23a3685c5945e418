"""Settings shared by every service; each service subclasses with its own env prefix.

Settings are read once at start-up (pydantic-settings, from the environment and an optional .env).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.common.auth import AuthSettings
from services.common.tls import TlsSettings

DEFAULT_DATA_DIR = Path(".glossator")


class SuiteDefaults(BaseSettings):
    """Defaults every service of the suite falls back to (env prefix GLOSSATOR_, no service name):
    one variable for what most deployments set the same for all three."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_", env_file=".env", extra="ignore")

    data_dir: Path = Field(
        DEFAULT_DATA_DIR,
        description="Data directory of every service whose own GLOSSATOR_<SERVICE>_DATA_DIR is unset "
        "(that one wins).",
    )


class ServiceSettings(BaseSettings):
    """Runtime knobs of one gRPC server."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_", env_file=".env", extra="ignore")

    host: str = Field("127.0.0.1", description="Address the gRPC server binds (0.0.0.0 in a container).")
    port: int = Field(0, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    health_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="A plaintext port that answers grpc.health.v1 only (no reflection, no service RPCs), "
        "with the service port's statuses: for the kubelet's gRPC probes when the service port serves "
        "TLS; 0 picks a free one; unset turns it off.",
    )
    metrics_port: int | None = Field(
        None, ge=0, le=65535, description="Prometheus /metrics port of the process; unset turns it off."
    )
    max_message_bytes: int = Field(
        16 * 1024 * 1024, ge=1024, description="Largest request or response message accepted or sent."
    )
    max_concurrent_rpcs: int = Field(
        64,
        ge=1,
        description="RPCs served at once; past it new calls get RESOURCE_EXHAUSTED (health checks and "
        "reflection are never refused).",
    )
    stream_write_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest a streamed reply may wait for the client to take it (HTTP/2 flow "
        "control); then the call ends DEADLINE_EXCEEDED and frees what it holds. A client that opens "
        "a window of 0 and never reads held its call forever.",
    )
    max_concurrent_streams_per_connection: int = Field(
        32,
        ge=1,
        description="Calls one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).",
    )
    max_connection_age_seconds: float = Field(
        0,
        ge=0,
        description="Servers close a client connection after this age (0: never), so that clients "
        "reconnect and spread over replicas added since; about 60 s behind a Kubernetes Service.",
    )
    max_connection_age_grace_seconds: float = Field(
        3600,
        ge=0,
        description="How long calls running on a connection past its maximum age may go on before "
        "it is closed under them: at least the longest call (an Ingest, an answer).",
    )
    grace_seconds: float = Field(
        10.0, ge=0, description="On SIGTERM, how long running RPCs may take to finish before cancellation."
    )
    drain_seconds: float = Field(
        0.0,
        ge=0,
        description="On SIGTERM, how long health answers NOT_SERVING while calls are still served, before "
        "the grace period starts; in Kubernetes about 5 s, so that endpoints and load balancers stop "
        "sending first.",
    )
    exit_margin_seconds: float = Field(
        3.0,
        ge=0,
        description="After the grace period, how long cancelled calls and the closing of stores and "
        "channels may take; then the process exits whatever is left. Kubernetes' "
        "terminationGracePeriodSeconds must exceed drain + grace + this margin.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    log_format: Literal["json", "console"] = Field(
        "json", description="json for machines, console for people."
    )
    data_dir: Path = Field(
        DEFAULT_DATA_DIR,
        description="Where embedded stores keep their files; unset: GLOSSATOR_DATA_DIR, else .glossator.",
    )
    # Shared by every service of a process and by the CLI, so read from their own prefixes.
    auth: AuthSettings = Field(default_factory=AuthSettings, description="GLOSSATOR_AUTH_* settings.")
    tls: TlsSettings = Field(default_factory=TlsSettings, description="GLOSSATOR_TLS_* settings.")

    @model_validator(mode="before")
    @classmethod
    def _suite_data_dir(cls, values: Any) -> Any:
        """No data_dir of the service's own: the suite-wide one (GLOSSATOR_DATA_DIR), if set."""
        if isinstance(values, dict) and values.get("data_dir") is None:
            suite_dir = SuiteDefaults().data_dir
            if suite_dir != DEFAULT_DATA_DIR:
                values = {**values, "data_dir": suite_dir}
        return values
