"""`glossator ask`, `glossator chat` and `glossator sessions`: talk to the agent service."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
from typing import TextIO

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.commands import exit_codes
from services.commands.connect import add_target_option, exit_code, explain_rpc_error, service_channel
from services.common.contract_limits import DEFAULT_TOP_K, MAX_TOP_K, MIN_TOP_K

_STATUS = {
    agent_pb2.VALIDATION_STATUS_VALIDATED: "validated",
    agent_pb2.VALIDATION_STATUS_REPLACED: "replaced (not fully supported by the book)",
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
    parser.add_argument(
        "--top-k", type=int, default=DEFAULT_TOP_K, help=f"chunks to retrieve, {MIN_TOP_K}-{MAX_TOP_K}"
    )
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
    ask.add_argument(
        "--json", action="store_true", help="print the final response as JSON (every field), no streaming"
    )
    _question_options(ask)
    ask.set_defaults(func=lambda args: asyncio.run(_ask(args)))

    chat = commands.add_parser(
        "chat", help="a conversation: one session across questions (/help lists the chat commands)"
    )
    _question_options(chat)
    chat.set_defaults(func=_chat)

    sessions = commands.add_parser("sessions", help="list, show or end your sessions")
    sessions.add_argument("action", choices=("list", "show", "end"))
    sessions.add_argument("session_id", nargs="?", default="")
    sessions.add_argument(
        "--user", default="", help="whose sessions (required to list, unless your token names you)"
    )
    _session_token_option(sessions)
    sessions.add_argument("--all", action="store_true", help="include expired and terminated sessions")
    sessions.add_argument(
        "--json",
        action="store_true",
        help='print JSON with every field: {"sessions": [...]} for list, the session for show and end',
    )
    add_target_option(sessions, "agent")
    sessions.set_defaults(func=lambda args: asyncio.run(_sessions(args)))


async def stream_answer(
    stub: agent_pb2_grpc.AgentServiceStub,
    request: agent_pb2.AskRequest,
    out: TextIO | None = None,
    *,
    timeout: float | None = None,
    name_session: bool = True,
) -> agent_pb2.Response:
    """Prints the answer as it streams, then its sources and verdict (and, with `name_session`,
    how to continue its session); returns the final response.

    The final response's answer is the one that counts (citation markers added, an ungrounded
    answer replaced): `_PlainAnswer` and `_TerminalAnswer` say how each kind of output shows it.
    """
    out = out or sys.stdout
    view = _TerminalAnswer(out) if out.isatty() else _PlainAnswer(out)
    progress = _Progress()
    response = None
    try:
        async for event in stub.AskStream(request, timeout=default_timeout() if timeout is None else timeout):
            response = progress.show(event, view) or response
    except BaseException:
        view.interrupted()
        raise
    if response is None:
        raise RuntimeError("the stream ended without a completed event")
    view.completed(response)
    print_sources(response, out)
    if name_session:
        progress.session(response)
    return response


class _PlainAnswer:
    """The answer for a pipe or a file: the text as it streams, then the final answer again only
    when its words differ, under a heading that says why."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.streamed: list[str] = []

    def delta(self, text: str) -> None:
        self.streamed.append(text)
        print(text, end="", flush=True, file=self.out)

    def interrupted(self) -> None:
        """Ends the partial answer's line, so an error starts on its own."""
        if self.streamed:
            print(file=self.out, flush=True)

    def completed(self, response: agent_pb2.Response) -> None:
        text = "".join(self.streamed)
        if not text.strip():  # nothing streamed (a cached answer, say): the final answer is all there is
            print(response.answer, file=self.out)
            return
        print(file=self.out)
        if response.answer.split() != text.split():
            print(f"\n{_heading(response)}\n{response.answer}", file=self.out)


class _TerminalAnswer(_PlainAnswer):
    """The answer on a terminal, its Markdown rendered by rich: live while it streams (cut at the
    screen's height), then the final answer printed whole in its place, which a replaced answer's
    heading announces."""

    def __init__(self, out: TextIO) -> None:
        from rich.console import Console
        from rich.live import Live

        super().__init__(out)
        self.console = Console(file=out)
        self.live = Live(console=self.console, transient=True, vertical_overflow="crop", refresh_per_second=8)

    def delta(self, text: str) -> None:
        self.streamed.append(text)
        self.live.update(_markdown("".join(self.streamed)))
        self.live.start()

    def interrupted(self) -> None:
        """Leaves the partial answer on screen (an error may declare it void), the cursor back."""
        self.live.stop()
        self._render("".join(self.streamed))

    def completed(self, response: agent_pb2.Response) -> None:
        self.live.stop()
        if (
            response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
            and "".join(self.streamed).strip()
        ):
            self.console.print(_heading(response), style="bold")
        self._render(response.answer)

    def _render(self, text: str) -> None:
        if text.strip():
            self.console.print(_markdown(text))


