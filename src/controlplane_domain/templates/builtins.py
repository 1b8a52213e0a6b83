"""The built-in templates: shipped with the service, listed for every organization, read-only.

Their ids are stable: uuid5 of NAMESPACE and the template's name."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from controlplane_domain.templates.entity import BUILTIN_OWNER, Template, TemplateKind, TemplateParameter

NAMESPACE = uuid.UUID("6f1c2d3e-8a4b-5c6d-9e0f-a1b2c3d4e5f6")
SHIPPED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def builtin_id(name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, name))


def _p(name: str, description: str, *, required: bool = False, default: Any = None) -> TemplateParameter:
    return TemplateParameter(name=name, description=description, required=required, default=default)


def _template(
    name: str, kind: TemplateKind, description: str, parameters: list[TemplateParameter], body: dict[str, Any]
) -> Template:
    return Template(
        id=builtin_id(name),
        organization_id=BUILTIN_OWNER,
        name=name,
        kind=kind,
        description=description,
        parameters=tuple(parameters),
        body=body,
        created_at=SHIPPED_AT,
        updated_at=SHIPPED_AT,
    )


_MODEL = _p("model_id", "the id of a registered LLM model (null: the worker's default)")

BUILTINS: tuple[Template, ...] = (
    _template(
        "coding-agent",
        TemplateKind.AGENT,
        "A software engineer for one language: writes, refactors and tests code.",
        [
            _p("language", "the programming language, e.g. Python", required=True),
            _p("style_guide", "conventions to follow", default="the idioms of the language's community"),
            _MODEL,
        ],
        {
            "name": "coding-agent",
            "description": "Writes, refactors and tests {{language}} code.",
            "model_id": "{{model_id}}",
            "system_prompt": (
                "You are a senior {{language}} engineer. Write small, tested, readable changes and follow "
                "{{style_guide}}. Explain what you changed and why."
            ),
            "capabilities": ["code", "tests", "refactoring"],
            "configuration": {"language": "{{language}}"},
        },
    ),
    _template(
        "research-agent",
        TemplateKind.AGENT,
        "Researches a subject and answers with sources.",
        [
            _p("subject", "the field to research, e.g. battery chemistry", required=True),
            _p("audience", "who reads the answers", default="a technical reader"),
            _MODEL,
        ],
        {
            "name": "research-agent",
            "description": "Researches {{subject}}.",
            "model_id": "{{model_id}}",
            "system_prompt": (
                "You research {{subject}} for {{audience}}. Prefer primary sources, cite every claim, and say "
                "plainly what is uncertain."
            ),
            "capabilities": ["research", "summarization"],
        },
    ),
    _template(
        "support-agent",
        TemplateKind.AGENT,
        "Answers customers' questions about a product and escalates what it cannot solve.",
        [
            _p("product", "the product supported", required=True),
            _p("tone", "the tone of the answers", default="friendly and concise"),
            _p("escalation_contact", "where to send what the agent cannot solve", default="a human agent"),
            _MODEL,
        ],
        {
            "name": "support-agent",
            "description": "Customer support for {{product}}.",
            "model_id": "{{model_id}}",
            "system_prompt": (
                "You help customers of {{product}}. Be {{tone}}. Never invent features or policies; when you "
                "cannot solve a problem, say so and hand it over to {{escalation_contact}}."
            ),
            "capabilities": ["support"],
        },
    ),
    _template(
        "pair-team",
        TemplateKind.TEAM,
        "Two agents working together: one leads and plans, the other does and reports.",
        [
            _p("lead_agent_id", "the id of the agent that plans and reviews", required=True),
            _p("worker_agent_id", "the id of the agent that does the work", required=True),
            _p("goal", "what the team works towards", required=True),
        ],
        {
            "name": "pair-team",
            "description": "A lead and a worker: {{goal}}",
            "configuration": {
                "member_ids": ["{{lead_agent_id}}", "{{worker_agent_id}}"],
                "instructions": [
                    "The team's goal: {{goal}}.",
                    "The lead breaks the goal into steps and reviews each result; the worker carries them out.",
                ],
            },
        },
    ),
)

BY_ID = {template.id: template for template in BUILTINS}
NAMES = frozenset(template.name for template in BUILTINS)
