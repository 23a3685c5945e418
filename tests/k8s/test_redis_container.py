"""The rendered Redis container run on this machine, as the kubelet would run it: its start script
(`sh -c`) with redis.conf (and components/redis-tls' tls.conf) from its rendered ConfigMap, its
probes' command, and the agent's session store with the rendered URL. Only the paths (/etc/redis,
/data, /etc/glossator/tls) and the port (a free one on loopback) are this machine's.

Needs redis-server and redis-cli (skips without them) and kubectl (as the other k8s tests)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.harness import free_port
from services.agent.config import AgentSettings
from services.agent.server import open_sessions
from services.common.errors import Unavailable
from tests.credentials import Authority
from tests.k8s.test_manifests import TARGETS, rendered

PASSWORD = "4f1c0ffee0123456789abcdef0123456"
TLS_DIR = "/etc/glossator/tls"

pytestmark = pytest.mark.skipif(
    not (shutil.which("redis-server") and shutil.which("redis-cli")), reason="redis-server is not installed"
)


@dataclass
class RedisPod:
    """The rendered Redis container, with this machine's paths and port substituted."""

    script: str
    probe: str
    agent_url: str
    port: int
    process: subprocess.Popen | None = None

    def probe_passes(self, env: dict[str, str]) -> bool:
        return (
            subprocess.run(["sh", "-c", self.probe], env=env, capture_output=True, timeout=10).returncode == 0
        )

    def cli(self, env: dict[str, str], *command: str) -> str:
        tls = env.get("REDIS_CLI_TLS", "").split()
        result = subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", "-p", str(self.port), *tls, *command],
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return result.stdout.strip()


def _pod(target: str, root: Path) -> RedisPod:
    objects = rendered(TARGETS[target][0])
    (redis,) = [
        o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "glossator-redis"
    ]
    spec = redis["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["command"] == ["sh", "-c"]
    (config_name,) = [v["configMap"]["name"] for v in spec["volumes"] if "configMap" in v]
    (config,) = [
        o["data"] for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == config_name
    ]
    (agent_config,) = [
        o["data"]
        for o in objects
        if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("glossator-config-")
    ]
    port = free_port()
    here = {"/etc/redis/": f"{root}/etc-redis/", f"{TLS_DIR}/": f"{root}/tls/"}

    def local(text: str) -> str:
        for theirs, ours in here.items():
            text = text.replace(theirs, ours)
        return text

    (root / "etc-redis").mkdir()
    (root / "data").mkdir()
    for name, text in config.items():
        text = local(text).replace("dir /data", f"dir {root}/data").replace("bind 0.0.0.0", "bind 127.0.0.1")
        (root / "etc-redis" / name).write_text(text.replace("port 6379", f"port {port}"))
    probe = container["readinessProbe"]["exec"]["command"]
    assert probe[:2] == ["sh", "-c"] and "-h 127.0.0.1 " in probe[2]
    url = agent_config["GLOSSATOR_AGENT_REDIS_URL"].replace(
        "glossator-redis.glossator.svc.cluster.local:6379", f"127.0.0.1:{port}"
    )
    return RedisPod(
        local(container["args"][0]),
        probe[2].replace("-h 127.0.0.1 ", f"-h 127.0.0.1 -p {port} "),
        local(url),
        port,
    )


@contextmanager
def _running(pod: RedisPod, env: dict[str, str]) -> Iterator[RedisPod]:
    pod.process = subprocess.Popen(
        ["sh", "-c", pod.script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 15
        while not pod.probe_passes(env):
            if pod.process.poll() is not None:
                raise AssertionError(
                    f"redis exited {pod.process.returncode}: {pod.process.stderr.read().decode()}"
                )
            assert time.monotonic() < deadline, "the probe never passed"
            time.sleep(0.1)
        yield pod
    finally:
        pod.process.terminate()
        pod.process.wait(timeout=10)


async def _agent_round_trip(url: str, password: str | None, data_dir: Path) -> None:
    settings = AgentSettings(
        session_backend="redis", redis_url=url, redis_password=password, data_dir=data_dir
    )
    store = await open_sessions(settings)
    try:
        session = await store.create("alice", "book")
        assert (await store.get(session.session_id, "alice")).user_id == "alice"
    finally:
        await store.close()


def _env(**values: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", **values}


async def test_prod_redis_requires_the_password_and_the_agent_and_probes_send_it(tmp_path: Path) -> None:
    pod = _pod("prod", tmp_path)
    with _running(pod, _env(REDISCLI_AUTH=PASSWORD)):
        assert pod.cli(_env(), "ping").startswith("NOAUTH")
        assert not pod.probe_passes(_env())  # a probe without the password fails
        assert not pod.probe_passes(_env(REDISCLI_AUTH="wrong"))
        assert pod.cli(_env(REDISCLI_AUTH=PASSWORD), "config", "get", "protected-mode").split() == [
            "protected-mode",
            "yes",
        ]
        assert pod.cli(_env(REDISCLI_AUTH=PASSWORD), "config", "get", "appendonly").split()[1] == "yes"
        await _agent_round_trip(pod.agent_url, PASSWORD, tmp_path)
    # the password never appears in the server's argv
    assert PASSWORD not in pod.script


def test_redis_refuses_the_templates_placeholder_password(tmp_path: Path) -> None:
    pod = _pod("prod", tmp_path)
    result = subprocess.run(
        ["sh", "-c", pod.script],
        env=_env(REDISCLI_AUTH="CHANGE-ME"),
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert result.returncode == 1 and "letters and digits only" in result.stderr


async def test_dev_redis_without_a_password_turns_protected_mode_off(tmp_path: Path) -> None:
    pod = _pod("dev", tmp_path)
    with _running(pod, _env()):
        assert pod.cli(_env(), "config", "get", "protected-mode").split() == ["protected-mode", "no"]
        await _agent_round_trip(pod.agent_url, None, tmp_path)


async def test_redis_tls_component_serves_tls_only_and_the_agent_dials_it(tmp_path: Path) -> None:
    authority = Authority.create(tmp_path / "pki", "ca")
    pair = authority.issue("glossator")
    (tmp_path / "tls").mkdir()
    for name, source in (
        ("tls.crt", pair.cert_file),
        ("tls.key", pair.key_file),
        ("ca.crt", authority.ca_file),
    ):
        shutil.copy(source, tmp_path / "tls" / name)
    pod = _pod("all-components", tmp_path)
    objects = rendered(TARGETS["all-components"][0])
    (redis,) = [
        o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "glossator-redis"
    ]
    (cli_tls,) = [
        e["value"]
        for e in redis["spec"]["template"]["spec"]["containers"][0]["env"]
        if e["name"] == "REDIS_CLI_TLS"
    ]
    env = _env(REDISCLI_AUTH=PASSWORD, REDIS_CLI_TLS=cli_tls.replace(f"{TLS_DIR}/", f"{tmp_path}/tls/"))
    with _running(pod, env):
        assert pod.agent_url.startswith("rediss://")
        await _agent_round_trip(pod.agent_url, PASSWORD, tmp_path)
        # plaintext: refused
        assert not pod.probe_passes(_env(REDISCLI_AUTH=PASSWORD))
        with pytest.raises(Unavailable):
            await _agent_round_trip(f"redis://127.0.0.1:{pod.port}/0", PASSWORD, tmp_path)
