"""Integration use cases: the templates, and create, read, change, delete an integration.

A configuration is checked whole (secret fields included) against its kind's schema; its secret fields are then
sealed (sealing.py) and answered as `MASK`. A PATCH whose configuration gives a secret field as `MASK` keeps the
stored value of that field; a secret field left out of a PATCH's configuration is removed, like any field (the
configuration is replaced as a whole)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from controlplane_domain import crud
from controlplane_domain.config import JSONObject
from controlplane_domain.crud import Area
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.integrations.catalog import BY_KIND, MASK, IntegrationTemplate
from controlplane_domain.integrations.entity import Integration
from controlplane_domain.integrations.sealing import open_fields, seal_fields
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import Dangling, Kind
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.ports import SecretCipher
from controlplane_domain.secrets.usecases import require_cipher
from controlplane_domain.skills.ports import SchemaValidator
from controlplane_domain.skills.usecases import is_heavy, schema_validator

HIDDEN = "is not valid (a secret field's value is not quoted)"


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateIntegration:
    name: str
    kind: str
    configuration: JSONObject = field(default_factory=dict)
    enabled: bool = True

    def __repr__(self) -> str:  # the configuration holds secret values: never in a log line
        return f"CreateIntegration(name={self.name!r}, kind={self.kind!r}, configuration=<hidden>)"


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateIntegration:
    name: str | Unset = UNSET
    kind: str | Unset = UNSET
    configuration: JSONObject | Unset = UNSET
    enabled: bool | Unset = UNSET

    def __repr__(self) -> str:
        shown = "<unset>" if isinstance(self.configuration, Unset) else "<hidden>"
        return f"UpdateIntegration(name={self.name!r}, kind={self.kind!r}, configuration={shown})"


def require_template(kind: str) -> IntegrationTemplate:
    template = BY_KIND.get(kind)
    if template is None:
        raise ValidationFailed("kind", f"unknown integration kind '{kind}'; one of: {', '.join(BY_KIND)}")
    return template


def get_template(kind: str) -> IntegrationTemplate:
    """The built-in template of this kind, or NotFound."""
    template = BY_KIND.get(kind)
    if template is None:
        raise NotFound("integration template", kind)
    return template


def _hidden(message: str, secrets: list[Any]) -> str:
    """The message with no secret value in it: quoted ones masked, and a generic one when a value still shows."""
    texts = [value for value in secrets if isinstance(value, str) and value]
    for value in texts:
        message = message.replace(repr(value), repr(MASK))
    if any(value in message for value in texts):
        return HIDDEN
    return message


def check_configuration(validator: SchemaValidator, template: IntegrationTemplate, configuration: JSONObject) -> None:
    """The configuration follows the template's schema; else 422 naming `configuration.<path>`, never quoting a
    secret field's value."""
    problems = validator.problems(dict(template.schema), configuration)
    if problems:
        first = problems[0]
        secrets = [configuration[name] for name in template.secret_fields if name in configuration]
        raise ValidationFailed(("configuration", *first.path), _hidden(first.message, secrets))


async def check_configuration_off_loop(
    validator: SchemaValidator, template: IntegrationTemplate, configuration: JSONObject
) -> None:
    """`check_configuration`, in a worker thread when the configuration is heavy (skills/usecases.py `is_heavy`):
    never inside a unit of work."""
    if is_heavy(configuration):
        await asyncio.to_thread(check_configuration, validator, template, configuration)
    else:
        check_configuration(validator, template, configuration)


def _split(
    ports: Ports,
    template: IntegrationTemplate,
    integration: Integration,
    configuration: Mapping[str, Any],
    *,
    checked: bool = False,
) -> Integration:
    """The integration holding `configuration` (checked here unless `checked`): plain fields as they are, secret
    fields sealed (the cipher is needed only when there are some: SecretsKeyMissing otherwise)."""
    if not checked:
        check_configuration(schema_validator(ports), template, dict(configuration))
    secret = {name: configuration[name] for name in template.secret_fields if name in configuration}
    plain = {name: value for name, value in configuration.items() if name not in secret}
    sealed = None
    if secret:
        sealed = seal_fields(require_cipher(ports), integration.organization_id, integration.id, secret)
    return replace(integration, configuration=plain, secret_fields=tuple(sorted(secret)), sealed=sealed)


def _unmasked(
    cipher: SecretCipher | None, template: IntegrationTemplate, stored: Integration, given: JSONObject
) -> JSONObject:
    """`given` with each secret field given as `MASK` replaced by the stored value (422 when none is stored)."""
    masked = [name for name in template.secret_fields if given.get(name) == MASK]
    if not masked:
        return dict(given)
    for name in masked:
        if name not in stored.secret_fields:
            raise ValidationFailed(("configuration", name), f"{MASK} keeps a stored value, and none is stored")
    assert cipher is not None
    values = open_fields(cipher, stored)
    return {**given, **{name: values[name] for name in masked}}


