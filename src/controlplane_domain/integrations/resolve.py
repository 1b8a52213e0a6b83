"""What an execution's lease carries of its integrations: env vars, files, the secret names to reveal, the setup
commands. Called by the lease in its unit of work; values leave the store here and in the lease only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from controlplane_domain.integrations.catalog import BY_KIND
from controlplane_domain.integrations.entity import MAX_MODE, IntegrationFile
from controlplane_domain.integrations.sealing import open_fields
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.entity import SecretsKeyMissing
from controlplane_domain.secrets.ports import SecretCipher

File = IntegrationFile
"""A file to write in the worker's sandbox: `path` (absolute), `content` (text), `mode` (an int, e.g. 0o644)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedIntegrations:
    """Everything the integrations give one run, merged in order (see `resolve_integrations`)."""

    env_vars: dict[str, str] = field(default_factory=dict)
    files: list[File] = field(default_factory=list)
    secret_names: list[str] = field(default_factory=list)
    setup_commands: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


async def resolve_integrations(
    uow: UnitOfWork,
    cipher: SecretCipher | None,
    organization_id: str,
    integration_ids: Sequence[str],
    custom_integration_ids: Sequence[str],
) -> ResolvedIntegrations:
    """The integrations' contribution to a lease. Built-in integrations first, in `integration_ids` order, each
    giving its template's env vars for the fields that are set (secret fields opened with `cipher`); then custom
    integrations in `custom_integration_ids` order: their env vars and files as given, their `secret_names` listed
    (each once) for the lease to reveal with `secrets.reveal.reveal_for_lease`, their setup commands in order.
    A later integration's env var (or file at the same path) replaces an earlier one's. Disabled integrations and
    ids that name nothing (deleted since the agent was saved) are left out; an id given twice counts once.
    SecretsKeyMissing when an integration to open has secret fields and `cipher` is None; SecretUnreadable when
    another key sealed them."""
    env_vars: dict[str, str] = {}
    files: dict[str, File] = {}
    secret_names: list[str] = []
    setup_commands: list[str] = []
    wanted = list(dict.fromkeys(integration_ids))
    found = {item.id: item for item in await uow.integrations.get_many(organization_id, wanted)} if wanted else {}
    for integration_id in wanted:
        integration = found.get(integration_id)
        if integration is None or not integration.enabled:
            continue
        template = BY_KIND.get(integration.kind)
        if template is None:
            continue
        if integration.sealed is not None and cipher is None:
            raise SecretsKeyMissing()
        values = {**integration.configuration, **(open_fields(cipher, integration) if cipher is not None else {})}
        for variable, field_name in template.env.items():
            if field_name in values and values[field_name] is not None:
                env_vars[variable] = _text(values[field_name])
    custom_wanted = list(dict.fromkeys(custom_integration_ids))
    custom = (
        {item.id: item for item in await uow.custom_integrations.get_many(organization_id, custom_wanted)}
        if custom_wanted
        else {}
    )
    for integration_id in custom_wanted:
        item = custom.get(integration_id)
        if item is None or not item.enabled:
            continue
        env_vars.update(item.env_vars)
        for file in item.files:
            files.pop(file.path, None)  # a later file at the same path takes the later place
            # (permission bits only, even of a file stored before the special bits were refused)
            files[file.path] = file if file.mode <= MAX_MODE else replace(file, mode=file.mode & MAX_MODE)
        secret_names.extend(name for name in item.secret_names if name not in secret_names)
        setup_commands.extend(item.setup_commands)
    return ResolvedIntegrations(
        env_vars=env_vars, files=list(files.values()), secret_names=secret_names, setup_commands=setup_commands
    )
