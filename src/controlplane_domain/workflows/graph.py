"""A workflow's graph: the rules of its steps (ids unique, dependencies known, no cycle, outputs read only from
steps it follows) and its prompts, rendered with the run's input and earlier steps' outputs."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from controlplane_domain.errors import ValidationFailed
from controlplane_domain.rendering import render_counted
from controlplane_domain.workflows.entity import MAX_STEP_ATTEMPTS, MAX_STEPS, TIMEOUT_MAX_SECONDS, StepDefinition

STEP_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
PLACEHOLDER = re.compile(r"\{\{\s*(?:input\.([A-Za-z0-9_-]+)|steps\.([A-Za-z0-9_-]+)\.output)\s*\}\}")
PROMPT_MAX_LENGTH = 200_000


def check_steps(steps: Sequence[StepDefinition]) -> None:
    """Every rule of a workflow's steps; the first broken one is a ValidationFailed naming its field."""
    if not steps:
        raise ValidationFailed("steps", "a workflow has at least one step")
    if len(steps) > MAX_STEPS:
        raise ValidationFailed("steps", f"a workflow has at most {MAX_STEPS} steps")
    seen: dict[str, int] = {}
    for index, step in enumerate(steps):
        where = f"steps.{index}"
        if STEP_ID.fullmatch(step.id) is None:
            raise ValidationFailed(f"{where}.id", "must be 1 to 64 letters, digits, '_' or '-'")
        if step.id in seen:
            raise ValidationFailed(
                f"{where}.id", f"step id '{step.id}' is used twice (steps {seen[step.id]} and {index})"
            )
        seen[step.id] = index
        if (step.agent_id is None) == (step.team_id is None):
            raise ValidationFailed(f"{where}.agent_id", "give exactly one of agent_id and team_id")
        if not step.prompt.strip():
            raise ValidationFailed(f"{where}.prompt", "must not be blank")
        if len(step.prompt) > PROMPT_MAX_LENGTH:
            raise ValidationFailed(f"{where}.prompt", f"must be at most {PROMPT_MAX_LENGTH} characters")
        if not 1 <= step.max_attempts <= MAX_STEP_ATTEMPTS:
            raise ValidationFailed(f"{where}.max_attempts", f"must be between 1 and {MAX_STEP_ATTEMPTS}")
        if step.timeout_seconds is not None and not 1 <= step.timeout_seconds <= TIMEOUT_MAX_SECONDS:
            raise ValidationFailed(f"{where}.timeout_seconds", f"must be between 1 and {TIMEOUT_MAX_SECONDS}")
    for index, step in enumerate(steps):
        for position, dependency in enumerate(step.depends_on):
            if dependency not in seen:
                raise ValidationFailed(f"steps.{index}.depends_on.{position}", f"no step has the id '{dependency}'")
            if dependency == step.id:
                raise ValidationFailed(f"steps.{index}.depends_on.{position}", f"step '{step.id}' depends on itself")
        if len(set(step.depends_on)) != len(step.depends_on):
            raise ValidationFailed(f"steps.{index}.depends_on", "lists a step twice")
    cycle = find_cycle(steps)
    if cycle is not None:
        raise ValidationFailed("steps", "the steps' dependencies form a cycle: " + " -> ".join(cycle))
    before = ancestors(steps)
    for index, step in enumerate(steps):
        for match in PLACEHOLDER.finditer(step.prompt):
            read = match.group(2)
            if read is not None and read not in before[step.id]:
                issue = f"reads the output of step '{read}', which it does not depend on (directly or not)"
                raise ValidationFailed(f"steps.{index}.prompt", issue)


def find_cycle(steps: Sequence[StepDefinition]) -> list[str] | None:
    """A cycle of the dependencies, as the step ids along it with the first repeated at the end; None when there
    is none. (Depth first, iteratively: a chain of a hundred steps stays far from the recursion limit.)"""
    depends = {step.id: step.depends_on for step in steps}
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for root in depends:
        if root in state:
            continue
        path: list[str] = [root]
        children = [iter(depends[root])]
        state[root] = 1
        while children:
            child = next(children[-1], None)
            if child is None:
                state[path.pop()] = 2
                children.pop()
                continue
            if child not in depends:
                continue
            if state.get(child) == 1:
                return [*path[path.index(child) :], child]
            if child not in state:
                state[child] = 1
                path.append(child)
                children.append(iter(depends[child]))
    return None


def ancestors(steps: Sequence[StepDefinition]) -> dict[str, frozenset[str]]:
    """Each step's dependencies, direct or not (the graph has no cycle)."""
    depends = {step.id: step.depends_on for step in steps}
    found: dict[str, frozenset[str]] = {}

    def of(step_id: str) -> frozenset[str]:
        known = found.get(step_id)
        if known is None:
            stack, seen = list(depends[step_id]), set()
            while stack:
                each = stack.pop()
                if each not in seen:
                    seen.add(each)
                    stack.extend(depends[each])
            known = found[step_id] = frozenset(seen)
        return known

    return {step_id: of(step_id) for step_id in depends}


def descendants(steps: Sequence[StepDefinition], step_id: str) -> set[str]:
    """The steps that depend on `step_id`, directly or not."""
    after: set[str] = set()
    frontier = {step_id}
    while frontier:
        frontier = {step.id for step in steps if step.id not in after and frontier.intersection(step.depends_on)}
        after |= frontier
    return after


def inputs_read(steps: Sequence[StepDefinition]) -> list[tuple[int, str]]:
    """(step index, input key) of every `{{input.x}}` of the prompts."""
    return [
        (index, match.group(1))
        for index, step in enumerate(steps)
        for match in PLACEHOLDER.finditer(step.prompt)
        if match.group(1) is not None
    ]


def render(
    prompt: str, run_input: Mapping[str, object], outputs: Mapping[str, str | None], limit: int = PROMPT_MAX_LENGTH
) -> str:
    """The prompt with its placeholders replaced: an input's string as is, any other value as JSON; a step's
    output (empty when it had none). Rendered as counted (`render_counted`): RenderedTooLong, naming `prompt`,
    once past `limit` characters."""

    def value(match: re.Match[str]) -> str:
        key, step_id = match.group(1), match.group(2)
        if key is not None:
            given = run_input.get(key)
            return given if isinstance(given, str) else json.dumps(given)
        return outputs.get(step_id) or ""

    return render_counted(PLACEHOLDER, prompt, value, limit=limit, field="prompt")
