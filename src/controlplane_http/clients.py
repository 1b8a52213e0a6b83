"""Who the client of a request is: the socket's peer, or, when that peer is a configured trusted proxy
(`trusted_proxies`, none by default), the address its `X-Forwarded-For` names. One answer a request, kept in the
scope's state, for the audit log's `client.ip` and the rate limiter's anonymous key alike.

uvicorn's own proxy-header handling is off (cli.serve): it trusted loopback by default, so that any process on
the host could name any client."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
CLIENT_STATE = "client_address"
FORWARDED_FOR = b"x-forwarded-for"


def networks(texts: Iterable[str]) -> tuple[Network, ...]:
    """The trusted proxies' networks from their texts (addresses or CIDR blocks, checked by the settings)."""
    return tuple(ipaddress.ip_network(text, strict=False) for text in texts)


def _within(address: str, trusted: Sequence[Network]) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(parsed, "ipv4_mapped", None)
    return any(parsed in network or (mapped is not None and mapped in network) for network in trusted)


def _forwarded(scope: MutableMapping[str, Any]) -> list[str]:
    """Every hop of every X-Forwarded-For header, in order (client first)."""
    hops: list[str] = []
    for name, value in scope.get("headers", ()):
        if name == FORWARDED_FOR:
            hops += [hop.strip() for hop in value.decode("latin-1").split(",")]
    return hops


def client_address(scope: MutableMapping[str, Any], trusted: Sequence[Network] = ()) -> str | None:
    """The request's client address: the socket's peer, unless that peer is within `trusted`; then the right-most
    address of X-Forwarded-For that is not a trusted proxy (each trusted proxy appends the address it saw; what
    lies left of the first untrusted hop was written by the client and is not believed). A hop that is not an
    address ends the walk at the last address believed. Computed once a request (kept in the scope's state)."""
    state = scope.setdefault("state", {})
    if CLIENT_STATE in state:
        found: str | None = state[CLIENT_STATE]
        return found
    peer = scope.get("client")
    address = str(peer[0]) if peer else None
    if trusted and address is not None and _within(address, trusted):
        for hop in reversed(_forwarded(scope)):
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                break
            address = hop
            if not _within(hop, trusted):
                break
    state[CLIENT_STATE] = address
    return address
