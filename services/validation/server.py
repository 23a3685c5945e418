"""Builds the validation server: the configured checker behind ValidationService."""

from __future__ import annotations

from glossator.v1 import validation_pb2, validation_pb2_grpc
from services.common.server import GlossatorServer, create_server
from services.validation.config import ValidationSettings
from services.validation.servicer import ValidationServicer

SERVICE_NAME = validation_pb2.DESCRIPTOR.services_by_name["ValidationService"].full_name


def make_checker(settings: ValidationSettings):
    """The offline checker by default; the LLM judge when configured."""
    if settings.checker == "llm-judge":
        from services.validation.llm_judge import LlmJudgeChecker

        return LlmJudgeChecker(
            base_url=settings.judge_base_url,
            model=settings.judge_model,
            api_key=settings.judge_api_key,
            timeout=settings.judge_timeout_seconds,
            config=settings.grounding,
        )
    from services.validation.grounding import OfflineChecker

    return OfflineChecker(settings.grounding)


async def build_server(settings: ValidationSettings | None = None) -> tuple[GlossatorServer, int]:
    settings = settings or ValidationSettings()
    checker = make_checker(settings)
    servicer = ValidationServicer(checker, settings)

    def register(server) -> list[str]:
        validation_pb2_grpc.add_ValidationServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    server = create_server("validation", settings, register)
    server.warmups.append(checker.warm_up)
    return server, server.port
