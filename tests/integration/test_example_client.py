"""examples/python_client.py against the real suite, run with the client package alone on its path:
clients/python/src plus grpcio, protobuf and googleapis-common-protos (its `errors` extra), no
site-packages, so neither `services` nor the server's `glossator` package can stand in."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.agent.config import AgentSettings
from services.agent.server import build_server
from tests.integration.test_retrieval import BASE_URL
from tests.unit.test_client_package import linked_distributions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python_client.py"
CLIENT_SOURCE = ROOT / "clients" / "python" / "src"
# Asked by no other test: the agent answers a repeated question from its cache, without tool events.
QUESTION = "How does the validation service decide that an answer is grounded?"


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


@pytest.fixture(scope="module")
def client_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a Python with the client package and its dependencies only."""
    deps = linked_distributions(
        tmp_path_factory.mktemp("client-deps"), ["grpcio", "protobuf", "googleapis-common-protos"]
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CLIENT_SOURCE), str(deps)])}
    probe = (
        "import glossator, importlib.util; print(glossator.__file__, importlib.util.find_spec('services'))"
    )
    shown = subprocess.run(
        [sys.executable, "-S", "-c", probe], cwd=deps, env=env, capture_output=True, text=True, check=True
    )
    assert shown.stdout.split() == [str(CLIENT_SOURCE / "glossator" / "__init__.py"), "None"]
    return env


async def run_example(env: dict[str, str], *args: str) -> Run:
    """The example in a subprocess (-S: no site-packages), awaited so this loop keeps serving."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-S",
        str(EXAMPLE),
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return Run(process.returncode, out.decode(), err.decode())


async def test_example_streams_the_typed_events_the_answer_and_its_citations(book, client_env):
    run = await run_example(client_env, f"127.0.0.1:{book.servers['agent'].port}", QUESTION)
    assert run.code == 0, run.err
    tags = [line.split("]")[0] + "]" for line in run.out.splitlines() if line.startswith("[")]
    assert tags[:4] == ["[started]", "[tool_call]", "[retrieval]", "[answer]"], run.out
    assert tags[-3:] == ["[validation]", "[sources]", "[completed]"], run.out
    answer = run.out.split("[answer]\n", 1)[1].split("\n[validation]", 1)[0].strip()
    assert "[1]" in answer and len(answer) > 50
    assert "[tool_call] retrieval_tool " in run.out and "[validation] grounded: yes" in run.out
    assert "cached" not in run.out.splitlines()[-1]
    cited = [line for line in run.out.splitlines() if line.startswith("  [")]
    assert cited and all(BASE_URL in line for line in cited)
    assert run.err == ""


async def test_example_prints_the_field_violations_of_a_bad_request(book, client_env):
    run = await run_example(client_env, f"127.0.0.1:{book.servers['agent'].port}", "", "--top-k", "50")
    assert run.code == 1
    assert run.err.startswith("error: INVALID_ARGUMENT: ")
    assert "  field query: must not be empty\n" in run.err
    assert "  field top_k: must be between 1 and 20 (got 50)\n" in run.err
    assert "[answer]" not in run.out


async def test_example_prints_the_error_info_of_a_stream_whose_answer_was_voided(book, client_env, tmp_path):
    """Validation down under policy enforce: answer deltas, then UNAVAILABLE with ErrorInfo ANSWER_VOID."""
    settings = AgentSettings(
        port=0,
        data_dir=tmp_path,
        retrieval_target=f"127.0.0.1:{book.servers['retrieval'].port}",
        validation_target="127.0.0.1:9",
        validation_timeout_seconds=2,
    )
    server, port = await build_server(settings)
    await server.start()
    try:
        run = await run_example(client_env, f"127.0.0.1:{port}", QUESTION)
    finally:
        await server.stop(grace=0)
    assert run.code == 1
    assert "[answer]" in run.out and "[completed]" not in run.out
    assert run.err.startswith("error: UNAVAILABLE: ")
    assert "  reason ANSWER_VOID (domain glossator.dev) " in run.err and "service=validation" in run.err
    assert "the partial answer printed above is void" in run.err
