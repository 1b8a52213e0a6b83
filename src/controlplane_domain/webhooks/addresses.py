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


def address_problem(address: Address, *, allow_private: bool) -> str | None:
    """Why a delivery may not go to `address` (None: it may)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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
    return f"{address} is {kind} (CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE allows it)"


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
