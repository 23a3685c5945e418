"""The `glossator` command as a user runs it (in-process, with --embedded servers)."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import grpc
import pytest

from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.cli import build_parser, main
from services.commands import exit_codes
from services.commands.ask import default_timeout
from services.common.errors import FailedPrecondition, Reason, Unavailable
from services.common.server import create_server
from services.common.settings import ServiceSettings

SUBCOMMANDS = (
    "serve",
    "up",
    "demo",
    "ingest",
    "search",
    "ask",
    "chat",
    "sessions",
    "collections",
    "documents",
    "eval",
    "config",
)


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: glossator " + command in capsys.readouterr().out


def test_ingest_reports_bad_files_and_goes_on(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA page about lighthouses and their keepers.")
    (docs / "binary.md").write_bytes(b"\x89PNG\x00\x00\x01" * 100)
    (docs / "huge.md").write_bytes(b"# Huge\n\n" + b"word " * (50 * 1024 * 1024 // 5))  # 50 MB
    code = main(["ingest", str(docs), "--quiet", "--embedded", str(tmp_path / "data")])
    captured = capsys.readouterr()
    assert code == 1  # some documents failed
    assert "3 documents: 1 indexed, 0 unchanged, 2 failed" in captured.out
    assert "binary.md" in captured.err and "huge.md" in captured.err

    code = main(["search", "lighthouse keepers", "--json", "--embedded", str(tmp_path / "data")])
    results = json.loads(capsys.readouterr().out)["results"]
    assert code == 0 and results[0]["chunk"]["sourcePath"] == "good.md"


def test_commands_explain_an_unreachable_service(capsys):
    code = main(["search", "anything", "--retrieval", "127.0.0.1:9"])
    assert code == exit_codes.UNREACHABLE
    assert "cannot reach 127.0.0.1:9" in capsys.readouterr().err


# --- Errors and answers as the user sees them, from a scripted agent (a real server on port 0) ---

AGENT_SERVICE = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
Script = Callable[[agent_pb2.AskRequest], AsyncIterator[agent_pb2.AskStreamResponse]]


class ScriptedAgent(agent_pb2_grpc.AgentServiceServicer):
    """AskStream plays `script`; Ask returns its completed response. Raising in the script goes
    through the project's interceptor, as the real agent's errors do."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def AskStream(self, request, context):
        async for event in self.script(request):
            yield event

    async def Ask(self, request, context):
        response = None
        async for event in self.script(request):
            response = event.completed.response if event.HasField("completed") else response
        return agent_pb2.AskResponse(response=response)


@asynccontextmanager
async def scripted_agent(script: Script) -> AsyncIterator[str]:
    """The address of a running agent server (create_server: interceptor, health, reflection)."""

    def register(server: grpc.aio.Server) -> list[str]:
        agent_pb2_grpc.add_AgentServiceServicer_to_server(ScriptedAgent(script), server)
        return [AGENT_SERVICE]

    server = create_server("agent", ServiceSettings(host="127.0.0.1", port=0, grace_seconds=0), register)
    await server.start()
    try:
        yield f"127.0.0.1:{server.port}"
    finally:
        await server.stop(grace=0)


def failing(error: Exception, *, after: Sequence[str] = ()) -> Script:
    """A script that streams `after` as answer text, then raises `error`."""

    async def script(request):
        for text in after:
            yield agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text=text))
        raise error

    return script


def answering(streamed: str, final: str, status=agent_pb2.VALIDATION_STATUS_VALIDATED) -> Script:
    async def script(request):
        yield agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text=streamed))
        source = agent_pb2.Source(index=1, title="Bridges", source_url="https://example.org/bridges")
        response = agent_pb2.Response(
            answer=final,
            sources=[source],
            grounding=agent_pb2.GroundingSummary(status=status),
            session_id="s-1",
        )
        yield agent_pb2.AskStreamResponse(completed=agent_pb2.Completed(response=response))

    return script


async def run_cli(argv: list[str]) -> int:
    """`glossator ARGV` in a worker thread (it runs its own event loop), the server on this one."""
    return await asyncio.to_thread(main, argv)


