"""The `glossator` command's surface as a user meets it: --version, a fast --help, usage errors,
pipes closed early, complete JSON, the ingest progress bar, and what `up` and `serve` say."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path

import grpc
import httpx
import pytest

from bench.harness import ROOT, free_port
from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.cli import build_parser, main
from services.commands import exit_codes
from services.common.clients import make_channel
from services.retrieval.config import RetrievalSettings
from services.suite import build_service
from tests.integration.test_cli import run_cli

PAGES = {
    "bridges.md": "# Bridges\n\nA suspension bridge hangs its deck from cables between two towers.",
    "lighthouses.md": "# Lighthouses\n\nLighthouse keepers tend the lamp and log every passing ship.",
    "tides.md": "# Tides\n\nTides rise and fall twice a day with the pull of the moon.",
}


def _pages(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PAGES.items():
        (folder / name).write_text(text)
    return folder


def _environment(**extra: str) -> dict[str, str]:
    """This environment without any GLOSSATOR_* setting of the machine, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GLOSSATOR_")}
    return {**env, **extra}


def _glossator(*argv: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "services.cli", *argv], **popen)


# --- --version and a fast --help ---------------------------------------------------------------


def test_version_is_the_installed_distributions(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"glossator {installed_version('glossator')}\n"


def test_version_falls_back_to_pyproject_in_a_tree_never_installed(monkeypatch, capsys):
    def not_installed(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.version", not_installed)
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == f"glossator {installed_version('glossator')}\n"


HEAVY_MODULES = (
    "torch",
    "sentence_transformers",
    "qdrant_client",
    "qdrant_edge",
    "grpc",
    "google.protobuf",
    "structlog",
    "rich",
    "pydantic",
)


def test_building_the_parser_imports_no_heavy_module():
    """What `glossator --help` and `--version` import: argparse, not the commands' dependencies
    (they made --help take seconds)."""
    probe = (
        "import sys\n"
        "from services.cli import build_parser\n"
        "build_parser()\n"
        f"print([name for name in {HEAVY_MODULES!r} if name in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_a_commands_parser_is_made_when_it_is_chosen():
    args = build_parser().parse_args(["search", "tides", "--top-k", "3"])
    assert (args.command, args.query, args.top_k) == ("search", "tides", 3)
    args = build_parser().parse_args(["sessions", "list"])  # a module defining several commands
    assert args.action == "list"


# --- usage errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["section", "section=", "=Installation"])
def test_a_filter_that_is_not_key_value_is_a_usage_error_naming_it(bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["search", "q", "--filter", bad])
    assert exit_info.value.code == exit_codes.USAGE
    assert f"argument --filter: {bad!r} is not KEY=VALUE" in capsys.readouterr().err


def test_filters_are_passed_as_given():
    args = build_parser().parse_args(
        ["search", "q", "--filter", "section=Getting started", "--filter", "document_id=a,b"]
    )
    assert dict(args.filter) == {"section": "Getting started", "document_id": "a,b"}


# --- stdout closed early (`| head`) ------------------------------------------------------------


def _with_stdout_closed(*argv: str, cwd: Path = ROOT) -> tuple[int, str]:
    """Runs glossator with its stdout a pipe whose reader is gone before it writes."""
    process = _glossator(
        *argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=_environment(), text=True
    )
    process.stdout.close()
    _, err = process.communicate(timeout=180)
    return process.returncode, err


def test_a_closed_pipe_ends_a_command_quietly():
    code, err = _with_stdout_closed("config")
    assert code == exit_codes.BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err


def test_search_json_into_a_closed_pipe_ends_quietly(tmp_path):
    data = tmp_path / "data"
    assert main(["ingest", str(_pages(tmp_path / "pages")), "--quiet", "--embedded", str(data)]) == 0
    code, err = _with_stdout_closed("search", "tides", "--json", "--embedded", str(data))
    assert code == exit_codes.BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipeError" not in err


# --- JSON with every field, and the progress bar's total ----------------------------------------


def _json_names(message) -> set[str]:
    return {field.json_name for field in message.DESCRIPTOR.fields}


def test_search_json_has_every_field_even_false_and_zero(tmp_path, capsys):
    data = tmp_path / "data"
    assert main(["ingest", str(_pages(tmp_path / "pages")), "--quiet", "--embedded", str(data)]) == 0
    capsys.readouterr()
    assert main(["search", "moon tides", "--json", "--embedded", str(data)]) == 0
    reply = json.loads(capsys.readouterr().out)
    assert set(reply["metadata"]) == _json_names(common_pb2.SearchMetadata)
    assert reply["metadata"]["embeddingCached"] is False  # a false field, there all the same
    for result in reply["results"]:
        assert set(result) == _json_names(common_pb2.ScoredChunk)
        assert set(result["chunk"]) == _json_names(common_pb2.Chunk)


def test_a_folders_ingest_progress_in_a_pipe_keeps_its_counts_and_ends_its_line(tmp_path, capsys):
    """A pipe gets whole lines (a live bar cannot redraw there: its counts came out as "…")."""
    pages = _pages(tmp_path / "pages")
    code = main(["ingest", str(pages), "--embedded", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 0
    last = err.splitlines()[-1]
    assert last.startswith(f"ingesting: {len(PAGES)}/{len(PAGES)} documents · {len(PAGES)} chunks (")
    assert last.endswith(" s)") and " 0 skipped · 0 failed" in last
    assert err.endswith("\n") and "…" not in err


def test_eval_retrieval_shows_its_progress_on_stderr(tmp_path, capsys):
    """Minutes of ingest and search are not silent: each step's counts, on stderr only."""
    paragraphs = [(text, f"What does {text.split()[0].lower()} do?") for text in PAGES.values()]
    squad = {
        "data": [
            {
                "title": "Coast",
                "paragraphs": [
                    {"context": text, "qas": [{"question": question, "answers": []}]}
                    for text, question in paragraphs
                ],
            }
        ]
    }
    (tmp_path / "squad.json").write_text(json.dumps(squad))
    code = main(
        ["eval", "retrieval", "--squad", str(tmp_path / "squad.json"), "--embedded", str(tmp_path / "data")]
    )
    captured = capsys.readouterr()
    assert code == exit_codes.OK
    lines = captured.err.splitlines()
    assert any(line.startswith("ingesting SQuAD: 3/3 paragraphs") for line in lines), captured.err
    for mode in ("hybrid", "dense", "sparse"):
        assert any(line.startswith(f"searching ({mode}): 3/3 questions") for line in lines), captured.err
    assert captured.out.startswith("SQuAD: 3 paragraphs, 3 questions")


# --- a second ingest into a busy collection ------------------------------------------------------


async def test_an_ingest_waiting_for_a_busy_collection_says_so_then_explains_aborted(tmp_path, capsys):
    settings = RetrievalSettings(
        host="127.0.0.1", port=0, data_dir=tmp_path / "data", grace_seconds=0, ingest_lock_wait_seconds=3
    )
    server = await build_service("retrieval", settings)
    await server.start()
    target = f"127.0.0.1:{server.port}"
    first_done = asyncio.Event()

    async def holding_the_collection():
        yield retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection="busy"))
        yield retrieval_pb2.IngestRequest(
            document=retrieval_pb2.Document(source_path="held.md", content="# Held\n\nA page held open.")
        )
        await first_done.wait()  # the stream stays open: the collection stays taken

    try:
        async with make_channel(target) as channel:
            first = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(holding_the_collection())
            await first.read()  # the first document is done: the first ingest holds the collection
            started = time.monotonic()
            code = await run_cli(
                ["ingest", str(_pages(tmp_path / "pages")), "--collection", "busy", "--retrieval", target]
            )
            waited = time.monotonic() - started
            first_done.set()  # its stream half-closes: the first ingest finishes
            assert [reply async for reply in first][-1].HasField("summary")
            assert await first.code() == grpc.StatusCode.OK
    finally:
        await server.stop(grace=0)
    err = capsys.readouterr().err
    assert code == exit_codes.RPC_FAILED and waited >= 3
    assert "waiting for another ingest into collection 'busy' to finish" in err
    assert "Another ingest into collection 'busy' is still running" in err
    assert "Run this ingest again once the other one has finished" in err


# --- what `up` and `serve` say, and the metrics `up` serves --------------------------------------


class _Lines:
    """A child's stderr, read line by line in a thread so a test can wait for one."""

    def __init__(self, stream) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, text: str, timeout: float = 180) -> str:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no line with {text!r} in:\n{''.join(self.seen)[-4000:]}")


def _stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


def test_up_into_a_pipe_logs_json_says_its_data_dir_and_serves_every_metrics_port(tmp_path):
    retrieval_metrics, validation_metrics = free_port(), free_port()
    env = _environment(
        GLOSSATOR_RETRIEVAL_PORT=str(free_port()),
        GLOSSATOR_VALIDATION_PORT=str(free_port()),
        GLOSSATOR_AGENT_PORT=str(free_port()),
        GLOSSATOR_RETRIEVAL_METRICS_PORT=str(retrieval_metrics),
        GLOSSATOR_VALIDATION_METRICS_PORT=str(validation_metrics),
        GLOSSATOR_AGENT_METRICS_PORT=str(retrieval_metrics),  # shared with retrieval: one endpoint
    )
    # Started in tmp_path: the default data dir, .glossator, is relative to it.
    process = _glossator("up", stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True)
    try:
        lines = _Lines(process.stderr)
        lines.wait_for('"event": "ready"')
        for port in (retrieval_metrics, validation_metrics):
            reply = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
            assert reply.status_code == 200 and "glossator_" in reply.text
    finally:
        _stop(process)
    events = [json.loads(line) for line in lines.seen if line.startswith("{")]
    data_dirs = [e for e in events if e["event"] == "data_dir"]
    assert [(e["path"], e["services"]) for e in data_dirs] == [
        (str((tmp_path / ".glossator").resolve()), ["retrieval", "validation", "agent"])
    ]
    urls = sorted(e["url"] for e in events if e["event"] == "metrics_endpoint")
    assert urls == sorted(f"http://127.0.0.1:{p}/metrics" for p in (retrieval_metrics, validation_metrics))
    assert not any("\x1b[" in line for line in lines.seen)  # no colour codes in a pipe


def test_serve_in_console_format_prints_its_absolute_data_dir_first(tmp_path):
    env = _environment(GLOSSATOR_RETRIEVAL_PORT=str(free_port()), GLOSSATOR_RETRIEVAL_LOG_FORMAT="console")
    process = _glossator("serve", "retrieval", stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True)
    try:
        line = _Lines(process.stderr).wait_for("data ")
    finally:
        _stop(process)
    assert line == f"data       in {(tmp_path / '.glossator').resolve()}\n"


def test_serve_warns_of_an_unknown_variable_and_uses_the_suite_data_dir(tmp_path):
    env = _environment(
        GLOSSATOR_RETRIEVAL_PORT=str(free_port()),
        GLOSSATOR_RETRIEVAL_LOG_FORMAT="console",
        GLOSSATOR_RETRIEVAL_PROT="50052",  # a typo: ignored by the settings, so warned of
        GLOSSATOR_DATA_DIR=str(tmp_path / "suite-data"),
    )
    process = _glossator("serve", "retrieval", stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True)
    try:
        lines = _Lines(process.stderr)
        line = lines.wait_for("data ")
    finally:
        _stop(process)
    assert lines.seen[0] == (
        "warning: GLOSSATOR_RETRIEVAL_PROT is not a Glossator setting and is ignored "
        "(did you mean GLOSSATOR_RETRIEVAL_PORT?)\n"
    )
    assert line == f"data       in {(tmp_path / 'suite-data').resolve()}\n"