def _markdown(text: str):
    from rich.markdown import Markdown  # imported when used: rich is slow to import for --help

    return Markdown(text)


def _heading(response: agent_pb2.Response) -> str:
    replaced = response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    return "Replaced answer:" if replaced else "Answer with citations:"


class _Progress:
    """The answer's progress lines on stderr. A failed search is shown once the answer goes on: when
    it ends the answer, the error that follows says it better. The session (and an anonymous one's
    token) is named only once the answer completed: a first question that failed leaves nothing
    to continue."""

    def __init__(self) -> None:
        self._held = ""

    def _flush(self) -> None:
        if self._held:
            print(self._held, file=sys.stderr)
            self._held = ""

    def _say(self, line: str) -> None:
        self._flush()
        print(line, file=sys.stderr)

    def show(self, event: agent_pb2.AskStreamResponse, view: _PlainAnswer) -> agent_pb2.Response | None:
        """Shows one stream event (progress on stderr, answer text in `view`); returns the final
        response when the event carries it."""
        kind = event.WhichOneof("event")
        if kind == "started":
            self._say(f"· answering with {event.started.model}")
        elif kind == "tool_call":
            self._say(f"· {event.tool_call.name} {event.tool_call.arguments}")
        elif kind == "tool_error":
            self._flush()
            self._held = f"· {event.tool_error.name} failed: {event.tool_error.message}"
        elif kind == "retrieval":
            self._say(f"· retrieved {len(event.retrieval.chunks)} chunks")
        elif kind == "answer_delta":
            self._flush()
            view.delta(event.answer_delta.text)
        elif kind == "completed":
            self._flush()
            return event.completed.response
        return None

    def session(self, response: agent_pb2.Response) -> None:
        token = f" --session-token {response.session_token}" if response.session_token else ""
        print(
            f"· session {response.session_id} (continue it: --session {response.session_id}{token})",
            file=sys.stderr,
        )


def print_sources(response: agent_pb2.Response, out: TextIO | None = None) -> None:
    """The sources the answer cites, by the numbers its [n] markers use: the numbers the search
    gave the passages, so they have gaps when only some are cited (the heading says so)."""
    out = out or sys.stdout
    numbers = [source.index for source in response.sources]
    if numbers and numbers != list(range(1, len(numbers) + 1)):
        print("\nSources (the passages cited, numbered as the search found them):", file=out)
    elif numbers:
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


def message_dict(message: Message) -> dict:
    """`message` as proto3 JSON with every field, false, zero and empty ones too: clients of --json
    find each key they expect (an ungrounded answer has "isGrounded": false)."""
    return MessageToDict(message, always_print_fields_with_no_presence=True)


def print_json(value: dict) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


async def _ask(args: argparse.Namespace) -> int:
    timeout = args.timeout or default_timeout()
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            request = _request(args, args.question, args.session, args.session_token)
            if args.json:
                reply = await stub.Ask(request, timeout=timeout)
                print_json(message_dict(reply.response))
            else:
                await stream_answer(stub, request, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target, timeout=timeout)
    return exit_codes.OK


CHAT_HELP = """\
/help  this list
/end   end the session and leave (Ctrl-D or Ctrl-C leaves it open: continue it with ask --session)
Ctrl-C while an answer streams cancels that answer.
Anything else is a question about the book; arrow keys edit it and recall earlier ones."""

# A chat command is one word after a slash; "/etc/hosts?" is a question.
_CHAT_COMMAND = re.compile(r"/\w+")

# Failures every further question would meet too (no agent, collection, session or token) end a chat.
_ENDS_CHAT = frozenset({exit_codes.UNREACHABLE, exit_codes.NOT_FOUND, exit_codes.DENIED})


def _line_editing():
    """readline for input(): line editing and the chat's history, kept in memory only (never
    written to disk). Lines are added by hand, so the history is the same with a terminal or not."""
    import readline

    readline.set_auto_history(False)
    return readline


def _chat(args: argparse.Namespace) -> int:
    """The conversation runs its event loop only while a call is made: input() waits on the main
    thread, where Ctrl-C reaches it. Ctrl-C at the prompt leaves the chat (the session stays open,
    as with Ctrl-D; exit code 130); Ctrl-C while an answer streams cancels that answer and returns
    to the prompt."""
    timeout = args.timeout or default_timeout()
    with asyncio.Runner() as runner, contextlib.ExitStack() as closing:
        try:
            channels = contextlib.AsyncExitStack()
            channel = runner.run(
                channels.enter_async_context(service_channel("agent", args.target, args.embedded))
            )
            closing.callback(runner.run, channels.aclose())
            return _Chat(args, agent_pb2_grpc.AgentServiceStub(channel), runner, timeout).converse()
        except grpc.aio.AioRpcError as error:
            return explain_rpc_error(error, args.target, timeout=timeout)
        except KeyboardInterrupt:  # while connecting, or ending the session
            print("\ninterrupted", file=sys.stderr)
            return exit_codes.INTERRUPTED


