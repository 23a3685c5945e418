"""The `glossator` command.

Command modules are imported only once their command is chosen (they import gRPC, protobuf and the
services): `glossator --help` and `--version` import argparse alone.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import NamedTuple

from services.commands import exit_codes

SERVICES = ("retrieval", "validation", "agent")


class Command(NamedTuple):
    """A command defined in a module of services.commands: `add` makes its parser (and those of
    the module's other commands); `summary` is its line in `glossator --help`, here so that the
    listing needs no import."""

    module: str
    add: str
    summary: str


COMMANDS = {
    "demo": Command("demo", "add_parser", "start the embedded suite, ingest docs/, ask, stream the answer"),
    "ingest": Command(
        "ingest", "add_parser", "ingest a folder of Markdown/MDX/HTML/text files or a site's sitemap.xml"
    ),
    "search": Command("search", "add_parser", "search a collection (hybrid, dense or sparse)"),
    "ask": Command("ask", "add_parsers", "ask one question; the answer streams, sources follow"),
    "chat": Command(
        "ask", "add_parsers", "a conversation: one session across questions (/help lists the chat commands)"
    ),
    "sessions": Command("ask", "add_parsers", "list, show or end your sessions"),
    "collections": Command(
        "collections", "add_parsers", "list the collections with their counts, or delete one"
    ),
    "documents": Command("collections", "add_parsers", "list the documents of a collection, or delete some"),
    "eval": Command("eval", "add_parser", "measure retrieval, grounding or answer quality"),
    "report": Command(
        "report", "add_parser", "what the book is missing: most asked, declined, rated down, replaced (admin)"
    ),
    "config": Command(
        "config",
        "add_parser",
        "print the configuration reference (every env var) with the values in effect here",
    ),
}


class _LazyCommands(argparse._SubParsersAction):
    """Subcommands listed from COMMANDS, whose parsers their module makes when one is chosen."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: dict[str, Command] = {}

    def add_lazy(self, name: str, command: Command) -> None:
        self.add_parser(name, help=command.summary)  # a placeholder: listed, and a valid choice
        self._pending[name] = command

    def add_parser(self, name: str, **kwargs) -> argparse.ArgumentParser:
        if self._pending.pop(name, None) is not None:  # the module's parser replaces the placeholder
            del self._name_parser_map[name]
            kwargs.pop("help", None)  # listed already, from COMMANDS
        return super().add_parser(name, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        command = self._pending.get(values[0])
        if command is not None:
            module = importlib.import_module(f"services.commands.{command.module}")
            getattr(module, command.add)(self)
        super().__call__(parser, namespace, values, option_string)


class _VersionAction(argparse.Action):
    """--version, looked up only when asked for (importlib.metadata takes ~60 ms)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"glossator {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version; in a source tree that was never installed, pyproject's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("glossator")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def _cmd_serve(args: argparse.Namespace) -> int:
    from services.commands.config import service_settings, unknown_settings
    from services.common.logging import configure_logging
    from services.common.server import run_until_signal
    from services.suite import build_service

    settings = service_settings()[args.service]()
    configure_logging(settings.log_level, settings.log_format)
    say = _Announcer(settings.log_format)
    say.unknown_settings(unknown_settings())
    say.data_dirs({args.service: settings})

    async def main() -> None:
        say.metrics(_start_metrics([settings]))
        server = await build_service(args.service, settings)
        await run_until_signal([server], on_started=lambda: say.listening([server], settings.host))

    return _serving(main())


def _cmd_up(args: argparse.Namespace) -> int:
    from services.commands.config import unknown_settings
    from services.common.logging import configure_logging
    from services.common.server import run_until_signal
    from services.suite import SuiteSettings, build_suite

    suite_settings = SuiteSettings.from_env()
    services = {name: getattr(suite_settings, name) for name in SERVICES}
    log_format = args.log_format or ("console" if sys.stderr.isatty() else "json")
    configure_logging(suite_settings.agent.log_level, log_format)
    say = _Announcer(log_format)
    say.unknown_settings(unknown_settings())
    say.data_dirs(services)

    async def main() -> None:
        say.metrics(_start_metrics(services.values()))
        servers = await build_suite(suite_settings)
        if args.web:
            agent = servers[-1]
            servers.append(_edge(agent_target=f"{suite_settings.agent.host}:{agent.port}"))
        await run_until_signal(servers, on_started=lambda: say.listening(servers, suite_settings.agent.host))

    return _serving(main())


def _edge(**overrides):
    """Envoy in front of the agent for browsers (GLOSSATOR_EDGE_* settings, `overrides` on top)."""
    from services.edge.config import EdgeSettings
    from services.edge.proxy import EnvoyProcess

    return EnvoyProcess(EdgeSettings(**overrides) if overrides else EdgeSettings())


def _cmd_web(args: argparse.Namespace) -> int:
    from services.common.logging import configure_logging
    from services.common.server import run_until_signal
    from services.edge.proxy import validate

    edge = _edge()
    log_format = args.log_format or ("console" if sys.stderr.isatty() else "json")
    configure_logging("INFO", log_format)
    if args.write_config:
        from services.edge.envoy_config import render_yaml

        args.write_config.write_text(render_yaml(edge.settings), encoding="utf-8")
        return exit_codes.OK
    if args.check:
        validate(edge.settings)
        print(f"{edge.settings.config_dir / 'envoy.yaml'}: valid", file=sys.stderr)
        return exit_codes.OK
    say = _Announcer(log_format)

    async def main() -> None:
        await run_until_signal([edge], on_started=lambda: say.listening([edge], edge.settings.host))

    return _serving(main())


def _serving(main) -> int:
    """Runs the servers until a signal (the process then ends); a port that cannot be bound is
    a clear error and exit code 2, not a traceback, and so is a local model that cannot be loaded."""
    from services.common.model_files import ModelUnavailable
    from services.common.server import PortUnavailable, run_server_process
    from services.edge.proxy import EdgeUnavailable

    try:
        run_server_process(main)
    except (PortUnavailable, ModelUnavailable, EdgeUnavailable) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _start_metrics(services) -> list[str]:
    """One /metrics endpoint per distinct port the services configure (a process has one registry:
    each endpoint serves every service's metrics); returns their URLs."""
    from services.common.metrics import start_metrics_endpoint
    from services.common.server import PortUnavailable

    hosts = {}
    for settings in services:
        if settings.metrics_port is not None:
            hosts.setdefault(settings.metrics_port, settings.host)
    urls = []
    for port, host in hosts.items():
        try:
            bound = start_metrics_endpoint(host, port)
        except OSError as error:
            raise PortUnavailable(
                f"cannot serve metrics on {host}:{port}: {error.strerror or error}"
            ) from None
        urls.append(f"http://{host}:{bound}/metrics")
    return urls


class _Announcer:
    """The start-up lines of `serve` and `up` on stderr: aligned text for people, or, when the logs
    are JSON, log events, so that every line of stderr stays one JSON object."""

    def __init__(self, log_format: str) -> None:
        self._json = log_format == "json"

    def _say(self, text: str, event: str, level: str = "info", **fields) -> None:
        if self._json:
            from services.common.logging import get_logger

            getattr(get_logger("glossator.cli"), level)(event, **fields)
        else:
            print(text, file=sys.stderr, flush=True)

    def unknown_settings(self, warnings: list[str]) -> None:
        for warning in warnings:
            self._say(f"warning: {warning}", "unknown_setting", "warning", message=warning)

    def data_dirs(self, services: dict) -> None:
        """Where the data goes, made absolute: a relative GLOSSATOR_*_DATA_DIR (the default
        .glossator) depends on the directory the command was started in."""
        users: dict[Path, list[str]] = {}
        for name, settings in services.items():
            users.setdefault(settings.data_dir.resolve(), []).append(name)
        for path, names in users.items():
            which = f" ({', '.join(names)})" if len(users) > 1 else ""
            self._say(f"data       in {path}{which}", "data_dir", path=str(path), services=names)

    def metrics(self, urls: list[str]) -> None:
        for url in urls:
            self._say(f"metrics    on {url}", "metrics_endpoint", url=url)

    def listening(self, servers, host: str) -> None:
        for server in servers:
            self._say(
                f"{server.name:<10} listening on {host}:{server.port}",
                "listening",
                service=server.name,
                address=f"{host}:{server.port}",
            )
        self._say("ready (Ctrl-C or SIGTERM stops)", "ready")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="glossator", description="Streamed, cited, validated answers about books and docs sites."
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", action=_LazyCommands)

    serve = commands.add_parser(
        "serve", help="run one service (settings from GLOSSATOR_<SERVICE>_* env vars)"
    )
    serve.add_argument("service", choices=SERVICES)
    serve.set_defaults(func=_cmd_serve)

    up = commands.add_parser(
        "up", help="run all three services in one process on loopback ports (the embedded default)"
    )
    up.add_argument(
        "--log-format",
        choices=("json", "console"),
        help="default: console on a terminal, json otherwise (a pipe gets no colour codes)",
    )
    up.add_argument(
        "--web",
        action="store_true",
        help="also run Envoy in front of the agent for browsers (Connect, gRPC-Web; GLOSSATOR_EDGE_*)",
    )
    up.set_defaults(func=_cmd_up)

    web = commands.add_parser(
        "web",
        help="run Envoy in front of a running agent for browsers (Connect, gRPC-Web, CORS; GLOSSATOR_EDGE_*)",
    )
    web.add_argument("--check", action="store_true", help="write envoy.yaml, validate it with envoy, exit")
    web.add_argument(
        "--write-config",
        type=Path,
        metavar="FILE",
        help="only write Envoy's config to FILE (a Kubernetes init container does, for the Envoy image)",
    )
    web.add_argument("--log-format", choices=("json", "console"), help="as for `up`")
    web.set_defaults(func=_cmd_web)

    for name, command in COMMANDS.items():
        commands.add_lazy(name, command)

    return parser


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the innermost subcommand `args` chose (`eval retrieval`'s in `glossator eval
    retrieval ...`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                return chosen_parser(chosen, args)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs one command; a reader of stdout that went away (`| head`) ends it quietly with
    exit_codes.BROKEN_PIPE instead of a BrokenPipeError traceback."""
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except BrokenPipeError:
        # Whatever is still buffered goes nowhere: the interpreter's own flush would fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exit_codes.BROKEN_PIPE


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said with the usage of the (sub)command they were given to, not the top level's
        chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command not in ("serve", "up", "web"):
        from services.common.logging import configure_logging

        configure_logging("WARNING", "console")  # client commands: only an embedded suite's problems
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
