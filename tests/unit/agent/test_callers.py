"""A caller's address is its host, whatever connection (port) it calls from."""

from __future__ import annotations

import pytest

from services.agent.callers import peer_address


@pytest.mark.parametrize(
    ("peer", "address"),
    [
        ("ipv4:10.0.0.7:51234", "10.0.0.7"),
        ("ipv6:[::1]:5", "::1"),
        ("ipv6:%5B2001:db8::1%5D:443", "2001:db8::1"),
        ("unix:/run/agent.sock", "unix:/run/agent.sock"),
    ],
)
def test_the_peer_address_leaves_out_the_port(peer: str, address: str) -> None:
    assert peer_address(peer) == address
