"""The CLI's exit codes, errors, JSON, sessions table, targets, terminal output and chat commands."""

from __future__ import annotations

import io
import json
import readline
import uuid

import pytest

from glossator.v1 import agent_pb2
from services.cli import build_parser, main
from services.commands import exit_codes
from services.commands.connect import DEFAULT_TARGETS
from services.common.errors import (
    DeadlineExceeded,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from tests.integration.test_cli import answering, failing, run_cli, scripted_agent


def test_the_exit_codes_are_distinct():
    codes = [value for name, value in vars(exit_codes).items() if name.isupper()]
    assert sorted(codes) == [*range(8), exit_codes.INTERRUPTED, exit_codes.BROKEN_PIPE]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (NotFound("session s-9 not found"), exit_codes.NOT_FOUND),
        (InvalidArgument([FieldViolation("top_k", "must be 1-20")]), exit_codes.INVALID_ARGUMENT),
        (Unauthenticated("no bearer token"), exit_codes.DENIED),
        (PermissionDenied("the admin role is needed"), exit_codes.DENIED),
        (Unavailable("the model did not settle on an answer"), exit_codes.RPC_FAILED),
        (DeadlineExceeded("the model took too long"), exit_codes.RPC_FAILED),
    ],
    ids=["not-found", "invalid", "unauthenticated", "permission-denied", "unavailable", "deadline"],
)
@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["stream", "json"])
async def test_each_failure_has_its_exit_code(error, expected, json_flag, capsys):
    async with scripted_agent(failing(error)) as target:
        code = await run_cli(["ask", "What is a bridge?", "--agent", target, *json_flag])
    assert code == expected, capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["ask", "q", "--no-such-option"], "ask"),
        (["eval", "retrieval", "--squad", "x", "--bogus"], "eval retrieval"),
    ],
)
def test_a_usage_error_exits_2_with_the_usage_of_its_command(argv, command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == exit_codes.USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"usage: glossator {command} [-h]")
    assert f"glossator {command}: error: unrecognized arguments: {argv[-1]}" in err


def test_an_unreachable_agent_exits_3(capsys):
    assert main(["ask", "q", "--agent", "127.0.0.1:9"]) == exit_codes.UNREACHABLE
    assert "cannot reach 127.0.0.1:9" in capsys.readouterr().err


# --- A missing collection, from the real agent ---


