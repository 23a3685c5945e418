"""`glossator config`, and the settings it documents: the configuration reference that it prints
with the values in effect, and that `python -m services.commands.config README.md` writes into the
README (`make readme-config`). Here, at the top, because the list of settings names every service."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dotenv import dotenv_values
from pydantic import ValidationError

from services.agent.config import AgentSettings
from services.commands import exit_codes
from services.commands.connect import ClientSettings
from services.common.auth import AuthSettings
from services.common.config_doc import (
    config_reference,
    readme_with_reference,
    unknown_variable_warnings,
    validation_problems,
    variable_names,
)
from services.common.embedding import EmbeddingSettings
from services.common.settings import SuiteDefaults
from services.common.tls import TlsSettings
from services.edge.config import EdgeSettings
from services.retrieval.config import RetrievalSettings
from services.validation.config import ValidationSettings


def service_settings() -> dict:
    """Each service's settings class, by the name `glossator serve` takes."""
    return {"retrieval": RetrievalSettings, "validation": ValidationSettings, "agent": AgentSettings}


def documented_settings() -> dict:
    """Every settings table of the configuration reference: the services', then the shared ones."""
    shared = {
        "suite (every service: the defaults their own settings override)": SuiteDefaults,
        "edge (`glossator web`, `glossator up --web`: Envoy in front of the agent for browsers)": EdgeSettings,
        "embedding (the local model, in every service)": EmbeddingSettings,
        "auth (every service and client command)": AuthSettings,
        "tls (every service and client)": TlsSettings,
        "client (every command that connects to a running suite)": ClientSettings,
    }
    return {**service_settings(), **shared}


def unknown_settings() -> list[str]:
    """A warning for each GLOSSATOR_* variable of the environment (and of ./.env, which the
    settings read too) that no setting reads, naming the nearest known one."""
    environment = {**dotenv_values(".env"), **os.environ}
    return unknown_variable_warnings(environment, variable_names(documented_settings()))


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "config",
        description="Every environment variable with its default, the value this environment and "
        "./.env give it (secrets masked: shown as ****) and its meaning.",
    )
    parser.set_defaults(func=run)


def run(_args: argparse.Namespace) -> int:
    classes = documented_settings()
    for warning in unknown_settings():
        print(f"warning: {warning}", file=sys.stderr)
    try:
        print(config_reference(classes, effective=True), end="")
    except ValidationError as error:
        for problem in validation_problems(error, classes):
            print(f"error: {problem}", file=sys.stderr)
        return exit_codes.INVALID_ARGUMENT
    return exit_codes.OK


if __name__ == "__main__":
    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md")
    readme.write_text(readme_with_reference(readme.read_text(), documented_settings()))
