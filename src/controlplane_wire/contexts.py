"""Context wire types: an owner's context (PUT body and answer) and an execution's resolved context."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.contexts import entity as bounds
from controlplane_domain.contexts.entity import OwnerType
from controlplane_wire.base import NOT_BLANK, Request

KnowledgeName = Annotated[str, Meta(min_length=1, max_length=bounds.KNOWLEDGE_NAME_MAX_LENGTH)]
KnowledgeText = Annotated[str, Meta(max_length=bounds.KNOWLEDGE_TEXT_MAX_LENGTH)]
KnowledgeUri = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=bounds.KNOWLEDGE_URI_MAX_LENGTH,
        description="an absolute URI (scheme:...)",
        extra_json_schema={"pattern": f"^[A-Za-z][A-Za-z0-9+.-]*:{NOT_BLANK}+$"},
    ),
]
VariableName = Annotated[
    str,
    Meta(pattern="^[A-Za-z_][A-Za-z0-9_]*$", min_length=1, max_length=bounds.VARIABLE_NAME_MAX_LENGTH),
]
VariableValue = Annotated[str, Meta(max_length=bounds.VARIABLE_VALUE_MAX_LENGTH)]
StoragePath = Annotated[
    str, Meta(min_length=1, max_length=bounds.STORAGE_PATH_MAX_LENGTH, description="no NUL, no '..' segment")
]


class KnowledgeIn(Request, kw_only=True):
    """A named document: exactly one of `text` and `uri`."""

    name: KnowledgeName
    text: KnowledgeText | None = None
    uri: KnowledgeUri | None = None


class ContextPut(Request, kw_only=True):
    """The whole context of an owner (a field left out is emptied)."""

    instructions: Annotated[str, Meta(max_length=bounds.INSTRUCTIONS_MAX_LENGTH)] = ""
    knowledge: Annotated[list[KnowledgeIn], Meta(max_length=bounds.KNOWLEDGE_MAX_ITEMS)] = []
    variables: Annotated[dict[VariableName, VariableValue], Meta(max_length=bounds.VARIABLES_MAX_ITEMS)] = {}
    storage_paths: Annotated[
        list[StoragePath], Meta(max_length=bounds.STORAGE_PATHS_MAX_ITEMS, extra_json_schema={"uniqueItems": True})
    ] = []


class Knowledge(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    text: str | None = None
    uri: str | None = None


class Context(msgspec.Struct, kw_only=True):
    """An owner's context (an owner without one, never set or deleted, answers 404). `created_at` and `updated_at`
    are always set; they stay nullable in the document for clients written when an owner without a context
    answered the empty one."""

    organization_id: str
    owner_type: OwnerType
    owner_id: str
    instructions: str
    knowledge: list[Knowledge]
    variables: dict[str, str]
    storage_paths: list[str]
    created_at: datetime | None
    updated_at: datetime | None


class ContextSource(msgspec.Struct, kw_only=True):
    owner_type: OwnerType
    owner_id: str


class ExecutionContext(msgspec.Struct, kw_only=True):
    """The context resolved when the execution was created; `sources`: the layers merged into it, in order."""

    execution_id: str
    instructions: str
    knowledge: list[Knowledge]
    variables: dict[str, str]
    storage_paths: list[str]
    sources: list[ContextSource]
