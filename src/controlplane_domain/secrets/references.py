"""`{{secret:NAME}}` references in an ExecutionEnvironment: found, checked when an agent or team is saved, and
replaced by the values in a lease.

References may stand in `env_vars` values and in each MCP server's `env` and `headers` values; `secrets` lists
names whose values the worker receives as they are."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import replace

from controlplane_domain.config import ExecutionEnvironment, MCPServerConfig
from controlplane_domain.errors import ValidationFailed, dotted_path
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.entity import SECRET_NAME

REFERENCE = re.compile(r"\{\{\s*secret:([^{}]*?)\s*\}\}")
MAX_REFERENCES = 64
"""Secret references an environment may hold (`secrets` included; 422 beyond): a lease replaces each by a value
of up to 64 KiB, so an environment resolves to at most 4 MiB of secrets whatever its text repeats."""


Where = tuple[str | int, ...]  # a field's parts: keys (as given) and indexes


def _in_text(field: Where, text: str) -> Iterator[tuple[Where, str]]:
    for match in REFERENCE.finditer(text):
        yield field, match.group(1)


def secret_references(prefix: str, environment: ExecutionEnvironment) -> list[tuple[Where, str]]:
    """Every (field, name) the environment refers to, in the order of its fields."""
    at = dotted_path(prefix)
    found: list[tuple[Where, str]] = [((*at, "secrets", index), name) for index, name in enumerate(environment.secrets)]
    for key, value in environment.env_vars.items():
        found.extend(_in_text((*at, "env_vars", key), value))
    for server_name, server in environment.mcp_servers.items():
        for part, values in (("env", server.env), ("headers", server.headers)):
            for key, value in (values or {}).items():
                found.extend(_in_text((*at, "mcp_servers", server_name, part, key), value))
    return found


def referenced_names(environment: ExecutionEnvironment) -> list[str]:
    """The secret names the environment needs, each once: what a lease reveals."""
    return list(dict.fromkeys(name for _, name in secret_references("", environment)))


async def check_secret_references(
    uow: UnitOfWork, organization_id: str, prefix: str, environment: ExecutionEnvironment | None
) -> None:
    """Every name referred to is a valid name of an existing secret of the organization, and they are at most
    MAX_REFERENCES; 422 naming the field."""
    references = [] if environment is None else secret_references(prefix, environment)
    if not references:
        return
    if len(references) > MAX_REFERENCES:
        raise ValidationFailed(prefix, f"at most {MAX_REFERENCES} secret references (max_secret_references)")
    for field, name in references:
        if SECRET_NAME.fullmatch(name) is None:
            raise ValidationFailed(field, f"'{name}' is not a valid secret name")
    names = list(dict.fromkeys(name for _, name in references))
    existing = {secret.name for secret in await uow.secrets.get_by_names(organization_id, names)}
    for field, name in references:
        if name not in existing:
            raise ValidationFailed(field, f"unknown secret '{name}'")


def _resolved(text: str, values: Mapping[str, str]) -> str:
    return REFERENCE.sub(lambda match: values[match.group(1)], text)


def _resolved_map(values: dict[str, str] | None, secrets: Mapping[str, str]) -> dict[str, str] | None:
    return None if values is None else {key: _resolved(value, secrets) for key, value in values.items()}


def resolve_references(environment: ExecutionEnvironment, values: Mapping[str, str]) -> ExecutionEnvironment:
    """The environment with each `{{secret:NAME}}` replaced by `values[NAME]` (what `reveal_for_lease` gave): for
    the lease's worker only, never stored."""
    servers: dict[str, MCPServerConfig] = {
        name: replace(server, env=_resolved_map(server.env, values), headers=_resolved_map(server.headers, values))
        for name, server in environment.mcp_servers.items()
    }
    env_vars = {key: _resolved(value, values) for key, value in environment.env_vars.items()}
    return replace(environment, env_vars=env_vars, mcp_servers=servers)
