"""The rules of a template: its parameters, its placeholders, its body's shape; and a call's parameter values."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from controlplane_domain.config import JSONObject
from controlplane_domain.errors import Conflict, ValidationFailed
from controlplane_domain.names import check_name
from controlplane_domain.templates.builtins import NAMES
from controlplane_domain.templates.entity import PARAMETER_NAME, Template, TemplateKind, TemplateParameter
from controlplane_domain.templates.placeholders import (
    MAX_DEPTH,
    MAX_PLACEHOLDERS,
    Budget,
    Path,
    dotted,
    placeholders,
    put,
    strings,
    substitute,
    too_deep,
    whole,
)

BodyCheck = Callable[[TemplateKind, JSONObject], None]
"""Checks that a body has the shape of the kind's creation payload; raises ValidationFailed naming the field by
its dotted path inside the body (`configuration.member_ids`)."""

Candidates = Callable[[TemplateKind, Path], Sequence[Any]]
"""The values of CANDIDATES worth trying at a whole-string placeholder at `path` of a kind's body, in order: those
the creation payload's type takes there (all of them when it cannot tell)."""

SAMPLE = "sample"
# What a string that is one placeholder of a parameter without default is tried as, in turn, until the body's
# shape holds: the parameter's value may be of any JSON type (a number of tokens, a list of ids...).
CANDIDATES: tuple[Any, ...] = (SAMPLE, 1, True, [], {}, None)


def check_depth(field: str, value: Any) -> None:
    if too_deep(value):
        raise ValidationFailed(field, f"nested too deeply (at most {MAX_DEPTH} levels of arrays and objects)")


def check_parameters(parameters: Sequence[TemplateParameter]) -> None:
    seen: set[str] = set()
    for index, parameter in enumerate(parameters):
        check_depth(f"parameters.{index}.default", parameter.default)
        if PARAMETER_NAME.fullmatch(parameter.name) is None:
            raise ValidationFailed(f"parameters.{index}.name", "must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        if parameter.name in seen:
            raise ValidationFailed(f"parameters.{index}.name", f"parameter '{parameter.name}' is declared twice")
        if parameter.required and parameter.default is not None:
            raise ValidationFailed(f"parameters.{index}.default", "a required parameter has no default")
        seen.add(parameter.name)


def _failing_position(field: str, free: Mapping[str, Path]) -> Path | None:
    """The free position (see check_shape), by its dotted path, a shape error is at or inside, if any."""
    parts = field.split(".")
    for end in range(len(parts), 0, -1):
        position = free.get(".".join(parts[:end]))
        if position is not None:
            return position
    return None


def check_shape(
    kind: TemplateKind,
    body: JSONObject,
    parameters: Sequence[TemplateParameter],
    check: BodyCheck,
    candidates: Candidates | None = None,
    budget: Budget | None = None,
) -> None:
    """The body, its placeholders replaced by sample values, has the shape of the kind's creation payload.

    The sample value of a parameter is its default, or `"sample"`; a string that is one placeholder of a
    parameter without default is tried as each of its candidates (`candidates`, else CANDIDATES) until the shape
    holds there. A body without a `name` is sampled with one: an instantiation must then give `name`.

    The body is substituted once (within `budget`); a failing try changes only its own position and checks the
    sample again, so the work is the body's size times the tries, which MAX_PLACEHOLDERS and the candidates
    bound (with `candidates` naming the payload's type at each position, one check most often)."""
    values = {parameter.name: SAMPLE if parameter.default is None else parameter.default for parameter in parameters}
    defaults = {parameter.name: parameter.default for parameter in parameters}
    free = {path: name for path, text in strings(body) if (name := whole(text)) and defaults[name] is None}
    options = {path: list(candidates(kind, path)) if candidates else list(CANDIDATES) for path in free}
    by_name = {dotted(path): path for path in free}
    sample = substitute(body, values, budget)
    sample.setdefault("name", SAMPLE)
    for path, tries in options.items():
        put(sample, path, copy.deepcopy(tries[0] if tries else SAMPLE))
    tried: dict[Path, int] = {}
    while True:
        try:
            check(kind, sample)
            return
        except ValidationFailed as failed:
            position = _failing_position(failed.field, by_name)
            if position is None or tried.get(position, 0) + 1 >= len(options[position]):
                raise ValidationFailed(("body", *failed.path), failed.issue) from failed
            tried[position] = tried.get(position, 0) + 1
            put(sample, position, copy.deepcopy(options[position][tried[position]]))


def check_template(
    template: Template, check: BodyCheck, candidates: Candidates | None = None, max_bytes: int | None = None
) -> None:
    """A template's rules: its name, its parameters, each placeholder names one of them (at most
    MAX_PLACEHOLDERS), the body's shape; with `max_bytes`, the body expanded with its defaults within it."""
    check_name("name", template.name)
    check_depth("body", template.body)
    check_parameters(template.parameters)
    declared = {parameter.name for parameter in template.parameters}
    for count, (path, name) in enumerate(placeholders(template.body), 1):
        if name not in declared:
            where = f"body.{dotted(path)}".rstrip(".")
            raise ValidationFailed(where, f"placeholder '{{{{{name}}}}}' names no declared parameter")
        if count > MAX_PLACEHOLDERS:
            raise ValidationFailed("body", f"at most {MAX_PLACEHOLDERS} placeholders (max_template_placeholders)")
    budget = None if max_bytes is None else Budget(max_bytes, "the body expanded with its defaults", "max_body_bytes")
    check_shape(template.kind, template.body, template.parameters, check, candidates, budget)


def check_not_builtin_name(name: str) -> None:
    """An organization's template may not take a built-in template's name (every organization lists those)."""
    if name in NAMES:
        raise Conflict(f"template with name '{name}' already exists (a built-in template)", {"field": "name"})


def parameter_values(parameters: Sequence[TemplateParameter], given: Mapping[str, Any]) -> dict[str, Any]:
    """The value of each parameter for an instantiation: given, else its default, else null; an unknown or a
    missing required parameter is a validation error naming `parameters.<name>`."""
    declared = {parameter.name for parameter in parameters}
    for name in sorted(given):
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise ValidationFailed(("parameters", name), f"unknown parameter (this template declares: {known})")
    values: dict[str, Any] = {}
    for parameter in parameters:
        if parameter.name in given:
            check_depth(f"parameters.{parameter.name}", given[parameter.name])
            values[parameter.name] = given[parameter.name]
        elif parameter.required:
            raise ValidationFailed(("parameters", parameter.name), "required parameter is missing")
        else:
            values[parameter.name] = parameter.default
    return values