LLM_REJECTED_MESSAGE = (
    "the LLM endpoint http://llm:8080/no-such/v1 refused model 'qwen' (HTTP 404): it has no such model"
)


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["stream", "json"])
async def test_an_llm_rejection_and_an_unreachable_agent_get_different_advice(json_flag, capsys):
    rejected = FailedPrecondition(
        LLM_REJECTED_MESSAGE,
        reason=Reason.LLM_REJECTED,
        metadata={"endpoint": "http://llm:8080/no-such/v1", "model": "qwen", "http_status": "404"},
    )
    async with scripted_agent(failing(rejected)) as target:
        code = await run_cli(["ask", "What is a bridge?", "--agent", target, *json_flag])
    rejection = capsys.readouterr().err
    assert code == exit_codes.RPC_FAILED
    assert f"error: {LLM_REJECTED_MESSAGE}\n" in rejection  # the server's words, as they are
    assert (
        "GLOSSATOR_AGENT_LLM_BASE_URL, GLOSSATOR_AGENT_LLM_MODEL and GLOSSATOR_AGENT_LLM_API_KEY" in rejection
    )
    assert "cannot reach" not in rejection and "glossator up" not in rejection
    assert "Traceback" not in rejection

    code = await run_cli(["ask", "What is a bridge?", "--agent", "127.0.0.1:9", *json_flag])
    unreachable = capsys.readouterr().err
    assert code == exit_codes.UNREACHABLE
    assert "cannot reach 127.0.0.1:9" in unreachable and "glossator up" in unreachable
    assert "GLOSSATOR_AGENT_LLM" not in unreachable


@pytest.mark.parametrize(
    ("error", "expected", "not_expected"),
    [
        (
            Unavailable(
                "cannot reach the LLM endpoint http://llm:8080/v1 (model 'qwen')",
                reason=Reason.LLM_UNAVAILABLE,
                metadata={"endpoint": "http://llm:8080/v1", "model": "qwen"},
                retryable=False,
            ),
            [
                "error: cannot reach the LLM endpoint http://llm:8080/v1 (model 'qwen')\n",
                "LLM endpoint is down or overloaded; check the model server",
            ],
            "cannot reach 127.0.0.1",
        ),
        (
            Unavailable(
                "the retrieval service at 127.0.0.1:50052 is unavailable",
                reason=Reason.DEPENDENCY_UNAVAILABLE,
                metadata={"service": "retrieval"},
            ),
            [
                "the agent cannot use its retrieval service: the retrieval service at 127.0.0.1:50052",
                "GLOSSATOR_AGENT_RETRIEVAL_TARGET",
            ],
            "glossator up",
        ),
        (
            Unavailable(
                "session store unavailable",
                reason=Reason.DEPENDENCY_UNAVAILABLE,
                metadata={"service": "sessions"},
            ),
            [
                "the agent cannot use its sessions service: session store unavailable",
                "GLOSSATOR_AGENT_REDIS_URL",
            ],
            "glossator up",
        ),
        # The agent itself answered UNAVAILABLE without a reason: reachable, so no "cannot reach".
        (
            Unavailable("the model did not settle on an answer"),
            ["error: UNAVAILABLE: the model did not settle"],
            "cannot reach",
        ),
    ],
    ids=["llm-unavailable", "dependency-unavailable", "sessions-unavailable", "agent-unavailable"],
)
async def test_the_advice_matches_the_reason_the_agent_gives(error, expected, not_expected, capsys):
    async with scripted_agent(failing(error)) as target:
        code = await run_cli(["ask", "What is a bridge?", "--agent", target])
    err = capsys.readouterr().err
    assert code == exit_codes.RPC_FAILED
    for text in expected:
        assert text in err
    assert not_expected not in err and "Traceback" not in err


@pytest.mark.parametrize("json_flag", [[], ["--json"]], ids=["stream", "json"])
async def test_timeout_is_honoured_and_explained(json_flag, capsys):
    async def slow(request):
        await asyncio.sleep(15)
        yield agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text="too late"))

    async with scripted_agent(slow) as target:
        started = time.monotonic()
        code = await run_cli(["ask", "What is a bridge?", "--agent", target, "--timeout", "1", *json_flag])
        elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == exit_codes.RPC_FAILED
    assert elapsed < 3, f"the CLI waited {elapsed:.1f} s with --timeout 1"
    assert (
        "no answer within 1 s; raise --timeout (and GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS on the agent)" in err
    )


