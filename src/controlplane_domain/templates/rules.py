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


def _failing_position(field: str, free: Mapping[Path, str]) -> Path | None:
    """The free position (see check_template) a shape error is at or inside, if any."""
    for path in free:
        name = dotted(path)
        if field == name or field.startswith(f"{name}."):
            return path
    return None


def check_shape(
    kind: TemplateKind, body: JSONObject, parameters: Sequence[TemplateParameter], check: BodyCheck
) -> None:
    """The body, its placeholders replaced by sample values, has the shape of the kind's creation payload.

    The sample value of a parameter is its default, or `"sample"`; a string that is one placeholder of a
    parameter without default is tried as each of CANDIDATES until the shape holds there. A body without a
    `name` is sampled with one: an instantiation must then give `name`."""
    values = {parameter.name: SAMPLE if parameter.default is None else parameter.default for parameter in parameters}
    defaults = {parameter.name: parameter.default for parameter in parameters}
    free = {path: name for path, text in strings(body) if (name := whole(text)) and defaults[name] is None}
    tried: dict[Path, int] = {}
    while True:
        sample = substitute(body, values)
        sample.setdefault("name", SAMPLE)
        for path, index in tried.items():
            put(sample, path, copy.deepcopy(CANDIDATES[index]))
        try:
            check(kind, sample)
            return
        except ValidationFailed as failed:
            position = _failing_position(failed.field, free)
            if position is None or tried.get(position, 0) + 1 >= len(CANDIDATES):
                raise ValidationFailed(("body", *failed.path), failed.issue) from failed
            tried[position] = tried.get(position, 0) + 1


def check_template(template: Template, check: BodyCheck) -> None:
    """A template's rules: its name, its parameters, each placeholder names one of them, the body's shape."""
    check_name("name", template.name)
    check_depth("body", template.body)
    check_parameters(template.parameters)
    declared = {parameter.name for parameter in template.parameters}
    for path, name in placeholders(template.body):
        if name not in declared:
            where = f"body.{dotted(path)}".rstrip(".")
            raise ValidationFailed(where, f"placeholder '{{{{{name}}}}}' names no declared parameter")
    check_shape(template.kind, template.body, template.parameters, check)


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