def _chat_input(monkeypatch, *lines: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


@pytest.mark.parametrize("mode", ["ask", "ask --json", "chat"])
async def test_an_unknown_collection_says_to_ingest_first(mode, suite, monkeypatch, capsys):
    collection = f"missing-{uuid.uuid4().hex[:8]}"
    agent = f"127.0.0.1:{suite.servers['agent'].port}"
    if mode == "chat":
        _chat_input(monkeypatch, "What is a bridge?", "And a tunnel?")
        argv = ["chat", "--collection", collection, "--agent", agent]
    else:
        argv = [*mode.split(), "What is a bridge?", "--collection", collection, "--agent", agent]
    code = await run_cli(argv)
    err = capsys.readouterr().err
    assert code == exit_codes.NOT_FOUND
    advice = (
        f"error: collection '{collection}' not found: `glossator collections` lists the collections; "
        f"ingest to create it (glossator ingest PATH --collection {collection})\n"
    )
    assert err.count(advice) == 1  # a chat ends at the first question: every other would fail too
    # Neither the status name, nor the words meant for the model, nor a session that has nothing
    # to continue reach the user.
    assert "NOT_FOUND" not in err
    assert "cannot search the book" not in err
    assert "--session" not in err


def test_asking_before_any_ingest_says_to_ingest_first(tmp_path, capsys):
    code = main(["ask", "What is a bridge?", "--embedded", str(tmp_path / "data")])
    assert code == exit_codes.NOT_FOUND
    assert (
        "error: collection 'default' not found: `glossator collections` lists the collections; "
        "ingest to create it (glossator ingest PATH --collection default)" in capsys.readouterr().err
    )


# --- JSON with every field ---


def printed_json(out: str):
    """The JSON object a command printed (the servers of the test may log around it on stdout)."""
    lines = out.splitlines()
    return json.loads("\n".join(lines[lines.index("{") : lines.index("}") + 1]))


async def test_ask_json_prints_false_and_zero_fields(capsys):
    script = answering("It opened in 1923.", "The book does not say.", agent_pb2.VALIDATION_STATUS_REPLACED)
    async with scripted_agent(script) as target:
        code = await run_cli(["ask", "When did it open?", "--agent", target, "--json"])
    response = printed_json(capsys.readouterr().out)
    assert code == exit_codes.OK
    assert response["grounding"]["isGrounded"] is False
    assert response["grounding"]["groundingScore"] == 0
    assert response["cached"] is False and response["confidence"] == 0
    assert response["sources"][0]["sectionPath"] == []


# --- sessions list, from the real agent ---


async def test_sessions_list_has_a_header_json_and_says_when_there_are_none(suite, tmp_path, capsys):
    user, collection = f"reader-{uuid.uuid4().hex[:8]}", f"bridges-{uuid.uuid4().hex[:8]}"
    agent = ["--agent", f"127.0.0.1:{suite.servers['agent'].port}"]
    code = await run_cli(["sessions", "list", "--user", user, *agent])
    captured = capsys.readouterr()
    assert code == exit_codes.OK and captured.out == ""
    assert "no sessions (--all includes ended ones)" in captured.err
    assert await run_cli(["sessions", "list", "--user", user, "--json", *agent]) == exit_codes.OK
    assert printed_json(capsys.readouterr().out) == {"sessions": []}

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bridges.md").write_text(
        "# Bridges\n\nThe Harbour Bridge opened in 1932 after eight years of work."
    )
    retrieval = f"127.0.0.1:{suite.servers['retrieval'].port}"
    ingest = ["ingest", str(docs), "--collection", collection, "--quiet", "--retrieval", retrieval]
    assert await run_cli(ingest) == exit_codes.OK
    ask = ["ask", "When did the Harbour Bridge open?", "--user", user, "--collection", collection, *agent]
    assert await run_cli(ask) == exit_codes.OK
    named = capsys.readouterr().err.splitlines()[-1]  # once answered: a named user's has no token
    assert named.startswith("· session ") and named.endswith(")") and "--session-token" not in named

    assert await run_cli(["sessions", "list", "--user", user, *agent]) == exit_codes.OK
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["SESSION", "STATE", "TURNS", "LAST", "ACTIVE", "COLLECTION"]
    assert row.split()[1:3] == ["active", "1"] and row.split()[-1] == collection

    assert await run_cli(["sessions", "list", "--user", user, "--json", *agent]) == exit_codes.OK
    [session] = printed_json(capsys.readouterr().out)["sessions"]
    assert session["turnCount"] == 1 and session["collection"] == collection
    assert session["turns"] == [] and session["userId"] == user
    show = ["sessions", "show", session["sessionId"], "--user", user, "--json", *agent]
    assert await run_cli(show) == exit_codes.OK
    assert len(printed_json(capsys.readouterr().out)["turns"]) == 1
    assert named == f"· session {session['sessionId']} (continue it: --session {session['sessionId']})"

    # Without --user the session is looked for as an anonymous one: the user is told what is missing.
    assert await run_cli(["sessions", "show", session["sessionId"], *agent]) == exit_codes.INVALID_ARGUMENT
    err = capsys.readouterr().err
    assert "belongs to a named user" in err and "--user" in err
    assert "session_token" not in err


# --- Targets ---


@pytest.mark.parametrize(
    ("argv", "service"),
    [
        (["ask", "q"], "agent"),
        (["search", "q"], "retrieval"),
        (["eval", "grounding", "--halueval", "h.json"], "validation"),
    ],
)
@pytest.mark.parametrize(
    ("given", "dialled"),
    [("localhost", "localhost:{port}"), ("[::1]", "[::1]:{port}"), ("::1", "[::1]:{port}")],
)
def test_a_target_without_a_port_gets_the_services_port(argv, service, given, dialled):
    port = DEFAULT_TARGETS[service].rsplit(":", 1)[1]
    args = build_parser().parse_args([*argv, f"--{service}", given])
    assert args.target == dialled.format(port=port)


