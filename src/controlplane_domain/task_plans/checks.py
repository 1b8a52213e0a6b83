"""A worker's plan, checked: JSON, the plan's schema, the graph's rules (workflows/graph.py) and the organization's
agents and teams (only the plan's `agent_ids`, when it has them). The first broken rule is a `PlanRejected` that
says where and why."""

from __future__ import annotations

import json
from typing import Any

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.task_plans.entity import SUMMARY_MAX_LENGTH, TITLE_MAX_LENGTH, PlanStep, TaskPlan
from controlplane_domain.workflows.entity import MAX_STEPS
from controlplane_domain.workflows.graph import PROMPT_MAX_LENGTH, check_steps, inputs_read

RUN_INPUT_KEY = "task"
"""The one input of a plan's run: its task (`{{input.task}}` in a step's prompt)."""

_TEXT = {"type": "string", "minLength": 1}
PLAN_SCHEMA: JSONObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["summary", "steps"],
    "properties": {
        "summary": {**_TEXT, "maxLength": SUMMARY_MAX_LENGTH},
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_STEPS,
            "items": {
                "type": "object",
                "required": ["id", "title", "prompt"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                    "title": {**_TEXT, "maxLength": TITLE_MAX_LENGTH},
                    "agent_id": {"type": ["string", "null"]},
                    "team_id": {"type": ["string", "null"]},
                    "prompt": {**_TEXT, "maxLength": PROMPT_MAX_LENGTH},
                    "depends_on": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_STEPS},
                },
            },
        },
    },
}

INSTRUCTIONS = f"""You plan how AI agents will carry out a task. Split the task into steps; give each step to one
of the agents or teams listed (by its id), with the prompt that agent or team will receive.

Answer with one JSON object and nothing else:
{{"summary": "the plan in a sentence or two",
 "steps": [{{"id": "research", "title": "a short title", "agent_id": "<an agent's id>", "prompt": "what to do",
            "depends_on": []}}]}}

Rules:
- each step has exactly one of "agent_id" and "team_id", taken from the list you are given;
- step ids are 1 to 64 letters, digits, "_" or "-", each used once; at most {MAX_STEPS} steps;
- "depends_on" lists the ids of the steps that must finish before this one; no cycles;
- a prompt may include {{{{steps.<id>.output}}}} (the answer of a step it depends on, directly or not) and
  {{{{input.{RUN_INPUT_KEY}}}}} (the task as given); nothing else in double braces."""


class PlanRejected(Exception):
    """The worker's plan breaks a rule; the message says which, where."""


def decode(response: str | None) -> Any:
    """The worker's answer as JSON."""
    if response is None or not response.strip():
        raise PlanRejected("the worker's answer is empty: a plan is a JSON object")
    try:
        return json.loads(response)
    except (ValueError, RecursionError) as exc:
        raise PlanRejected(f"the worker's answer is not JSON: {exc}") from None


def _where(path: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in path) or "the plan"


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PlanRejected(f"{where}: must be a non-blank string")
    return value


def _optional_text(value: Any, where: str) -> str | None:
    return None if value is None else _text(value, where)


def parse(document: Any) -> tuple[str, tuple[PlanStep, ...]]:
    """The summary and the steps of a plan of the schema's shape (checked again here: a store without a schema
    validator still never keeps a value of the wrong type)."""
    if not isinstance(document, dict):
        raise PlanRejected("the plan must be a JSON object with 'summary' and 'steps'")
    summary = _text(document.get("summary"), "summary")
    given = document.get("steps")
    if not isinstance(given, list) or not given:
        raise PlanRejected("steps: must be a non-empty array")
    steps = []
    for index, step in enumerate(given):
        where = f"steps.{index}"
        if not isinstance(step, dict):
            raise PlanRejected(f"{where}: must be an object")
        depends_on = step.get("depends_on") or []
        if not isinstance(depends_on, list) or not all(isinstance(each, str) for each in depends_on):
            raise PlanRejected(f"{where}.depends_on: must be an array of step ids")
        steps.append(
            PlanStep(
                id=_text(step.get("id"), f"{where}.id"),
                title=_text(step.get("title"), f"{where}.title"),
                agent_id=_optional_text(step.get("agent_id"), f"{where}.agent_id"),
                team_id=_optional_text(step.get("team_id"), f"{where}.team_id"),
                prompt=_text(step.get("prompt"), f"{where}.prompt"),
                depends_on=tuple(depends_on),
            )
        )
    return summary, tuple(steps)


def check_graph(steps: tuple[PlanStep, ...]) -> None:
    """The rules of a workflow's steps (unique ids, known dependencies, no cycle, outputs read only from steps it
    follows), and the run's only input is the task."""
    definitions = [step.definition() for step in steps]
    try:
        check_steps(definitions)
    except ValidationFailed as exc:
        raise PlanRejected(exc.message) from None
    for index, key in inputs_read(definitions):
        if key != RUN_INPUT_KEY:
            raise PlanRejected(f"steps.{index}.prompt: reads {{{{input.{key}}}}}: a plan's run has only "
                               f"{{{{input.{RUN_INPUT_KEY}}}}}")  # fmt: skip


async def check_targets(uow: UnitOfWork, plan: TaskPlan, steps: tuple[PlanStep, ...]) -> None:
    """Each step's agent or team is the organization's; with `agent_ids`, only those agents, and no team."""
    organization_id = plan.organization_id
    wanted = sorted({step.agent_id for step in steps if step.agent_id is not None})
    agents = {agent.id for agent in await uow.agents.get_many(organization_id, wanted)} if wanted else set()
    allowed = None if plan.agent_ids is None else set(plan.agent_ids)
    for index, step in enumerate(steps):
        if step.agent_id is not None:
            if step.agent_id not in agents:
                raise PlanRejected(
                    f"steps.{index}.agent_id: no agent of this organization has the id '{step.agent_id}'"
                )
            if allowed is not None and step.agent_id not in allowed:
                raise PlanRejected(
                    f"steps.{index}.agent_id: agent '{step.agent_id}' is not one of the plan's agent_ids"
                )
        elif step.team_id is not None:
            if allowed is not None:
                raise PlanRejected(f"steps.{index}.team_id: the plan may use only its agent_ids, not a team")
            if await uow.teams.get(organization_id, step.team_id) is None:
                raise PlanRejected(f"steps.{index}.team_id: no team of this organization has the id '{step.team_id}'")


async def checked_plan(
    ports: Ports, uow: UnitOfWork, plan: TaskPlan, response: str | None
) -> tuple[str, tuple[PlanStep, ...]]:
    """The summary and steps of the worker's answer, every rule checked (PlanRejected otherwise)."""
    document = decode(response)
    if ports.schemas is not None:
        problems = ports.schemas.problems(PLAN_SCHEMA, document)
        if problems:
            first = problems[0]
            raise PlanRejected(f"the plan does not match the plan schema: {_where(first.path)}: {first.message}")
    summary, steps = parse(document)
    check_graph(steps)
    await check_targets(uow, plan, steps)
    return summary, steps
