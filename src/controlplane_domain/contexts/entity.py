"""Contexts: the instructions, knowledge, variables and storage paths given to an agent's runs, set on a project,
an environment, a team or an agent, and resolved into one context when an execution is created."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime


class OwnerType(enum.StrEnum):
    """What a context can be set on, in layer order: a later layer overrides an earlier one."""

    PROJECT = "project"
    ENVIRONMENT = "environment"
    TEAM = "team"
    AGENT = "agent"


LAYER_ORDER = {owner: rank for rank, owner in enumerate(OwnerType)}

INSTRUCTIONS_MAX_LENGTH = 65_536
KNOWLEDGE_MAX_ITEMS = 100
KNOWLEDGE_NAME_MAX_LENGTH = 255
KNOWLEDGE_TEXT_MAX_LENGTH = 262_144
KNOWLEDGE_URI_MAX_LENGTH = 2_048
VARIABLES_MAX_ITEMS = 200
VARIABLE_NAME_MAX_LENGTH = 128
VARIABLE_VALUE_MAX_LENGTH = 8_192
STORAGE_PATHS_MAX_ITEMS = 100
STORAGE_PATH_MAX_LENGTH = 1_024
INSTRUCTIONS_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Knowledge:
    """A named document: its `text`, or a `uri` where a worker fetches it (exactly one of the two)."""

    name: str
    text: str | None = None
    uri: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """What a context holds. Empty: nothing in any field."""

    instructions: str = ""
    knowledge: tuple[Knowledge, ...] = ()
    variables: Mapping[str, str] = field(default_factory=dict)
    storage_paths: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.instructions or self.knowledge or self.variables or self.storage_paths)


EMPTY = Context()


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnedContext:
    """The context set on one project, environment, team or agent."""

    organization_id: str
    owner_type: OwnerType
    owner_id: str
    context: Context
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Layer:
    """A context that applies to a new execution; `joined`: for a project's, when the agent (or its team) joined
    the project (the order of several projects' layers)."""

    owned: OwnedContext
    joined: datetime | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """A layer that was merged into a resolved context."""

    owner_type: OwnerType
    owner_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedContext:
    """An execution's context: its layers merged (`resolve`), and which layers they were, in order."""

    context: Context = EMPTY
    sources: tuple[Source, ...] = ()


NO_CONTEXT = ResolvedContext()
