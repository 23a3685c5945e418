"""A bench's child processes die with it, however it dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from bench.harness import ROOT

PARENT = (
    "from bench.harness import spawn_python\n"
    "child = spawn_python(['-c', 'import time; time.sleep(60)'])\n"
    "print(child.pid, flush=True)\n"
    "import time; time.sleep(60)\n"
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, only not yet reaped
        return stat.read().split(")")[-1].split()[0] != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signals are Linux's")
def test_a_killed_bench_takes_its_suite_with_it():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.send_signal(signal.SIGKILL)  # no finally block, no cleanup: only the kernel can tell
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)
