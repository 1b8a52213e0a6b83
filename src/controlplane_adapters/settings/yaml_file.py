"""Settings from the YAML file (the spec's keys): every key known (`YAML_KEYS`), every value checked as its
environment variable's is (loading.py reads the file first, then the variables, which win)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from controlplane_adapters.settings.model import ConfigError, Settings
from controlplane_adapters.settings.values import (
    database_url,
    parse_bool,
    parse_int,
    parse_methods,
    parse_networks,
    parse_text,
    public_url,
    redis_url,
)

MAX_PORT = 65535
MAX_RATE_PER_MINUTE = 1_000_000
MAX_BODY_BYTES = 1024**3
MAX_LEASE_TIMEOUT_SECONDS = 86_400
MAX_STATEMENT_TIMEOUT_MS = 3_600_000
MAX_REDIS_TIMEOUT_MS = 60_000
# The YAML file's keys, section by section ("" is the top level); any other key is refused (a typo such as
# `databse:` would otherwise leave the server on its default store without a word).
YAML_KEYS: dict[str, frozenset[str]] = {
    "": frozenset({"server", "database", "redis"}),
    "server": frozenset({
        "host", "port", "default_organization", "auth", "rate_limit_per_minute", "worker_rate_limit_per_minute",
        "service_rate_limit_per_minute", "max_body_bytes", "trusted_proxies", "public_url",
    }),
    "server.auth": frozenset({
        "required", "methods", "api_key_header", "jwt_secret", "api_key", "jwt_audience", "jwt_issuer",
    }),
    "database": frozenset({"url", "auto_migrate", "statement_timeout_ms", "generic_plans"}),
    "redis": frozenset({"url", "timeout_ms"}),
}  # fmt: skip
_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$|^env:([A-Za-z_][A-Za-z0-9_]*)$")


def _check_keys(path: Path, data: Mapping[Any, Any], section: str = "") -> None:
    """Refuse keys the file may not hold, and sections that are not mappings."""
    for key, value in data.items():
        dotted = f"{section}.{key}" if section else str(key)
        known = YAML_KEYS[section]
        if key not in known:
            raise ConfigError(
                f"configuration file {path}: unknown key {dotted!r} (known here: {', '.join(sorted(known))})"
            )
        if dotted in YAML_KEYS and value is not None:
            if not isinstance(value, Mapping):
                raise ConfigError(f"configuration file {path}: {dotted} must be a mapping, got {value!r}")
            _check_keys(path, value, dotted)


def _resolve_reference(value: str, env: Mapping[str, str]) -> str | None:
    """`${NAME}` or `env:NAME` reads the variable NAME; any other text is the secret itself."""
    match = _REFERENCE.match(value.strip())
    if match is None:
        return value
    return env.get(match.group(1) or match.group(2)) or None


def _dig(data: Mapping[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def from_file(path: Path, env: Mapping[str, str]) -> Settings:
    import yaml  # only a server started with a configuration file needs it

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read configuration file {path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"configuration file {path} must hold a mapping")
    _check_keys(path, data)
    settings = Settings()
    auth = settings.auth
    if (value := _dig(data, "server.auth.required")) is not None:
        auth = replace(auth, required=parse_bool("server.auth.required", value))
    if (value := _dig(data, "server.auth.methods")) is not None:
        auth = replace(auth, methods=parse_methods("server.auth.methods", value))
    if (value := _dig(data, "server.auth.api_key_header")) is not None:
        auth = replace(auth, api_key_header=parse_text("server.auth.api_key_header", value))
    if (value := _dig(data, "server.auth.jwt_secret")) is not None:
        auth = replace(auth, jwt_secret=_resolve_reference(parse_text("server.auth.jwt_secret", value), env))
    if (value := _dig(data, "server.auth.jwt_audience")) is not None:
        auth = replace(auth, jwt_audience=parse_text("server.auth.jwt_audience", value))
    if (value := _dig(data, "server.auth.jwt_issuer")) is not None:
        auth = replace(auth, jwt_issuer=parse_text("server.auth.jwt_issuer", value))
    if (value := _dig(data, "server.auth.api_key")) is not None:
        settings = replace(settings, service_api_key=_resolve_reference(parse_text("server.auth.api_key", value), env))
    if (value := _dig(data, "server.host")) is not None:
        settings = replace(settings, host=parse_text("server.host", value))
    if (value := _dig(data, "server.port")) is not None:
        settings = replace(settings, port=parse_int("server.port", value, maximum=MAX_PORT))
    if (value := _dig(data, "database.url")) is not None:
        settings = replace(settings, database_url=database_url("database.url", parse_text("database.url", value)))
    if (value := _dig(data, "database.auto_migrate")) is not None:
        settings = replace(settings, auto_migrate=parse_bool("database.auto_migrate", value))
    if (value := _dig(data, "database.statement_timeout_ms")) is not None:
        limit = parse_int("database.statement_timeout_ms", value, minimum=0, maximum=MAX_STATEMENT_TIMEOUT_MS)
        settings = replace(settings, database_statement_timeout_ms=limit)
    if (value := _dig(data, "database.generic_plans")) is not None:
        settings = replace(settings, database_generic_plans=parse_bool("database.generic_plans", value))
    if (value := _dig(data, "server.rate_limit_per_minute")) is not None:
        settings = replace(
            settings,
            rate_limit_per_minute=parse_int("server.rate_limit_per_minute", value, maximum=MAX_RATE_PER_MINUTE),
        )
    if (value := _dig(data, "server.worker_rate_limit_per_minute")) is not None:
        settings = replace(
            settings,
            worker_rate_limit_per_minute=parse_int(
                "server.worker_rate_limit_per_minute", value, maximum=MAX_RATE_PER_MINUTE
            ),
        )
    if (value := _dig(data, "server.service_rate_limit_per_minute")) is not None:
        settings = replace(
            settings,
            service_rate_limit_per_minute=parse_int(
                "server.service_rate_limit_per_minute", value, maximum=MAX_RATE_PER_MINUTE
            ),
        )
    if (value := _dig(data, "server.max_body_bytes")) is not None:
        settings = replace(settings, max_body_bytes=parse_int("server.max_body_bytes", value, maximum=MAX_BODY_BYTES))
    if (value := _dig(data, "redis.url")) is not None:
        settings = replace(settings, redis_url=redis_url("redis.url", parse_text("redis.url", value)))
    if (value := _dig(data, "redis.timeout_ms")) is not None:
        timeout = parse_int("redis.timeout_ms", value, minimum=1, maximum=MAX_REDIS_TIMEOUT_MS)
        settings = replace(settings, redis_timeout_ms=timeout)
    if (value := _dig(data, "server.trusted_proxies")) is not None:
        settings = replace(settings, trusted_proxies=parse_networks("server.trusted_proxies", value))
    if (value := _dig(data, "server.public_url")) is not None:
        settings = replace(settings, public_url=public_url("server.public_url", parse_text("server.public_url", value)))
    if (value := _dig(data, "server.default_organization")) is not None:
        settings = replace(settings, default_organization=parse_text("server.default_organization", value))
    return replace(settings, auth=auth)