def test_the_default_timeout_follows_the_agent_settings(monkeypatch):
    monkeypatch.setenv("GLOSSATOR_AGENT_LLM_TIMEOUT_SECONDS", "300")
    monkeypatch.setenv("GLOSSATOR_AGENT_VALIDATION_TIMEOUT_SECONDS", "20")
    assert default_timeout() == 325
    assert build_parser().parse_args(["ask", "q"]).timeout is None  # filled in when the command runs
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "q", "--timeout", "0"])


@pytest.mark.parametrize(
    ("status", "streamed", "final", "heading"),
    [
        (
            agent_pb2.VALIDATION_STATUS_VALIDATED,
            "It opened in 1932.",
            "It opened in 1932 [1].",
            "Answer with citations:",
        ),
        (
            agent_pb2.VALIDATION_STATUS_REPLACED,
            "It opened in 1923.",
            "The book does not say when it opened.",
            "Replaced answer:",
        ),
        (agent_pb2.VALIDATION_STATUS_VALIDATED, "It opened in 1932 [1].", "It opened in 1932 [1].", None),
    ],
    ids=["citations-added", "replaced", "unchanged"],
)
async def test_the_final_answer_is_reprinted_when_it_differs_from_the_stream(
    status, streamed, final, heading, capsys
):
    async with scripted_agent(answering(streamed, final, status)) as target:
        code = await run_cli(["ask", "When did it open?", "--agent", target])
    out = capsys.readouterr().out
    assert code == 0
    if heading is None:
        assert f"{streamed}\n\nSources:\n" in out
        assert "Answer with citations:" not in out and "Replaced answer:" not in out
    else:
        assert f"{streamed}\n\n{heading}\n{final}\n\nSources:\n" in out


async def test_sources_keep_the_numbers_the_answer_cites_and_say_so_when_some_are_skipped(capsys):
    """Only [2] cited: listed as [2], the number in the answer, under a heading that says why."""

    async def script(request):
        source = agent_pb2.Source(index=2, title="Tides", source_url="https://example.org/tides")
        response = agent_pb2.Response(answer="Twice a day [2].", sources=[source], session_id="s-1")
        yield agent_pb2.AskStreamResponse(completed=agent_pb2.Completed(response=response))

    async with scripted_agent(script) as target:
        assert await run_cli(["ask", "How often?", "--agent", target]) == exit_codes.OK
    out = capsys.readouterr().out
    assert (
        "Twice a day [2].\n\nSources (the passages cited, numbered as the search found them):\n"
        "  [2] Tides — https://example.org/tides\n"
    ) in out


async def test_an_answer_cut_off_mid_stream_ends_its_line_and_is_declared_void(capsys):
    void = Unavailable(
        "the answer was cut off and the partial answer streamed so far is void: the LLM endpoint failed",
        reason=Reason.ANSWER_VOID,
        metadata={"cause": "UNAVAILABLE"},
        retryable=False,
    )
    async with scripted_agent(failing(void, after=["The bridge ", "opened in"])) as target:
        code = await run_cli(["ask", "When did it open?", "--agent", target])
    captured = capsys.readouterr()
    assert code == exit_codes.RPC_FAILED
    # (stdout may hold the server's own log lines too, depending on the logging set up so far)
    assert "The bridge opened in\n" in captured.out
    assert "error: the answer was cut off; the partial text above is void.\n" in captured.err
    assert "the partial answer streamed so far is void: the LLM endpoint failed" in captured.err


async def test_chat_explains_a_failed_question_and_goes_on(monkeypatch, capsys):
    async def script(request):
        if request.query == "fail":
            raise FailedPrecondition(LLM_REJECTED_MESSAGE, reason=Reason.LLM_REJECTED)
        async for event in answering("It opened in 1932.", "It opened in 1932.")(request):
            yield event

    monkeypatch.setattr("sys.stdin", io.StringIO("fail\nWhen did it open?\n"))
    async with scripted_agent(script) as target:
        code = await run_cli(["chat", "--agent", target])
    captured = capsys.readouterr()
    assert code == 0
    assert f"error: {LLM_REJECTED_MESSAGE}\n" in captured.err
    assert "It opened in 1932." in captured.out  # the second question was answered
