"""Custom integration use cases: create, read, change, delete, and the rules of their env vars, secret names,
files and setup commands."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.integrations.entity import (
    DEFAULT_MODE,
    ENV_VAR_NAME,
    FILE_PATH,
    MAX_ENV_VAR_NAME,
    MAX_ENV_VAR_VALUE,
    MAX_ENV_VARS,
    MAX_FILES,
    MAX_FILES_BYTES,
    MAX_MODE,
    MAX_PATH,
    MAX_SECRET_NAMES,
    MAX_SETUP_COMMAND,
    MAX_SETUP_COMMANDS,
    MODE_TEXT,
    CustomIntegration,
    IntegrationFile,
)
from controlplane_domain.names import check_name
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.references import Dangling, Kind
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import SECRET_NAME


@dataclass(frozen=True, slots=True)
class FileSpec:
    """A file as given: `mode` an int (0 to 0o777) or a string of octal digits ("644", "0644", "0o644")."""

    path: str
    content: str
    mode: int | str = DEFAULT_MODE


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateCustomIntegration:
    name: str
    description: str | None = None
    env_vars: dict[str, str] = field(default_factory=dict)
    secret_names: list[str] = field(default_factory=list)
    files: list[FileSpec] = field(default_factory=list)
    setup_commands: list[str] = field(default_factory=list)
    enabled: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateCustomIntegration:
    name: str | Unset = UNSET
    description: str | Unset | None = UNSET
    env_vars: dict[str, str] | Unset = UNSET
    secret_names: list[str] | Unset = UNSET
    files: list[FileSpec] | Unset = UNSET
    setup_commands: list[str] | Unset = UNSET
    enabled: bool | Unset = UNSET


def parse_mode(field_name: str, mode: int | str) -> int:
    """A file mode from an int or a string of octal digits, permission bits only (no setuid, setgid or sticky
    bit); 422 naming the field otherwise."""
    if isinstance(mode, str):
        if MODE_TEXT.fullmatch(mode) is None:
            raise ValidationFailed(field_name, 'must be octal digits from "0" to "0777" ("0644", "755"), or an '
                                   "integer from 0 to 511: no setuid, setgid or sticky bit")  # fmt: skip
        mode = int(mode.removeprefix("0o"), 8)
    if isinstance(mode, bool) or not 0 <= mode <= MAX_MODE:
        raise ValidationFailed(field_name, "must be a file mode from 0 to 0o777 (511): no setuid, setgid or sticky bit")
    return mode


def check_path(field_name: str, path: str) -> None:
    """A normalised absolute path (FILE_PATH): no empty, '.' or '..' segment, no '%', no control character."""
    if len(path) > MAX_PATH:
        raise ValidationFailed(field_name, f"must be at most {MAX_PATH} characters")
    if not path.startswith("/"):
        raise ValidationFailed(field_name, "must be an absolute path (starting with /)")
    if any(ord(character) < 0x20 or character == "\x7f" for character in path):
        raise ValidationFailed(field_name, "must not contain NUL or another control character")
    if "%" in path:
        raise ValidationFailed(field_name, "must not contain '%': give the path as it is, not percent-encoded")
    segments = path.split("/")[1:]
    if "" in segments:
        raise ValidationFailed(field_name, "must be normalised: no '//' and no trailing '/'")
    if "." in segments or ".." in segments:
        raise ValidationFailed(field_name, "must be normalised: no '.' or '..' segment")
    if FILE_PATH.fullmatch(path) is None:  # (the same rule in one expression: the wire's pattern)
        raise ValidationFailed(field_name, "must be a normalised absolute path")


def files_of(specs: Sequence[FileSpec]) -> list[IntegrationFile]:
    """The files given, checked: at most MAX_FILES, paths absolute and each once, 1 MiB of content in all."""
    if len(specs) > MAX_FILES:
        raise ValidationFailed("files", f"at most {MAX_FILES} files")
    files, seen, size = [], set(), 0
    for index, spec in enumerate(specs):
        check_path(f"files.{index}.path", spec.path)
        if spec.path in seen:
            raise ValidationFailed(f"files.{index}.path", f"'{spec.path}' is given twice")
        seen.add(spec.path)
        size += len(spec.content.encode())
        if size > MAX_FILES_BYTES:
            raise ValidationFailed(f"files.{index}.content", f"the files' content is at most {MAX_FILES_BYTES} bytes "
                                   "(UTF-8) in all")  # fmt: skip
        files.append(IntegrationFile(spec.path, spec.content, parse_mode(f"files.{index}.mode", spec.mode)))
    return files


def check_env_vars(env_vars: dict[str, str]) -> None:
    if len(env_vars) > MAX_ENV_VARS:
        raise ValidationFailed("env_vars", f"at most {MAX_ENV_VARS} variables")
    for name, value in env_vars.items():
        if ENV_VAR_NAME.fullmatch(name) is None or len(name) > MAX_ENV_VAR_NAME:
            raise ValidationFailed(("env_vars", name), f"names are a letter or _, then letters, digits or _ (at "
                                   f"most {MAX_ENV_VAR_NAME})")  # fmt: skip
        if len(value) > MAX_ENV_VAR_VALUE or "\x00" in value:
            raise ValidationFailed(("env_vars", name), f"values are at most {MAX_ENV_VAR_VALUE} characters, no NUL")


def check_setup_commands(commands: Sequence[str]) -> None:
    if len(commands) > MAX_SETUP_COMMANDS:
        raise ValidationFailed("setup_commands", f"at most {MAX_SETUP_COMMANDS} commands")
    for index, command in enumerate(commands):
        if not command.strip() or len(command) > MAX_SETUP_COMMAND or "\x00" in command:
            raise ValidationFailed(f"setup_commands.{index}", f"must not be blank; at most {MAX_SETUP_COMMAND} "
                                   "characters, no NUL")  # fmt: skip


async def check_secret_names(uow: UnitOfWork, organization_id: str, names: Sequence[str]) -> list[str]:
    """The names without repeats (order kept), once each is a secret of the organization (422 naming its index)."""
    if len(names) > MAX_SECRET_NAMES:
        raise ValidationFailed("secret_names", f"at most {MAX_SECRET_NAMES} names")
    for index, name in enumerate(names):
        if SECRET_NAME.fullmatch(name) is None:
            raise ValidationFailed(f"secret_names.{index}", f"'{name}' is not a valid secret name")
    wanted = list(dict.fromkeys(names))
    existing = {secret.name for secret in await uow.secrets.get_by_names(organization_id, wanted)}
    for index, name in enumerate(names):
        if name not in existing:
            raise ValidationFailed(f"secret_names.{index}", f"unknown secret '{name}'")
    return wanted


def _check(integration: CustomIntegration) -> None:
    check_name("name", integration.name)
    check_env_vars(integration.env_vars)
    check_setup_commands(integration.setup_commands)


CUSTOM_INTEGRATIONS = Area("custom integration", lambda uow: uow.custom_integrations, Kind.CUSTOM_INTEGRATION)


@retry_transient
async def create_custom_integration(
    ports: Ports, organization_id: str, command: CreateCustomIntegration
) -> CustomIntegration:
    integration = crud.new(CustomIntegration, ports, organization_id, command, files=files_of(command.files))
    _check(integration)

    async def secrets_exist(uow: UnitOfWork, integration: CustomIntegration) -> CustomIntegration:
        return replace(
            integration, secret_names=await check_secret_names(uow, organization_id, integration.secret_names)
        )

    return await crud.add(CUSTOM_INTEGRATIONS, ports, integration, secrets_exist)


async def get_custom_integration(ports: Ports, organization_id: str, integration_id: str) -> CustomIntegration:
    return await crud.get(CUSTOM_INTEGRATIONS, ports, organization_id, integration_id)


async def list_custom_integrations(ports: Ports, organization_id: str, page: PageRequest) -> Page[CustomIntegration]:
    return await crud.list_page(CUSTOM_INTEGRATIONS, ports, organization_id, page)


@retry_transient
async def update_custom_integration(
    ports: Ports, organization_id: str, integration_id: str, command: UpdateCustomIntegration
) -> CustomIntegration:
    """Change the given fields; given `secret_names` must all be secrets of the organization (a PATCH that does
    not give them does not check them again, so a rename never trips on a secret deleted since)."""
    files = None if isinstance(command.files, Unset) else files_of(command.files)

    async def change(uow: UnitOfWork, stored: CustomIntegration, now: datetime) -> CustomIntegration:
        updated = crud.patched(stored, command, now, ("secret_names",), files=stored.files if files is None else files)
        _check(updated)
        if not isinstance(command.secret_names, Unset):
            updated = replace(
                updated, secret_names=await check_secret_names(uow, organization_id, command.secret_names)
            )
        return updated

    return await crud.update_in(CUSTOM_INTEGRATIONS, ports, organization_id, integration_id, change)


@retry_transient
async def delete_custom_integration(
    ports: Ports, organization_id: str, integration_id: str, *, force: bool = False
) -> Dangling:
    """Delete it. Agents and teams naming it: 409 IN_USE, or with `force` they keep the id (references.py)."""
    return await crud.delete(CUSTOM_INTEGRATIONS, ports, organization_id, integration_id, force=force)
