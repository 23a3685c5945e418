"""Builds the agent server."""

from __future__ import annotations

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.agent.config import AgentSettings
from services.common.server import GlossatorServer, create_server

SERVICE_NAME = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name


async def build_server(settings: AgentSettings | None = None) -> tuple[GlossatorServer, int]:
    settings = settings or AgentSettings()
    servicer = agent_pb2_grpc.AgentServiceServicer()

    def register(server) -> list[str]:
        agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    server = create_server("agent", settings, register)
    return server, server.port
