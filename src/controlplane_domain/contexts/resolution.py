"""How the layers of contexts that apply to an execution are merged into one (`resolve`), and what a context may
hold (`check_context`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime

from controlplane_domain.contexts.entity import (
    INSTRUCTIONS_MAX_LENGTH,
    INSTRUCTIONS_SEPARATOR,
    KNOWLEDGE_MAX_ITEMS,
    KNOWLEDGE_NAME_MAX_LENGTH,
    KNOWLEDGE_TEXT_MAX_LENGTH,
    KNOWLEDGE_URI_MAX_LENGTH,
    LAYER_ORDER,
    NO_CONTEXT,
    STORAGE_PATH_MAX_LENGTH,
    STORAGE_PATHS_MAX_ITEMS,
    VARIABLE_NAME_MAX_LENGTH,
    VARIABLE_VALUE_MAX_LENGTH,
    VARIABLES_MAX_ITEMS,
    Context,
    Knowledge,
    Layer,
    OwnerType,
    ResolvedContext,
    Source,
)
from controlplane_domain.errors import ValidationFailed

VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def ordered(layers: Iterable[Layer]) -> list[Layer]:
    """The layers in merge order: projects (by when the agent or its team joined each, earliest first; a project
    met twice counts once, at its earliest join), the environment, the team, the agent."""
    projects: dict[str, Layer] = {}
    others: list[Layer] = []
    for layer in layers:
        if layer.owned.owner_type is not OwnerType.PROJECT:
            others.append(layer)
            continue
        seen = projects.get(layer.owned.owner_id)
        if seen is None or (layer.joined or _EARLIEST) < (seen.joined or _EARLIEST):
            projects[layer.owned.owner_id] = layer
    return sorted(
        [*projects.values(), *others],
        key=lambda layer: (LAYER_ORDER[layer.owned.owner_type], layer.joined or _EARLIEST, layer.owned.owner_id),
    )


def resolve(layers: Iterable[Layer]) -> ResolvedContext:
    """Merge the layers, a later one overriding an earlier one: instructions are concatenated in layer order (a
    blank line between them), knowledge is merged by name (the later item wins, at the place the name first
    appeared) and variables by key (the later value wins), storage paths are the union (in the order first met).
    Empty layers are left out of `sources`; no layer with anything in it: `NO_CONTEXT`."""
    instructions: list[str] = []
    knowledge: dict[str, Knowledge] = {}
    variables: dict[str, str] = {}
    paths: dict[str, None] = {}
    sources: list[Source] = []
    for layer in ordered(layers):
        context = layer.owned.context
        if context.is_empty():
            continue
        sources.append(Source(layer.owned.owner_type, layer.owned.owner_id))
        if context.instructions:
            instructions.append(context.instructions)
        knowledge.update((item.name, item) for item in context.knowledge)
        variables.update(context.variables)
        paths.update(dict.fromkeys(context.storage_paths))
    if not sources:
        return NO_CONTEXT
    merged = Context(
        instructions=INSTRUCTIONS_SEPARATOR.join(instructions),
        knowledge=tuple(knowledge.values()),
        variables=variables,
        storage_paths=tuple(paths),
    )
    return ResolvedContext(context=merged, sources=tuple(sources))


def check_context(context: Context) -> None:
    """The bounds of a context set on an owner (the wire checks most of them first; this is the rule)."""
    if len(context.instructions) > INSTRUCTIONS_MAX_LENGTH:
        raise ValidationFailed("instructions", f"must be at most {INSTRUCTIONS_MAX_LENGTH} characters")
    _check_knowledge(context.knowledge)
    if len(context.variables) > VARIABLES_MAX_ITEMS:
        raise ValidationFailed("variables", f"must hold at most {VARIABLES_MAX_ITEMS} variables")
    for name, value in context.variables.items():
        if len(name) > VARIABLE_NAME_MAX_LENGTH or VARIABLE_NAME.fullmatch(name) is None:
            raise ValidationFailed(
                ("variables", name),
                f"a name is a letter or _ then letters, digits or _ (at most {VARIABLE_NAME_MAX_LENGTH})",
            )
        if len(value) > VARIABLE_VALUE_MAX_LENGTH:
            raise ValidationFailed(("variables", name), f"must be at most {VARIABLE_VALUE_MAX_LENGTH} characters")
    _check_paths(context.storage_paths)


def _check_knowledge(items: tuple[Knowledge, ...]) -> None:
    if len(items) > KNOWLEDGE_MAX_ITEMS:
        raise ValidationFailed("knowledge", f"must hold at most {KNOWLEDGE_MAX_ITEMS} items")
    names: set[str] = set()
    for index, item in enumerate(items):
        where = f"knowledge.{index}"
        if not item.name.strip() or len(item.name) > KNOWLEDGE_NAME_MAX_LENGTH:
            raise ValidationFailed(f"{where}.name", f"must be 1 to {KNOWLEDGE_NAME_MAX_LENGTH} characters, not blank")
        if item.name in names:
            raise ValidationFailed(f"{where}.name", f"'{item.name}' is given twice: names are unique in a context")
        names.add(item.name)
        if (item.text is None) == (item.uri is None):
            raise ValidationFailed(where, "give exactly one of text and uri")
        if item.text is not None and len(item.text) > KNOWLEDGE_TEXT_MAX_LENGTH:
            raise ValidationFailed(f"{where}.text", f"must be at most {KNOWLEDGE_TEXT_MAX_LENGTH} characters")
        if item.uri is not None and not _is_uri(item.uri):
            raise ValidationFailed(
                f"{where}.uri", f"must be an absolute URI (scheme:...) of at most {KNOWLEDGE_URI_MAX_LENGTH} characters"
            )


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def _is_uri(uri: str) -> bool:
    return len(uri) <= KNOWLEDGE_URI_MAX_LENGTH and _URI.fullmatch(uri) is not None


def _check_paths(paths: tuple[str, ...]) -> None:
    if len(paths) > STORAGE_PATHS_MAX_ITEMS:
        raise ValidationFailed("storage_paths", f"must hold at most {STORAGE_PATHS_MAX_ITEMS} paths")
    seen: set[str] = set()
    for index, path in enumerate(paths):
        where = f"storage_paths.{index}"
        if not path or len(path) > STORAGE_PATH_MAX_LENGTH:
            raise ValidationFailed(where, f"must be 1 to {STORAGE_PATH_MAX_LENGTH} characters")
        if "\x00" in path or ".." in path.split("/"):
            raise ValidationFailed(where, "must not hold NUL or a '..' segment")
        if path in seen:
            raise ValidationFailed(where, f"'{path}' is given twice")
        seen.add(path)
