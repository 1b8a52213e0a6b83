"""Wire types of integration templates, integrations and custom integrations."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.integrations.catalog import BY_KIND, MASK
from controlplane_domain.integrations.entity import (
    FILE_PATH,
    MAX_FILES_BYTES,
    MAX_MODE,
    MAX_PATH,
    MAX_SETUP_COMMAND,
    MAX_SETUP_COMMANDS,
    MODE_TEXT,
)
from controlplane_wire.base import NOT_BLANK, Name, OrganizationResource, Page, Request, one_of

Kind = Annotated[str, one_of(BY_KIND, "GET /api/v1/integration-templates")]
Configuration = Annotated[
    dict[str, Any],
    Meta(
        description=f"follows the JSON Schema of the kind's template; secret fields are answered as {MASK!r}, and "
        f"a PATCH that gives {MASK!r} back keeps the stored value"
    ),
]
EnvVars = Annotated[
    dict[str, str],
    Meta(description="names ^[A-Za-z_][A-Za-z0-9_]*$ (at most 128 characters); at most 200; values as given"),
]
SecretName = Annotated[str, Meta(pattern="^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
Mode = Annotated[
    int | str,
    Meta(
        extra_json_schema={
            "description": "a file mode, permission bits only (no setuid, setgid or sticky bit): an integer from 0 to "
            '511 (0o777), or octal digits as a string from "0" to "0777" ("0644", "755", "0o600")',
            "extra": {
                "one_of": [
                    {"type": "integer", "minimum": 0, "maximum": MAX_MODE},
                    {"type": "string", "pattern": f"^{MODE_TEXT.pattern}$"},
                ]
            },
        }
    ),
]
"""(The domain checks it, naming what is wrong: `parse_mode`; the document states the same rule.)"""
# (documented only: the use case's check says what is wrong)
SetupCommand = Annotated[str, Meta(extra_json_schema={"pattern": NOT_BLANK, "maxLength": MAX_SETUP_COMMAND})]
SetupCommands = Annotated[list[SetupCommand], Meta(extra_json_schema={"maxItems": MAX_SETUP_COMMANDS})]
Path = Annotated[
    str,
    Meta(
        min_length=2,
        max_length=MAX_PATH,
        extra_json_schema={
            "description": "a normalised absolute path: no empty ('//', a trailing '/'), '.' or '..' segment, no '%' "
            "and no control character",
            "pattern": f"^{FILE_PATH.pattern}$",
        },
    ),
]
"""(The domain checks the pattern, naming which part of it fails: `check_path`; the document states it.)"""


class TemplateEnvVar(msgspec.Struct, kw_only=True):
    name: str
    field: str
    secret: bool


class IntegrationTemplate(msgspec.Struct, kw_only=True):
    kind: str
    name: str
    description: str
    configuration_schema: dict[str, Any]
    secret_fields: list[str]
    env_vars: list[TemplateEnvVar]


class IntegrationTemplateList(Page[IntegrationTemplate]):
    items: list[IntegrationTemplate]


class IntegrationCreate(Request, kw_only=True):
    name: Name
    kind: Kind
    configuration: Configuration = {}
    enabled: bool = True


class IntegrationUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    kind: Kind | UnsetType = UNSET
    configuration: Configuration | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET


class Integration(OrganizationResource, kw_only=True):
    name: str
    kind: str
    configuration: dict[str, Any]
    enabled: bool
    created_at: datetime
    updated_at: datetime


class IntegrationList(Page[Integration]):
    items: list[Integration]


class FileIn(Request, kw_only=True):
    path: Path
    content: Annotated[str, Meta(description=f"text; all files' content at most {MAX_FILES_BYTES} bytes (UTF-8)")]
    mode: Mode = "0644"


class FileOut(msgspec.Struct, kw_only=True):
    path: str
    content: str
    mode: Annotated[
        str,
        Meta(
            description='four octal digits, e.g. "0644" (a file stored before the modes were '
            "limited to 0777 may show a setuid, setgid or sticky bit: it is dropped from a lease's "
            "files)"
        ),
    ]


class CustomIntegrationCreate(Request, kw_only=True):
    name: Name
    description: str | None = None
    env_vars: EnvVars = {}
    secret_names: list[SecretName] = []
    files: list[FileIn] = []
    setup_commands: SetupCommands = []
    enabled: bool = True


class CustomIntegrationUpdate(Request, kw_only=True):
    name: Name | UnsetType = UNSET
    description: str | UnsetType | None = UNSET
    env_vars: EnvVars | UnsetType = UNSET
    secret_names: list[SecretName] | UnsetType = UNSET
    files: list[FileIn] | UnsetType = UNSET
    setup_commands: SetupCommands | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET


class CustomIntegration(OrganizationResource, kw_only=True):
    name: str
    description: str | None
    env_vars: dict[str, str]
    secret_names: list[str]
    files: list[FileOut]
    setup_commands: list[str]
    enabled: bool
    created_at: datetime
    updated_at: datetime


class CustomIntegrationList(Page[CustomIntegration]):
    items: list[CustomIntegration]
