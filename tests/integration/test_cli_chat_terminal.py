"""`glossator chat` on a real terminal (a pseudo-terminal): Ctrl-C typed at the prompt leaves the
chat cleanly; typed while an answer streams, it cancels that answer and the prompt comes back."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest

from bench.harness import ROOT
from glossator.v1 import agent_pb2
from services.commands import exit_codes
from tests.integration.test_cli import scripted_agent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminals as on Linux")

# Makes the pseudo-terminal the controlling terminal of a new session (so that Ctrl-C typed on it
# signals the chat, as a shell would arrange), then runs `glossator ARGS`.
_ON_A_TERMINAL = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, '-m', 'services.cli', *sys.argv[1:]])"
)
CTRL_C, CTRL_D = b"\x03", b"\x04"


class Terminal:
    """The chat on a pseudo-terminal: what it printed so far, and keys typed into it."""

    def __init__(self, *argv: str) -> None:
        master, slave = os.openpty()
        env = {key: value for key, value in os.environ.items() if not key.startswith("GLOSSATOR_")}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ON_A_TERMINAL, *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            env={**env, "TERM": "xterm", "COLUMNS": "200"},
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.screen = ""
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 4096)
            except OSError:  # the child closed the terminal
                return
            if not data:
                return
            with self._lock:
                self.screen += data.decode(errors="replace")

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def wait_for(self, text: str, *, after: int = 0, timeout: float = 60) -> int:
        """Waits until `text` is on screen past offset `after`; returns the offset past it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                found = self.screen.find(text, after)
            if found >= 0:
                return found + len(text)
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen[-3000:]}")

    def exit_code(self, timeout: float = 30) -> int:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the chat did not end; the screen:\n{self.screen[-3000:]}") from None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


def _script(answer_went_on: asyncio.Event):
    """ "slow" streams a first word and then nothing (until cancelled); anything else answers."""

    async def script(request: agent_pb2.AskRequest):
        yield agent_pb2.AskStreamResponse(started=agent_pb2.Started(session_id="s-1", model="scripted"))
        yield agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text="Tides "))
        if request.query == "slow":
            await asyncio.sleep(60)
            answer_went_on.set()
        yield agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text="rise twice a day."))
        response = agent_pb2.Response(answer="Tides rise twice a day.", session_id="s-1", model="scripted")
        yield agent_pb2.AskStreamResponse(completed=agent_pb2.Completed(response=response))

    return script


async def test_ctrl_c_at_the_prompt_leaves_the_chat_cleanly():
    async with scripted_agent(_script(asyncio.Event())) as target:
        terminal = Terminal("chat", "--agent", target)
        try:
            await asyncio.to_thread(terminal.wait_for, "\n> ")
            terminal.type(CTRL_C)
            code = await asyncio.to_thread(terminal.exit_code)
        finally:
            terminal.close()
    assert code == exit_codes.INTERRUPTED, terminal.screen
    assert "left the chat; the session stays open" in terminal.screen
    assert "Traceback" not in terminal.screen


async def test_ctrl_c_while_an_answer_streams_cancels_it_and_the_prompt_comes_back():
    answer_went_on = asyncio.Event()
    async with scripted_agent(_script(answer_went_on)) as target:
        terminal = Terminal("chat", "--agent", target)
        try:
            seen = await asyncio.to_thread(terminal.wait_for, "\n> ")
            terminal.type(b"slow\r")
            seen = await asyncio.to_thread(terminal.wait_for, "Tides", after=seen)
            terminal.type(CTRL_C)
            seen = await asyncio.to_thread(terminal.wait_for, "(answer cancelled)", after=seen)
            seen = await asyncio.to_thread(terminal.wait_for, "\n> ", after=seen)
            terminal.type(b"quick\r")  # the chat goes on
            seen = await asyncio.to_thread(terminal.wait_for, "rise twice a day.", after=seen)
            await asyncio.to_thread(terminal.wait_for, "\n> ", after=seen)
            terminal.type(CTRL_D)
            code = await asyncio.to_thread(terminal.exit_code)
        finally:
            terminal.close()
    assert code == exit_codes.OK, terminal.screen
    assert not answer_went_on.is_set(), "the cancelled answer's stream was not cancelled"
    assert "Traceback" not in terminal.screen
