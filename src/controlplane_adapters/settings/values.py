"""One setting's value read and checked, each refusal a ConfigError that names the setting and what it takes."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from controlplane_adapters.settings.model import AUTH_METHODS, MEMORY_URL, ConfigError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
DATABASE_DRIVERS = {
    "sqlite+aiosqlite": "sqlite+aiosqlite:///PATH",
    "postgresql+asyncpg": "postgresql+asyncpg://USER:PASS@HOST:PORT/DB",
}
REDIS_SCHEMES = ("redis://", "rediss://")
_PASSWORD = re.compile(r"(://[^/@:]*:)[^@/]*@")


def _shown(url: str) -> str:
    """`url` fit for an error message: its password, if any, masked."""
    return repr(_PASSWORD.sub(r"\1***@", url))


def parse_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


def parse_int(name: str, value: Any, *, minimum: int = 1, maximum: int | None = None) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {value!r}") from None
    if number < minimum or (maximum is not None and number > maximum):
        raise ConfigError(f"{name} must be between {minimum} and {maximum or 'any'}, got {number}")
    return number


def parse_methods(name: str, value: Any) -> frozenset[str]:
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise ConfigError(f"{name} must list one or more of api_key, jwt; got {value!r}")
    methods = frozenset(item for item in items if item)
    unknown = methods - AUTH_METHODS
    if unknown or not methods:
        raise ConfigError(f"{name} must list one or more of api_key, jwt; got {value!r}")
    return methods


def parse_networks(name: str, value: Any) -> tuple[str, ...]:
    """Addresses or CIDR blocks (`10.0.0.0/8`, `::1`), as a comma-separated text or a list: each as its network's
    text (`10.0.0.1` is `10.0.0.1/32`); an empty text or list is none."""
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise ConfigError(f"{name} must list addresses or CIDR blocks (comma-separated); got {value!r}")
    networks: list[str] = []
    for item in filter(None, items):
        try:
            networks.append(str(ipaddress.ip_network(item, strict=False)))
        except ValueError as exc:
            raise ConfigError(f"{name}: {item!r} is not an IP address or a CIDR block") from exc
    return tuple(networks)


def database_url(name: str, value: str) -> str:
    """`value` if it names a store the service runs on: `memory://`, SQLite through aiosqlite with a file, or
    Postgres through asyncpg."""
    if value == MEMORY_URL:
        return value
    expected = f"{MEMORY_URL}, {' or '.join(DATABASE_DRIVERS.values())}"
    try:
        url = make_url(value)
    except (ArgumentError, ValueError):  # (ValueError: a port that is not a number)
        raise ConfigError(f"{name} must be a database URL ({expected}), got {_shown(value)}") from None
    if url.drivername not in DATABASE_DRIVERS:
        raise ConfigError(
            f"{name} must use one of the drivers {', '.join(DATABASE_DRIVERS)} ({expected}); got {url.drivername!r}"
        )
    if url.drivername.startswith("sqlite") and url.database in (None, "", ":memory:"):
        raise ConfigError(
            f"{name} must name a SQLite file (for a store that is not kept, use {MEMORY_URL}); got {_shown(value)}"
        )
    return value


def redis_url(name: str, value: str) -> str | None:
    """`value` if it is a Redis URL the rate limiter can use; empty means none."""
    if not value:
        return None
    if not value.startswith(REDIS_SCHEMES):
        raise ConfigError(f"{name} must start with redis:// or rediss://, got {_shown(value)}")
    return value


def parse_text(name: str, value: Any) -> str:
    if isinstance(value, (Mapping, list)):
        raise ConfigError(f"{name} must be a single value, got {value!r}")
    return str(value)


def public_url(name: str, value: str) -> str | None:
    """`value` without its trailing slash if it is an absolute http(s) URL (a path prefix allowed, no query or
    fragment); empty means the default (`Settings.public_base_url`)."""
    value = value.strip()
    if not value:
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - (a port that is not a number raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(
            f"{name} must be an absolute http:// or https:// URL without query or fragment"
            f" (such as https://controlplane.example.com), got {value!r}"
        )
    return value.rstrip("/")