def test_a_target_from_the_environment_gets_the_port_too(monkeypatch):
    monkeypatch.setenv("GLOSSATOR_AGENT_TARGET", "agent.internal")
    assert build_parser().parse_args(["ask", "q"]).target == "agent.internal:50051"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("http://localhost:50051", "not HOST[:PORT]: 'http://localhost:50051'"),
        ("localhost:", "the port of 'localhost:' is not a number from 1 to 65535"),
        ("localhost:99999", "the port of 'localhost:99999' is not a number"),
        ("", "not HOST[:PORT]: ''"),
    ],
)
def test_a_malformed_target_is_a_usage_error(given, said, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["ask", "q", "--agent", given])
    assert exit_info.value.code == exit_codes.USAGE
    assert f"argument --agent: {said}" in capsys.readouterr().err


async def test_another_services_port_is_named_as_such(suite, capsys):
    target = f"127.0.0.1:{suite.servers['retrieval'].port}"
    code = await run_cli(["ask", "q", "--agent", target])
    assert code == exit_codes.UNREACHABLE
    assert (
        f"error: {target} does not serve the agent service (is it the retrieval or validation port?)"
        in capsys.readouterr().err
    )


# --- Markdown on a terminal, plain text in a pipe ---


class Terminal(io.StringIO):
    """Output that says it is a terminal, as sys.stdout does in one."""

    def isatty(self) -> bool:
        return True


MARKDOWN = "The deck is **steel** and the cables are `galvanised`."


async def test_the_answer_is_rendered_on_a_terminal(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    async with scripted_agent(answering(MARKDOWN, MARKDOWN)) as target:
        code = await run_cli(["ask", "What is the deck?", "--agent", target])
    out = terminal.getvalue()
    assert code == exit_codes.OK
    assert "steel" in out and "galvanised" in out and "Sources:" in out
    assert "**" not in out and "`" not in out


async def test_a_replaced_answer_is_announced_on_a_terminal(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    script = answering(
        "It opened in **1923**.", "The book does not say.", agent_pb2.VALIDATION_STATUS_REPLACED
    )
    async with scripted_agent(script) as target:
        assert await run_cli(["ask", "When did it open?", "--agent", target]) == exit_codes.OK
    out = terminal.getvalue()
    assert "Replaced answer:" in out and "The book does not say." in out and "**" not in out


async def test_the_answer_stays_plain_in_a_pipe(capsys):
    async with scripted_agent(answering(MARKDOWN, MARKDOWN)) as target:
        assert await run_cli(["ask", "What is the deck?", "--agent", target]) == exit_codes.OK
    out = capsys.readouterr().out
    assert f"{MARKDOWN}\n\nSources:\n" in out and "\x1b[" not in out


# --- chat commands and history ---


async def test_chat_commands_stay_local_and_lines_go_to_the_history(monkeypatch, capsys):
    asked: list[str] = []

    async def script(request):
        asked.append(request.query)
        async for event in answering("It opened in 1932.", "It opened in 1932.")(request):
            yield event

    readline.clear_history()
    _chat_input(monkeypatch, "/help", "/bridges", "/etc/hosts is a file?", "When did it open?")
    async with scripted_agent(script) as target:
        code = await run_cli(["chat", "--agent", target])
    err = capsys.readouterr().err
    assert code == exit_codes.OK
    assert asked == ["/etc/hosts is a file?", "When did it open?"]
    assert "/help  this list\n/end   end the session and leave" in err
    assert "unknown command /bridges; /help lists the commands" in err
    history = [readline.get_history_item(i) for i in range(1, readline.get_current_history_length() + 1)]
    assert history == ["/help", "/bridges", "/etc/hosts is a file?", "When did it open?"]
