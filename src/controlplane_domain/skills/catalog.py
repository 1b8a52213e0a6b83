"""The skill types and the JSON Schema (draft 2020-12) of each type's `configuration`, as plain data.

A schema is checked by the `SchemaValidator` port (skills/ports.py); the domain only holds the documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON_SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"

_STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True}
_TIMEOUT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 86400, "description": "seconds"}
_ENV: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "string"}}


def _schema(title: str, properties: dict[str, Any], *, required: tuple[str, ...] = (), closed: bool = True) -> Any:
    schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DRAFT, "title": title, "type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


@dataclass(frozen=True, slots=True)
class SkillType:
    """A kind of skill: its name, what it lets an agent do, and the schema of its configuration."""

    type: str
    name: str
    description: str
    configuration_schema: dict[str, Any]


SKILL_TYPES: tuple[SkillType, ...] = (
    SkillType("shell", "Shell", "Run shell commands in the worker's sandbox", _schema("shell configuration", {
        "allowed_commands": {**_STRINGS, "description": "commands the agent may run (empty or absent: any)"},
        "denied_commands": _STRINGS,
        "working_dir": {"type": "string", "minLength": 1},
        "timeout_seconds": _TIMEOUT,
        "env": _ENV,
    })),
    SkillType("file_system", "File system", "Read and write files under given paths", _schema(
        "file_system configuration", {
            "base_dir": {"type": "string", "minLength": 1},
            "allowed_paths": _STRINGS,
            "read_only": {"type": "boolean", "default": False},
            "max_file_bytes": {"type": "integer", "minimum": 1},
        })),
    SkillType("python", "Python", "Run Python code", _schema("python configuration", {
        "python_version": {"type": "string", "pattern": r"^3\.[0-9]+$"},
        "packages": _STRINGS,
        "timeout_seconds": _TIMEOUT,
        "allow_network": {"type": "boolean", "default": False},
    })),
    SkillType("docker", "Docker", "Run containers", _schema("docker configuration", {
        "image": {"type": "string", "minLength": 1},
        "allowed_images": _STRINGS,
        "network": {"enum": ["none", "bridge", "host"]},
        "memory_mb": {"type": "integer", "minimum": 16},
        "cpus": {"type": "number", "exclusiveMinimum": 0},
        "timeout_seconds": _TIMEOUT,
        "env": _ENV,
    }, required=("image",))),
    SkillType("web", "Web", "Search the web and fetch pages", _schema("web configuration", {
        "allowed_domains": _STRINGS,
        "denied_domains": _STRINGS,
        "search_provider": {"type": "string", "minLength": 1},
        "max_results": {"type": "integer", "minimum": 1, "maximum": 100},
        "timeout_seconds": _TIMEOUT,
        "user_agent": {"type": "string"},
    })),
    SkillType("data_visualization", "Data visualization", "Draw charts from data", _schema(
        "data_visualization configuration", {
            "library": {"enum": ["matplotlib", "plotly", "vega-lite"]},
            "output_formats": {"type": "array", "items": {"enum": ["png", "svg", "html", "json"]}, "uniqueItems": True},
            "max_points": {"type": "integer", "minimum": 1},
        })),
    SkillType("workflow_executor", "Workflow executor", "Start and follow workflows", _schema(
        "workflow_executor configuration", {
            "allowed_workflows": _STRINGS,
            "max_concurrent": {"type": "integer", "minimum": 1},
            "timeout_seconds": _TIMEOUT,
        })),
    SkillType("custom", "Custom", "A tool of the organization's own, free-form configuration", _schema(
        "custom configuration", {
            "implementation": {"type": "string", "minLength": 1},
            "parameters_schema": {"type": "object"},
        }, closed=False)),
)  # fmt: skip

SKILL_TYPES_BY_NAME: dict[str, SkillType] = {kind.type: kind for kind in SKILL_TYPES}
