"""The built-in integration templates: each kind's configuration schema, its secret fields, the env vars it gives.

Plain data; a configuration is checked against its template's schema by the `SchemaValidator` port (skills'
ports.py). Secret fields are marked `writeOnly` in the schemas: they are stored sealed and answered as `MASK`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

JSONSchema = Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class IntegrationTemplate:
    """A kind of integration: what its configuration holds (a JSON Schema, draft 2020-12), which of its fields
    are secrets (stored encrypted, answered as a mask), and which environment variables a worker gets from it."""

    kind: str
    name: str
    description: str
    schema: JSONSchema
    secret_fields: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variable -> configuration field it carries (only fields that are set)."""


def _schema(properties: Mapping[str, Any], required: tuple[str, ...]) -> JSONSchema:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


_URL = {"type": "string", "format": "uri", "pattern": "^https?://", "maxLength": 2048}
_TOKEN = {"type": "string", "minLength": 1, "maxLength": 8192}
_TEXT = {"type": "string", "minLength": 1, "maxLength": 255}

_DECLARED: tuple[IntegrationTemplate, ...] = (
    IntegrationTemplate(
        kind="github",
        name="GitHub",
        description="Repositories, issues and pull requests through the GitHub API.",
        schema=_schema(
            {"token": _TOKEN, "base_url": {**_URL, "default": "https://api.github.com"}, "organization": _TEXT},
            ("token",),
        ),
        secret_fields=("token",),
        env={"GITHUB_TOKEN": "token", "GITHUB_API_URL": "base_url", "GITHUB_ORGANIZATION": "organization"},
    ),
    IntegrationTemplate(
        kind="gitlab",
        name="GitLab",
        description="Projects, issues and merge requests through the GitLab API.",
        schema=_schema({"token": _TOKEN, "base_url": {**_URL, "default": "https://gitlab.com"}}, ("token",)),
        secret_fields=("token",),
        env={"GITLAB_TOKEN": "token", "GITLAB_URL": "base_url"},
    ),
    IntegrationTemplate(
        kind="slack",
        name="Slack",
        description="Messages to channels through a Slack bot.",
        schema=_schema({"bot_token": _TOKEN, "default_channel": _TEXT}, ("bot_token",)),
        secret_fields=("bot_token",),
        env={"SLACK_BOT_TOKEN": "bot_token", "SLACK_DEFAULT_CHANNEL": "default_channel"},
    ),
    IntegrationTemplate(
        kind="jira",
        name="Jira",
        description="Issues and projects through the Jira Cloud REST API.",
        schema=_schema({"base_url": _URL, "email": _TEXT, "api_token": _TOKEN}, ("base_url", "email", "api_token")),
        secret_fields=("api_token",),
        env={"JIRA_URL": "base_url", "JIRA_EMAIL": "email", "JIRA_API_TOKEN": "api_token"},
    ),
    IntegrationTemplate(
        kind="aws",
        name="AWS",
        description="Amazon Web Services credentials for the AWS SDKs and CLI.",
        schema=_schema(
            {
                "region": {"type": "string", "pattern": "^[a-z]{2}(-[a-z]+)+-[0-9]+$"},
                "access_key_id": {"type": "string", "pattern": "^[A-Z0-9]{16,128}$"},
                "secret_access_key": _TOKEN,
                "session_token": _TOKEN,
            },
            ("region", "access_key_id", "secret_access_key"),
        ),
        secret_fields=("secret_access_key", "session_token"),
        env={
            "AWS_REGION": "region",
            "AWS_ACCESS_KEY_ID": "access_key_id",
            "AWS_SECRET_ACCESS_KEY": "secret_access_key",
            "AWS_SESSION_TOKEN": "session_token",
        },
    ),
    IntegrationTemplate(
        kind="http",
        name="HTTP API",
        description="Any HTTP API: a base URL and an optional authorization header value.",
        schema=_schema({"base_url": _URL, "authorization": _TOKEN}, ("base_url",)),
        secret_fields=("authorization",),
        env={"HTTP_API_BASE_URL": "base_url", "HTTP_API_AUTHORIZATION": "authorization"},
    ),
)


def _mark_secret_fields(template: IntegrationTemplate) -> IntegrationTemplate:
    """The template with each secret field's schema marked `writeOnly` (JSON Schema's "never read back")."""
    properties = {
        name: {**schema, "writeOnly": True} if name in template.secret_fields else schema
        for name, schema in template.schema["properties"].items()
    }
    return replace(template, schema={**template.schema, "properties": properties})


TEMPLATES: tuple[IntegrationTemplate, ...] = tuple(_mark_secret_fields(template) for template in _DECLARED)
BY_KIND: Mapping[str, IntegrationTemplate] = {template.kind: template for template in TEMPLATES}
MASK = "********"
"""What a secret field of a stored integration is answered as; a PATCH that gives it back keeps the stored value."""
