"""How CLI commands reach the services: a running suite by address, or one started in-process."""

from __future__ import annotations

import argparse
import ipaddress
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.commands import exit_codes
from services.common.clients import ChannelSecurity, make_channel
from services.common.errors import ERROR_DOMAIN, Reason
from services.common.interceptors import REQUEST_ID_KEY
from services.common.server import GlossatorServer

DEFAULT_TARGETS = {
    "agent": "127.0.0.1:50051",
    "retrieval": "127.0.0.1:50052",
    "validation": "127.0.0.1:50053",
}


class ClientSettings(BaseSettings):
    """Where the client commands find a running suite (the environment alone, not .env); the
    configuration reference documents it as a table of its own."""

    model_config = SettingsConfigDict(env_prefix="GLOSSATOR_", extra="ignore")

    agent_target: str = Field(
        DEFAULT_TARGETS["agent"],
        description="host:port of the agent service for ask, chat, sessions and eval answers (--agent).",
    )
    retrieval_target: str = Field(
        DEFAULT_TARGETS["retrieval"],
        description="host:port of the retrieval service for ingest, search, eval retrieval and eval answers "
        "(--retrieval).",
    )
    validation_target: str = Field(
        DEFAULT_TARGETS["validation"],
        description="host:port of the validation service for eval grounding (--validation).",
    )


def default_target(service: str) -> str:
    return getattr(ClientSettings(), f"{service}_target")


class Target(str):
    """A service address as the command line gave it, with the service's default port added when it
    had none. A str, so it goes wherever a gRPC target does; it remembers the service it should
    reach, so a call that finds another service there can say so."""

    service: str

    def __new__(cls, value: str, service: str) -> Target:
        target = super().__new__(cls, value)
        target.service = service
        return target


# gRPC's own target syntaxes (unix:/path, dns:///host:port...): passed on as they are.
_GRPC_SCHEMES = ("dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:")
# HOST, HOST:PORT, [IPV6] or [IPV6]:PORT.
_HOST_PORT = re.compile(r"(?P<host>\[[^\[\]]+\]|[\w.-]+)(?::(?P<port>[^:]*))?")


def parse_target(text: str, service: str) -> Target:
    """`text` as a target of `service`: a HOST without a port gets the service's default port
    (gRPC would dial 443); anything that is not HOST[:PORT] is a usage error (argparse's exit 2)."""
    text = text.strip()
    if text.startswith(_GRPC_SCHEMES):
        return Target(text, service)
    if _is_ipv6(text):  # a bare IPv6 address: its colons are not a port's
        host, port = f"[{text}]", None
    elif match := _HOST_PORT.fullmatch(text):
        host, port = match["host"], match["port"]
    else:
        raise argparse.ArgumentTypeError(
            f"not HOST[:PORT]: {text!r} (for example localhost:{_default_port(service)}, no scheme or path)"
        )
    if port is None:
        port = _default_port(service)
    elif not (port.isdigit() and 0 < int(port) < 65536):
        raise argparse.ArgumentTypeError(f"the port of {text!r} is not a number from 1 to 65535")
    return Target(f"{host}:{port}", service)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _default_port(service: str) -> str:
    return DEFAULT_TARGETS[service].rsplit(":", 1)[1]


def add_target_option(parser, service: str) -> None:
    default = default_target(service)
    parser.add_argument(
        f"--{service}",
        dest="target",
        type=lambda text: parse_target(text, service),
        default=default,
        metavar="HOST[:PORT]",
        help=f"address of the {service} service (default {default}, "
        f"env GLOSSATOR_{service.upper()}_TARGET; port {_default_port(service)} when left out)",
    )
    parser.add_argument(
        "--embedded",
        metavar="DATA_DIR",
        type=Path,
        help="start the suite in this process with its data under DATA_DIR instead of connecting",
    )


@asynccontextmanager
async def suite_channels(
    targets: dict[str, str], embedded: Path | None
) -> AsyncIterator[dict[str, grpc.aio.Channel]]:
    """Channels to the named services: at their targets, or to servers started in-process over
    `embedded` (the agent brings the other two along, since it calls them)."""
    servers: list[GlossatorServer] = []
    if embedded is not None:
        from services.suite import build_service, build_suite, loopback_settings

        settings = loopback_settings(embedded)
        if "agent" in targets:
            servers = await build_suite(settings)
        else:
            servers = [await build_service(name, getattr(settings, name)) for name in targets]
        for server in servers:
            await server.start()
        targets = {s.name: f"127.0.0.1:{s.port}" for s in servers if s.name in targets}
    security = ChannelSecurity.from_env()
    channels = {name: make_channel(target, security=security) for name, target in targets.items()}
    try:
        yield channels
    finally:
        for channel in channels.values():
            await channel.close()
        for server in servers:
            await server.stop(grace=1.0)


