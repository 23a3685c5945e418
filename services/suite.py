"""The embedded suite: all three services in one process, wired to each other on loopback.

Used by `glossator up` and by the integration tests (with every port set to 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from services.agent.config import AgentSettings
from services.common.server import GlossatorServer
from services.common.settings import ServiceSettings
from services.retrieval.config import RetrievalSettings
from services.validation.config import ValidationSettings


async def build_service(name: str, settings: ServiceSettings) -> GlossatorServer:
    """Builds one service's server by name."""
    if name == "retrieval":
        from services.retrieval.server import build_server
    elif name == "validation":
        from services.validation.server import build_server
    elif name == "agent":
        from services.agent.server import build_server
    else:
        raise ValueError(f"unknown service {name!r}")
    server, _port = await build_server(settings)
    return server


@dataclass
class SuiteSettings:
    retrieval: RetrievalSettings
    validation: ValidationSettings
    agent: AgentSettings

    @classmethod
    def from_env(cls) -> SuiteSettings:
        return cls(RetrievalSettings(), ValidationSettings(), AgentSettings())


def loopback_settings(data_dir: Path, port: int = 0) -> SuiteSettings:
    """Every service on 127.0.0.1 (port 0: free ports), data under data_dir; the rest from env."""
    common = {"host": "127.0.0.1", "port": port, "data_dir": data_dir}
    return SuiteSettings(
        retrieval=RetrievalSettings(**common),
        validation=ValidationSettings(**common),
        agent=AgentSettings(**common),
    )


async def build_suite(settings: SuiteSettings) -> list[GlossatorServer]:
    """Retrieval and validation first, then the agent pointed at the ports they actually bound."""
    retrieval = await build_service("retrieval", settings.retrieval)
    validation = await build_service("validation", settings.validation)
    agent_settings = settings.agent.model_copy(
        update={
            "retrieval_target": f"{settings.retrieval.host}:{retrieval.port}",
            "validation_target": f"{settings.validation.host}:{validation.port}",
        }
    )
    agent = await build_service("agent", agent_settings)
    return [retrieval, validation, agent]