class _Chat:
    """One conversation: its session (from the first answer on) and the turns of its prompt."""

    def __init__(
        self,
        args: argparse.Namespace,
        stub: agent_pb2_grpc.AgentServiceStub,
        runner: asyncio.Runner,
        timeout: float,
    ) -> None:
        self.args, self.stub, self.runner, self.timeout = args, stub, runner, timeout
        self.session_id = self.session_token = ""
        self.readline = _line_editing()

    def converse(self) -> int:
        print(
            "Ask about the book; /end ends the session, Ctrl-D leaves it open (so does Ctrl-C at the "
            "prompt), /help lists the commands.",
            file=sys.stderr,
        )
        while True:
            try:
                line = input("\n> ")
            except EOFError:
                return exit_codes.OK
            except KeyboardInterrupt:
                left = f": continue it with ask --session {self.session_id}" if self.session_id else ""
                print(f"\nleft the chat; the session stays open{left}", file=sys.stderr)
                return exit_codes.INTERRUPTED
            question = line.strip()
            if not question:
                continue
            self.readline.add_history(question)
            if question == "/end":
                self._end()
                return exit_codes.OK
            if question == "/help":
                print(CHAT_HELP, file=sys.stderr)
            elif _CHAT_COMMAND.fullmatch(question):
                print(f"unknown command {question}; /help lists the commands", file=sys.stderr)
            else:
                self._answer(question)

    def _answer(self, question: str) -> None:
        args = self.args
        request = _request(args, question, self.session_id, self.session_token)
        answer = stream_answer(self.stub, request, timeout=self.timeout, name_session=not self.session_id)
        try:
            response = self.runner.run(answer)
        except KeyboardInterrupt:
            print("\n(answer cancelled)", file=sys.stderr)
            return
        except grpc.aio.AioRpcError as error:
            if exit_code(error) in _ENDS_CHAT or error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
            explain_rpc_error(error, args.target, timeout=self.timeout)
            return
        self.session_id, self.session_token = response.session_id, response.session_token

    def _end(self) -> None:
        if not self.session_id:
            return
        request = agent_pb2.EndSessionRequest(
            session_id=self.session_id, user_id=self.args.user, session_token=self.session_token
        )
        self.runner.run(self.stub.EndSession(request))
        print(f"session {self.session_id} ended", file=sys.stderr)


async def _sessions(args: argparse.Namespace) -> int:
    if args.action in ("show", "end") and not args.session_id:
        print(f"error: `sessions {args.action}` needs a session id", file=sys.stderr)
        return exit_codes.USAGE
    try:
        async with service_channel("agent", args.target, args.embedded) as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            if args.action == "list":
                await _list_sessions(stub, args)
                return exit_codes.OK
            ref = {"session_id": args.session_id, "user_id": args.user, "session_token": args.session_token}
            if args.action == "show":
                session = (await stub.GetSession(agent_pb2.GetSessionRequest(**ref))).session
            else:
                session = (await stub.EndSession(agent_pb2.EndSessionRequest(**ref))).session
    except grpc.aio.AioRpcError as error:
        return explain_rpc_error(error, args.target)
    if args.json:
        print_json(message_dict(session))
    elif args.action == "show":
        for turn in session.turns:
            print(f"> {turn.query}\n{turn.answer}\n")
    else:
        print(f"session {session.session_id} ended")
    return exit_codes.OK


async def _list_sessions(stub: agent_pb2_grpc.AgentServiceStub, args: argparse.Namespace) -> None:
    """Every page of the user's sessions: a table under a header, or {"sessions": [...]} with --json."""
    sessions: list[agent_pb2.Session] = []
    token = ""
    while True:
        page = await stub.ListSessions(
            agent_pb2.ListSessionsRequest(user_id=args.user, page_token=token, include_ended=args.all)
        )
        sessions.extend(page.sessions)
        token = page.next_page_token
        if not token:
            break
    if args.json:
        print_json({"sessions": [message_dict(s) for s in sessions]})
    elif not sessions:  # said on stderr, like the progress: stdout holds only rows
        print("no sessions" if args.all else "no sessions (--all includes ended ones)", file=sys.stderr)
    else:
        print(f"{'SESSION':<36}  {'STATE':<10}  {'TURNS':>5}  {'LAST ACTIVE':<27}  COLLECTION")
        for s in sessions:
            state = agent_pb2.SessionState.Name(s.state).removeprefix("SESSION_STATE_").lower()
            print(
                f"{s.session_id:<36}  {state:<10}  {s.turn_count:>5}  "
                f"{s.last_active_at.ToJsonString():<27}  {s.collection}"
            )
