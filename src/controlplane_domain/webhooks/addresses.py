"""Where a webhook may send: https (http only to loopback, where loopback is allowed), and no address in a
private, loopback, link-local, metadata or otherwise non-public range unless the operator allows them
(`CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE`). The rules are checked on the URL when a webhook is saved, and on every
address its host resolves to, at save and again at each delivery (the sender connects to the address it checked)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.webhooks.entity import MAX_URL_LENGTH

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOW_PRIVATE = "CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE"

METADATA = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS DNS
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS NTP/DNS over IPv6
    )
)


@dataclass(frozen=True, slots=True)
class Target:
    """A webhook URL taken apart: what the sender resolves and connects to."""

    scheme: str
    host: str
    port: int
    literal: Address | None
    """The host's address when the URL names one rather than a name."""


def parse_url(url: str, field: str = "url") -> Target:
    """The URL's parts; ValidationFailed when it is not an absolute http(s) URL without credentials."""
    if len(url) > MAX_URL_LENGTH:
        raise ValidationFailed(field, f"must be at most {MAX_URL_LENGTH} characters")
    if any(character.isspace() or ord(character) < 32 or ord(character) == 127 for character in url):
        raise ValidationFailed(field, "must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValidationFailed(field, f"is not a valid URL ({exc})") from None
    if parts.scheme not in ("https", "http"):
        raise ValidationFailed(field, "must be an https URL (http only to loopback in development)")
    if not parts.hostname:
        raise ValidationFailed(field, "must name a host")
    if parts.username is not None or parts.password is not None:
        raise ValidationFailed(field, "must not carry credentials (user:password@)")
    if parts.fragment:
        raise ValidationFailed(field, "must not have a fragment (#...)")
    host = parts.hostname.rstrip(".").lower()
    try:
        literal: Address | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    return Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), literal)


NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix (RFC 6052): a translator forwards to the IPv4 address in the last 32 bits."""
LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
"""Local-use NAT64 prefixes (RFC 8215): where the IPv4 address sits depends on the network's own prefix length,
and the range is not globally reachable: refused as a whole."""
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
"""Deprecated IPv4-compatible addresses (`::a.b.c.d`, RFC 4291); `::` and `::1` are not among them."""
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
"""IPv4-translated addresses (`::ffff:0:a.b.c.d`, RFC 2765)."""


def embedded_ipv4(address: Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    """The IPv4 addresses an IPv6 address carries, and the form that carries them (a packet to it may reach them:
    an IPv4-mapped socket, a 6to4 or Teredo relay, a NAT64 translator); None when it carries none."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", [address.ipv4_mapped]
    if address.sixtofour is not None:
        return "6to4", [address.sixtofour]
    if address.teredo is not None:
        server, client = address.teredo
        return "Teredo", [client, server]
    if address in NAT64:
        return "NAT64", [low]
    if address in IPV4_TRANSLATED:
        return "IPv4-translated", [low]
    if address in IPV4_COMPATIBLE and int(address) > 1:
        return "IPv4-compatible", [low]
    return None


def address_problem(address: Address, *, allow_private: bool) -> str | None:
    """Why a delivery may not go to `address` (None: it may). An IPv6 address that carries an IPv4 address
    (embedded_ipv4) is judged by what it carries as well as by itself."""
    embedded = embedded_ipv4(address)
    if embedded is not None:
        form, carried = embedded
        if form == "IPv4-mapped":
            return _own_problem(carried[0], allow_private=allow_private)  # (a socket's IPv4 address, written so)
        for inner in carried:
            problem = _own_problem(inner, allow_private=allow_private)
            if problem is not None:
                return f"{address} ({form}) carries {problem}"
        if form == "NAT64":
            return None  # a DNS64 resolver's answer for a public IPv4 host (IPv6-only networks)
    if address in LOCAL_NAT64 and not allow_private:
        return f"{address} is a local-use NAT64 address, not a public one ({ALLOW_PRIVATE} allows it)"
    return _own_problem(address, allow_private=allow_private)


def _own_problem(address: Address, *, allow_private: bool) -> str | None:
    if address.is_multicast or address.is_unspecified:
        return f"{address} is not a public address"  # never deliverable, allowed or not
    if address in METADATA:
        kind = "a cloud metadata address"
    elif address.is_loopback:
        kind = "a loopback address"
    elif address.is_link_local:
        kind = "a link-local address"
    elif address.is_private:
        kind = "a private address"
    elif address.is_reserved or not address.is_global:
        kind = "not a public address"
    else:
        return None
    if allow_private:
        return None
    return f"{address} is {kind} ({ALLOW_PRIVATE} allows it)"


def target_problem(target: Target, addresses: list[Address], *, allow_private: bool) -> str | None:
    """Why deliveries may not go to `target` at `addresses` (what its host resolved to); None when they may.
    Every address must pass (a name resolving to a public and a private address is refused): the sender
    connects to one of them."""
    if not addresses:
        return f"the host '{target.host}' does not resolve"
    for address in addresses:
        problem = address_problem(address, allow_private=allow_private)
        if problem is not None:
            return problem
    if target.scheme == "http" and not all(_loopback(address) for address in addresses):
        return "must be an https URL (http only to loopback in development)"
    return None


def _loopback(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
