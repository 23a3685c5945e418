"""`glossator ask`, `glossator chat` and `glossator sessions`: talk to the agent service."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TextIO

import grpc
from google.protobuf.json_format import MessageToDict

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.commands.connect import add_target_option, connection_failed, explain_rpc_error, service_channel

_STATUS = {
    agent_pb2.VALIDATION_STATUS_VALIDATED: "validated",
    agent_pb2.VALIDATION_STATUS_REPLACED: "replaced (not supported by the book)",
    agent_pb2.VALIDATION_STATUS_UNAVAILABLE: "validation unavailable",
    agent_pb2.VALIDATION_STATUS_SKIPPED: "validation off",
}


# Waited for an answer on top of the agent's own model and validation deadlines.
_TIMEOUT_MARGIN_S = 5.0


def default_timeout() -> float:
    """Seconds an answer may take: the agent's LLM and validation deadlines (as this machine's
    GLOSSATOR_AGENT_* environment sets them) plus a margin."""
    from services.agent.config import AgentSettings

    settings = AgentSettings()
    return settings.llm_timeout_seconds + settings.validation_timeout_seconds + _TIMEOUT_MARGIN_S


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds (got {text})")
    return value


def _question_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--user",
        default="",
        help="user id owning the session (default: anonymous, or the user your token names)",
    )
    parser.add_argument("--collection", default="default", help="collection (book) to answer from")
    parser.add_argument("--top-k", type=int, default=5, help="chunks to retrieve, 1-20")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long to wait for an answer (default: GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS + "
        f"GLOSSATOR_AGENT_VALIDATION_TIMEOUT_SECONDS + {_TIMEOUT_MARGIN_S:g})",
    )
    add_target_option(parser, "agent")


def _session_token_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--session-token",
        default="",
        help="token of an anonymous session (printed when it started); required to reach one",
    )


def add_parsers(commands) -> None:
    ask = commands.add_parser("ask", help="ask one question; the answer streams, sources follow")
    ask.add_argument("question")
    ask.add_argument("--session", default="", help="continue this session (UUID)")
    _session_token_option(ask)
    ask.add_argument("--selected-text", default="", help="a passage the reader highlighted")
    ask.add_argument(
        "--context", action="append", default=[], metavar="KEY=VALUE", help="user context (page, chapter...)"
    )
    ask.add_argument("--json", action="store_true", help="print the final response as JSON, no streaming")
    _question_options(ask)
    ask.set_defaults(func=lambda args: asyncio.run(_ask(args)))

    chat = commands.add_parser("chat", help="a conversation: one session across questions (/end to finish)")
    _question_options(chat)
    chat.set_defaults(func=lambda args: asyncio.run(_chat(args)))

    sessions = commands.add_parser("sessions", help="list, show or end your sessions")
    sessions.add_argument("action", choices=("list", "show", "end"))
    sessions.add_argument("session_id", nargs="?", default="")
    sessions.add_argument(
        "--user", default="", help="whose sessions (required to list, unless your token names you)"
    )
    _session_token_option(sessions)
    sessions.add_argument("--all", action="store_true", help="include expired and terminated sessions")
    add_target_option(sessions, "agent")
    sessions.set_defaults(func=lambda args: asyncio.run(_sessions(args)))


async def stream_answer(
    stub: agent_pb2_grpc.AgentServiceStub,
    request: agent_pb2.AskRequest,
    out: TextIO | None = None,
    *,
    timeout: float | None = None,
) -> agent_pb2.Response:
    """Prints the answer as it streams, then its sources and verdict; returns the final response.

    The final response's answer is the one that counts: when it differs from the streamed text
    (citation markers added, an ungrounded answer replaced) it is printed again. A failure after
    part of the answer was printed ends that line first, so the error starts on its own.
    """
    out = out or sys.stdout
    response = None
    streamed: list[str] = []
    try:
        async for event in stub.AskStream(request, timeout=default_timeout() if timeout is None else timeout):
            final = _show(event, out, streamed)
            response = final if final is not None else response
    except grpc.aio.AioRpcError:
        if streamed:
            print(file=out, flush=True)
        raise
    if response is None:
        raise RuntimeError("the stream ended without a completed event")
    text = "".join(streamed)
    if not text.strip():  # nothing streamed (a cached answer, say): the final answer is all there is
        print(response.answer, file=out)
    else:
        print(file=out)
        if response.answer.split() != text.split():
            replaced = response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
            print("\nReplaced answer:" if replaced else "\nAnswer with citations:", file=out)
            print(response.answer, file=out)
    print_sources(response, out)
    return response


def _show(event: agent_pb2.AskStreamResponse, out: TextIO, streamed: list[str]) -> agent_pb2.Response | None:
    """Prints one stream event (progress on stderr, answer text on `out`); returns the final
    response when the event carries it."""
    kind = event.WhichOneof("event")
    if kind == "started":
        started = event.started
        token = f", --session-token {started.session_token}" if started.session_token else ""
        print(f"· answering with {started.model} (session {started.session_id}{token})", file=sys.stderr)
    elif kind == "tool_call":
        print(f"· {event.tool_call.name} {event.tool_call.arguments}", file=sys.stderr)
    elif kind == "tool_error":
        print(f"· {event.tool_error.name} failed: {event.tool_error.message}", file=sys.stderr)
    elif kind == "retrieval":
        print(f"· retrieved {len(event.retrieval.chunks)} chunks", file=sys.stderr)
    elif kind == "answer_delta":
        streamed.append(event.answer_delta.text)
        print(event.answer_delta.text, end="", flush=True, file=out)
    elif kind == "completed":
        return event.completed.response
    return None


def print_sources(response: agent_pb2.Response, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if response.sources:
        print("\nSources:", file=out)
    for source in response.sources:
        where = " > ".join(source.section_path) or source.title
        print(f"  [{source.index}] {where} — {source.source_url}", file=out)
    g = response.grounding
    verdict = _STATUS.get(g.status, "")
    if g.status in (agent_pb2.VALIDATION_STATUS_VALIDATED, agent_pb2.VALIDATION_STATUS_REPLACED):
        verdict += (
            f": {'grounded' if g.is_grounded else 'NOT grounded'} {g.grounding_score:.2f} "
            f"({g.supported_claims}/{g.claims} claims supported, {g.citations_valid}/{g.citations_found} citations valid)"
        )
    cached = " · cached" if response.cached else ""
    print(
        f"\n{verdict} · confidence {response.confidence:.2f} · model {response.model}{cached} · "
        f"{response.timings.total_ms:.0f} ms",
        file=out,
    )


def _request(
    args: argparse.Namespace, question: str, session_id: str = "", session_token: str = ""
) -> agent_pb2.AskRequest:
    context = dict(item.split("=", 1) for item in getattr(args, "context", []) if "=" in item)
    return agent_pb2.AskRequest(
        query=question,
        session_id=session_id,
        session_token=session_token,
        user_id=args.user,
        selected_text=getattr(args, "selected_text", ""),
        top_k=args.top_k,
        collection=args.collection,
        user_context=context,
    )


async def _ask(args: argparse.Namespace) -> int:
    timeout = args.timeout or default_timeout()
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            request = _request(args, args.question, args.session, args.session_token)
            if args.json:
                reply = await stub.Ask(request, timeout=timeout)
                print(json.dumps(MessageToDict(reply.response), indent=2))
            else:
                await stream_answer(stub, request, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target, timeout=timeout)
    return 0


async def _chat(args: argparse.Namespace) -> int:
    timeout = args.timeout or default_timeout()
    session_id = session_token = ""
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            print("Ask about the book; /end ends the session, Ctrl-D leaves it open.", file=sys.stderr)
            while True:
                try:
                    question = await asyncio.to_thread(input, "\n> ")
                except EOFError:
                    break
                question = question.strip()
                if not question:
                    continue
                if question == "/end":
                    if session_id:
                        await stub.EndSession(
                            agent_pb2.EndSessionRequest(
                                session_id=session_id, user_id=args.user, session_token=session_token
                            )
                        )
                        print(f"session {session_id} ended", file=sys.stderr)
                    break
                try:
                    response = await stream_answer(
                        stub, _request(args, question, session_id, session_token), timeout=timeout
                    )
                    session_id, session_token = response.session_id, response.session_token
                except grpc.aio.AioRpcError as error:
                    # Without the agent, or without the time to answer, the next question fails too.
                    if connection_failed(error) or error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                        raise
                    explain_rpc_error(error, args.target, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target, timeout=timeout)
    return 0


async def _sessions(args: argparse.Namespace) -> int:
    if args.action in ("show", "end") and not args.session_id:
        print(f"error: `sessions {args.action}` needs a session id", file=sys.stderr)
        return 2
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            if args.action == "list":
                token = ""
                while True:
                    page = await stub.ListSessions(
                        agent_pb2.ListSessionsRequest(
                            user_id=args.user, page_token=token, include_ended=args.all
                        )
                    )
                    for s in page.sessions:
                        state = agent_pb2.SessionState.Name(s.state).removeprefix("SESSION_STATE_").lower()
                        print(
                            f"{s.session_id}  {state:<10}  {s.turn_count:>3} turns  {s.last_active_at.ToJsonString()}"
                        )
                    token = page.next_page_token
                    if not token:
                        break
            elif args.action == "show":
                reply = await stub.GetSession(
                    agent_pb2.GetSessionRequest(
                        session_id=args.session_id, user_id=args.user, session_token=args.session_token
                    )
                )
                for turn in reply.session.turns:
                    print(f"> {turn.query}\n{turn.answer}\n")
            else:
                reply = await stub.EndSession(
                    agent_pb2.EndSessionRequest(
                        session_id=args.session_id, user_id=args.user, session_token=args.session_token
                    )
                )
                print(f"session {reply.session.session_id} ended")
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    return 0