@asynccontextmanager
async def service_channel(
    service: str, target: str, embedded: Path | None
) -> AsyncIterator[grpc.aio.Channel]:
    """A channel to one service: at `target`, or to one started in-process over `embedded`."""
    async with suite_channels({service: target}, embedded) as channels:
        yield channels[service]


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The google.rpc.ErrorInfo of domain glossator.dev a failed call carries, if any."""
    try:
        status = rpc_status.from_call(error)
    except ValueError:  # details that do not match the call's status: not ours
        return None
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info) and info.domain == ERROR_DOMAIN:
            return info
    return None


def connection_failed(error: grpc.aio.AioRpcError) -> bool:
    """Whether the call failed because the service could not be reached at all (rather than the
    service answering UNAVAILABLE about one of its own dependencies)."""
    if error.code() != grpc.StatusCode.UNAVAILABLE or error_info(error) is not None:
        return False
    # Every answer of a Glossator server carries its request id; gRPC's own failures do not.
    return not any(key == REQUEST_ID_KEY for key, _ in error.trailing_metadata() or ())


def wrong_service(error: grpc.aio.AioRpcError) -> bool:
    """Whether the server at the target answered but serves another service: gRPC's own answer for
    a method it has no handler for (a Glossator servicer's UNIMPLEMENTED would say more)."""
    return error.code() == grpc.StatusCode.UNIMPLEMENTED and error.details() == "Method not found!"


_EXIT_CODES = {
    grpc.StatusCode.NOT_FOUND: exit_codes.NOT_FOUND,
    grpc.StatusCode.INVALID_ARGUMENT: exit_codes.INVALID_ARGUMENT,
    grpc.StatusCode.UNAUTHENTICATED: exit_codes.DENIED,
    grpc.StatusCode.PERMISSION_DENIED: exit_codes.DENIED,
}


def exit_code(error: grpc.aio.AioRpcError) -> int:
    """The exit code a command that failed with `error` ends with (the table in exit_codes.py)."""
    if connection_failed(error) or wrong_service(error):
        return exit_codes.UNREACHABLE
    return _EXIT_CODES.get(error.code(), exit_codes.RPC_FAILED)


# The agent setting that points at each dependency an ErrorInfo can name.
_DEPENDENCY_SETTINGS = {
    "retrieval": "GLOSSATOR_AGENT_RETRIEVAL_TARGET",
    "validation": "GLOSSATOR_AGENT_VALIDATION_TARGET",
    "sessions": "GLOSSATOR_AGENT_REDIS_URL (or the SQLite file under GLOSSATOR_AGENT_DATA_DIR)",
}


def explain_rpc_error(error: grpc.aio.AioRpcError, target: str, *, timeout: float | None = None) -> int:
    """Prints advice that fits the failure of a call to `target` and returns the exit code
    (`exit_code`).

    `timeout` is the deadline the call had (commands with a --timeout option pass it): with it,
    DEADLINE_EXCEEDED says how to give the answer more time. Server messages are printed as they are.
    """
    code, message = error.code(), error.details() or ""
    info = error_info(error)
    reason = info.reason if info is not None else ""
    if reason == Reason.COLLECTION_NOT_FOUND:
        name = info.metadata.get("collection", "")
        advice = (
            f"error: collection {name!r} not found: `glossator collections` lists the collections; "
            f"ingest to create it (glossator ingest PATH --collection {name})"
        )
    elif reason == Reason.LLM_REJECTED:
        advice = (
            f"error: {message}\n  The agent's LLM endpoint refused the request: check "
            "GLOSSATOR_AGENT_LLM_BASE_URL, GLOSSATOR_AGENT_LLM_MODEL and GLOSSATOR_AGENT_LLM_API_KEY "
            "of the agent service."
        )
    elif reason == Reason.LLM_UNAVAILABLE:
        advice = (
            f"error: {message}\n  The agent's LLM endpoint is down or overloaded; check the model server."
        )
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            advice += " If it is only slow, raise GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS on the agent."
    elif reason == Reason.ANSWER_VOID:
        advice = f"error: the answer was cut off; the partial text above is void.\n  {message}"
    elif reason == Reason.DEPENDENCY_UNAVAILABLE:
        service = info.metadata.get("service", "")
        setting = _DEPENDENCY_SETTINGS.get(service, "the agent's setting for it")
        advice = (
            f"error: the agent cannot use its {service or 'dependency'} service: {message}\n"
            f"  Check that the service is running and that {setting} points at it."
        )
    elif code == grpc.StatusCode.UNAUTHENTICATED:
        advice = (
            f"error: {message}\n  The suite requires a token: set GLOSSATOR_AUTH_TOKEN to its service "
            "token (the same value the services run with)."
        )
    elif code == grpc.StatusCode.PERMISSION_DENIED:
        advice = (
            f"error: {message}\n  Ingest, DeleteDocuments and DeleteCollection need an admin token; "
            "the service token (GLOSSATOR_AUTH_TOKEN) is one."
        )
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED and timeout is not None:
        server_said = "" if message == "Deadline Exceeded" else f" ({message})"
        advice = (
            f"error: no answer within {timeout:g} s{server_said}; raise --timeout "
            "(and GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS on the agent)."
        )
    elif connection_failed(error):
        advice = (
            f"error: cannot reach {target} ({message}). Start the suite with `glossator up`, "
            "or pass --embedded DATA_DIR. A suite serving TLS needs GLOSSATOR_TLS_CA_FILE (and, for "
            "mTLS, GLOSSATOR_TLS_CERT_FILE and GLOSSATOR_TLS_KEY_FILE) here too."
        )
    elif wrong_service(error):
        service = target.service if isinstance(target, Target) else ""
        others = " or ".join(name for name in DEFAULT_TARGETS if name != service)
        advice = (
            f"error: {target} does not serve the {service or 'expected'} service (is it the {others} port?)"
        )
    else:
        advice = f"error: {code.name}: {message}"
    print(advice, file=sys.stderr)
    return exit_code(error)