def _check_name(name: str) -> None:
    check_name("name", name)


INTEGRATIONS = Area("integration", lambda uow: uow.integrations, Kind.INTEGRATION)


async def require_integration(
    uow: UnitOfWork, organization_id: str, integration_id: str, *, lock: bool = False
) -> Integration:
    """The integration of this organization, or NotFound."""
    return await crud.require(INTEGRATIONS, uow, organization_id, integration_id, lock=lock)


@retry_transient
async def create_integration(ports: Ports, organization_id: str, command: CreateIntegration) -> Integration:
    _check_name(command.name)
    template = require_template(command.kind)
    for name in template.secret_fields:
        if command.configuration.get(name) == MASK:
            raise ValidationFailed(("configuration", name), f"{MASK} keeps a stored value, and none is stored")
    omit = ("configuration",)  # (split below into plain and sealed fields)
    blank = crud.new(
        Integration, ports, organization_id, command, omit, configuration={}, secret_fields=(), sealed=None
    )
    await check_configuration_off_loop(schema_validator(ports), template, dict(command.configuration))
    integration = _split(ports, template, blank, command.configuration, checked=True)
    return await crud.add(INTEGRATIONS, ports, integration)


async def get_integration(ports: Ports, organization_id: str, integration_id: str) -> Integration:
    return await crud.get(INTEGRATIONS, ports, organization_id, integration_id)


async def list_integrations(ports: Ports, organization_id: str, page: PageRequest) -> Page[Integration]:
    return await crud.list_page(INTEGRATIONS, ports, organization_id, page)


def _needs_cipher(template: IntegrationTemplate, stored: Integration, command: UpdateIntegration) -> bool:
    """Whether the change reads stored secret values (a mask, or a new kind checked with the kept configuration)
    or writes new ones: then SecretsKeyMissing without a key."""
    if isinstance(command.configuration, Unset):
        return isinstance(command.kind, str) and bool(stored.secret_fields)
    return any(name in command.configuration for name in template.secret_fields)


def _changed(
    ports: Ports, stored: Integration, command: UpdateIntegration
) -> tuple[Integration, IntegrationTemplate | None, JSONObject | None]:
    """The integration as `command` changes `stored` (not yet checked nor sealed): with the template and the whole
    configuration (secret fields unmasked) to check and seal, when the kind or the configuration changes."""
    updated = crud.patched(stored, command, ports.clock.now(), ("configuration",))
    if isinstance(command.configuration, Unset) and isinstance(command.kind, Unset):
        return updated, None, None
    template = require_template(updated.kind)
    cipher = require_cipher(ports) if _needs_cipher(template, stored, command) else ports.secrets_cipher
    if isinstance(command.configuration, Unset):
        return updated, template, {**stored.configuration, **(open_fields(cipher, stored) if cipher else {})}
    return updated, template, _unmasked(cipher, template, stored, command.configuration)


@retry_transient
async def update_integration(
    ports: Ports, organization_id: str, integration_id: str, command: UpdateIntegration
) -> Integration:
    """Change the given fields. A new `configuration` replaces the stored one (a secret field given as `MASK`
    keeps its stored value); a new `kind` alone checks the kept configuration against the new kind's schema.

    The configuration is checked before the unit of work (off the event loop when it is heavy, as at create),
    against the integration as read just before: the unit of work then only seals and writes, unless the
    integration changed meanwhile (its `updated_at` or sealed fields differ), when it is checked again there (in
    place: a concurrent change is rare)."""
    if isinstance(command.name, str):
        _check_name(command.name)
    checked: Integration | None = None  # the integration read, whose change's configuration was checked
    if not (isinstance(command.configuration, Unset) and isinstance(command.kind, Unset)):
        async with ports.read() as uow:
            before = await require_integration(uow, organization_id, integration_id)
        _, template, configuration = _changed(ports, before, command)
        if template is not None and configuration is not None:
            await check_configuration_off_loop(schema_validator(ports), template, configuration)
            checked = before

    async def change(uow: UnitOfWork, stored: Integration, now: datetime) -> Integration:
        updated, template, configuration = _changed(ports, stored, command)
        if template is not None and configuration is not None:
            unchanged = checked is not None and (checked.updated_at, checked.sealed) == (
                stored.updated_at,
                stored.sealed,
            )
            updated = _split(ports, template, updated, configuration, checked=unchanged)
        return updated

    return await crud.update_in(INTEGRATIONS, ports, organization_id, integration_id, change)


@retry_transient
async def delete_integration(
    ports: Ports, organization_id: str, integration_id: str, *, force: bool = False
) -> Dangling:
    """Delete the integration (and its sealed fields). Agents and teams naming it: 409 IN_USE, or with `force` they
    keep the id (references.py); the lease's resolution leaves out an id that names nothing."""
    return await crud.delete(INTEGRATIONS, ports, organization_id, integration_id, force=force)
