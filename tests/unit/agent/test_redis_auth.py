"""The agent's Redis session store against a Redis that wants a password (requirepass, as the prod
overlay runs it) and one that serves TLS only (components/redis-tls): GLOSSATOR_AGENT_REDIS_PASSWORD
and a rediss:// URL whose query names the CA and the client certificate. A private redis-server
each (tests/private_redis.py), never the shared test Redis."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from bench.harness import free_port
from services.agent.config import AgentSettings
from services.agent.server import open_sessions
from services.common.errors import Unavailable
from tests.credentials import Authority
from tests.private_redis import private_redis

PASSWORD = "0123456789abcdef0123456789abcdef"


def _settings(url: str, password: str | None, data_dir: Path) -> AgentSettings:
    return AgentSettings(session_backend="redis", redis_url=url, redis_password=password, data_dir=data_dir)


async def _round_trip(settings: AgentSettings) -> None:
    """Opens the store the agent would, and writes and reads a session through it."""
    store = await open_sessions(settings)
    try:
        created = await store.create("alice", "book")
        assert (await store.get(created.session_id, "alice")).session_id == created.session_id
    finally:
        await store.close()


async def test_the_agent_auths_to_redis_with_its_password_setting(tmp_path: Path) -> None:
    with private_redis("--requirepass", PASSWORD, password=PASSWORD) as server:
        await _round_trip(_settings(server.url, PASSWORD, tmp_path))
        # Without it, or with another, the agent does not start (Unavailable at open, not later).
        for wrong in (None, "not-the-password"):
            with pytest.raises(Unavailable) as refused:
                await open_sessions(_settings(server.url, wrong, tmp_path))
            assert PASSWORD not in str(refused.value)


async def test_a_password_in_the_url_wins_over_the_setting(tmp_path: Path) -> None:
    with private_redis("--requirepass", PASSWORD, password=PASSWORD) as server:
        url = server.url.replace("unix://", f"unix://:{PASSWORD}@", 1)
        await _round_trip(_settings(url, "not-the-password", tmp_path))


async def test_the_agent_reaches_a_tls_only_redis_by_a_rediss_url(tmp_path: Path) -> None:
    """TLS on the TCP port with client certificates required (tls-auth-clients yes, Redis' default)."""
    authority = Authority.create(tmp_path / "pki", "ca")
    server_pair, client_pair = authority.issue("redis"), authority.issue("agent")
    port = free_port()
    tls = (
        *("--tls-port", str(port)),
        *("--tls-cert-file", str(server_pair.cert_file), "--tls-key-file", str(server_pair.key_file)),
        *("--tls-ca-cert-file", str(authority.ca_file)),
        *("--requirepass", PASSWORD),
    )
    query = {
        "ssl_ca_certs": authority.ca_file,
        "ssl_certfile": client_pair.cert_file,
        "ssl_keyfile": client_pair.key_file,
    }
    with private_redis(*tls, password=PASSWORD):
        await _round_trip(_settings(f"rediss://127.0.0.1:{port}/0?{urlencode(query)}", PASSWORD, tmp_path))
        # plaintext to the TLS port, or TLS without the client certificate: refused
        for url in (
            f"redis://127.0.0.1:{port}/0",
            f"rediss://127.0.0.1:{port}/0?{urlencode({'ssl_ca_certs': authority.ca_file})}",
        ):
            with pytest.raises(Unavailable):
                await open_sessions(_settings(url, PASSWORD, tmp_path))
