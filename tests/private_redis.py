"""A Redis server of a test's own (redis-server on a Unix socket, no TCP port), for tests that
configure the server or stop it, which the shared test Redis must not be put through."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis


@dataclass
class PrivateRedis:
    url: str
    socket: Path
    process: subprocess.Popen

    def stop(self) -> None:
        """SIGTERM: Redis shuts down and removes its socket, as a stopped server would."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextmanager
def private_redis(*options: str, password: str | None = None) -> Iterator[PrivateRedis]:
    """A fresh redis-server started with `options` (e.g. "--appendonly", "yes"); skips without one.
    With `password`, give the server "--requirepass" too: it is what the readiness check sends."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    # A short directory: a Unix socket path must fit in 107 bytes.
    with tempfile.TemporaryDirectory(prefix="glossator-redis-") as directory:
        socket = Path(directory) / "redis.sock"
        process = subprocess.Popen(
            [binary, "--port", "0", "--unixsocket", str(socket), "--dir", directory, *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        server = PrivateRedis(f"unix://{socket}?db=0", socket, process)
        try:
            _wait_until_up(server, password)
            yield server
        finally:
            server.stop()


def _wait_until_up(server: PrivateRedis, password: str | None, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if server.process.poll() is not None:
            raise RuntimeError(f"redis-server exited with {server.process.returncode}")
        try:
            with redis.Redis(
                unix_socket_path=str(server.socket), password=password, socket_timeout=1
            ) as client:
                client.ping()
            return
        except redis.RedisError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
