"""The `glossator` command."""

from __future__ import annotations

import argparse
import sys

from services.common.logging import configure_logging

SERVICES = ("retrieval", "validation", "agent")


def _settings_classes() -> dict:
    from services.agent.config import AgentSettings
    from services.retrieval.config import RetrievalSettings
    from services.validation.config import ValidationSettings

    return {"retrieval": RetrievalSettings, "validation": ValidationSettings, "agent": AgentSettings}


def documented_settings() -> dict:
    """Every settings table of the configuration reference: the services', then the shared ones."""
    from services.common.auth import AuthSettings
    from services.common.tls import TlsSettings

    shared = {
        "auth (every service and client command)": AuthSettings,
        "tls (every service and client)": TlsSettings,
    }
    return {**_settings_classes(), **shared}


def _cmd_serve(args: argparse.Namespace) -> int:
    from services.common.server import run_until_signal
    from services.suite import build_service

    settings = _settings_classes()[args.service]()
    configure_logging(settings.log_level, settings.log_format)

    async def main() -> None:
        _start_metrics(settings)
        server = await build_service(args.service, settings)
        await run_until_signal([server], on_started=lambda: _say_listening([server], settings.host))

    return _serving(main())


def _cmd_up(args: argparse.Namespace) -> int:
    from services.common.server import run_until_signal
    from services.suite import SuiteSettings, build_suite

    suite_settings = SuiteSettings.from_env()
    configure_logging(suite_settings.agent.log_level, args.log_format)

    async def main() -> None:
        _start_metrics(suite_settings.agent)  # one endpoint for the one process
        servers = await build_suite(suite_settings)
        await run_until_signal(servers, on_started=lambda: _say_listening(servers, suite_settings.agent.host))

    return _serving(main())


def _serving(main) -> int:
    """Runs the servers until a signal (the process then ends); a port that cannot be bound is
    a clear error and exit code 2, not a traceback."""
    from services.common.server import PortUnavailable, run_server_process

    try:
        run_server_process(main)
    except PortUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _start_metrics(settings) -> None:
    if settings.metrics_port is not None:
        from services.common.metrics import start_metrics_endpoint

        port = start_metrics_endpoint(settings.host, settings.metrics_port)
        print(f"metrics    on http://{settings.host}:{port}/metrics", file=sys.stderr, flush=True)


def _say_listening(servers, host: str) -> None:
    for server in servers:
        print(f"{server.name:<10} listening on {host}:{server.port}", file=sys.stderr, flush=True)
    print("ready (Ctrl-C or SIGTERM stops)", file=sys.stderr, flush=True)


def _cmd_config(_args: argparse.Namespace) -> int:
    from services.common.config_doc import config_reference

    print(config_reference(documented_settings()), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glossator", description="Streamed, cited, validated answers about books and docs sites."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve", help="run one service (settings from GLOSSATOR_<SERVICE>_* env vars)"
    )
    serve.add_argument("service", choices=SERVICES)
    serve.set_defaults(func=_cmd_serve)

    up = commands.add_parser(
        "up", help="run all three services in one process on loopback ports (the embedded default)"
    )
    up.add_argument("--log-format", choices=("json", "console"), default="console")
    up.set_defaults(func=_cmd_up)

    from services.commands import ask, demo, ingest, search
    from services.commands import eval as eval_command

    demo.add_parser(commands)
    ingest.add_parser(commands)
    search.add_parser(commands)
    ask.add_parsers(commands)
    eval_command.add_parser(commands)

    config = commands.add_parser("config", help="print the configuration reference (every env var)")
    config.set_defaults(func=_cmd_config)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in ("serve", "up"):
        configure_logging("WARNING", "console")  # client commands: only an embedded suite's problems
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
