"""The request bodies' OpenAPI schemas, made to say what the decoder enforces.

Litestar documents a msgspec Struct field by field, but it reads the constraints (`msgspec.Meta`) of a field's
outermost type only and knows nothing of `forbid_unknown_fields`: the items of `list[Annotated[str, Meta(...)]]`,
the values of a dict and the branches of a union lost their bounds, and closed bodies looked open. msgspec's own
JSON Schema of a Struct is exactly what `msgspec.json.decode` checks: this plugin lets Litestar build each request
body's schema as before, then adds every constraint keyword msgspec states and Litestar left out, and
`additionalProperties: false` (every request body is a `wire.Request`, which forbids unknown fields)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from litestar.openapi.spec import OpenAPIFormat, OpenAPIType, Reference, Schema
from litestar.plugins import OpenAPISchemaPlugin

from controlplane_wire.base import Request

if TYPE_CHECKING:
    from litestar.typing import FieldDefinition

# JSON Schema constraint keywords -> the attribute of Litestar's Schema that holds each.
_KEYWORDS = {
    "minLength": "min_length",
    "maxLength": "max_length",
    "pattern": "pattern",
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "exclusive_minimum",
    "exclusiveMaximum": "exclusive_maximum",
    "multipleOf": "multiple_of",
    "minItems": "min_items",
    "maxItems": "max_items",
    "uniqueItems": "unique_items",
    "minProperties": "min_properties",
    "maxProperties": "max_properties",
    "enum": "enum",
    "format": "format",
}


def _types(schema: Schema) -> set[str]:
    kind = schema.type
    if kind is None:
        return set()
    if isinstance(kind, OpenAPIType):
        return {kind.value}
    return {item.value for item in kind}


def _truth_types(truth: dict[str, Any]) -> set[str]:
    kind = truth.get("type")
    if kind is None:
        return set()
    return {kind} if isinstance(kind, str) else set(kind)


def _schema_of(truth: dict[str, Any]) -> Schema:
    """A Litestar Schema of a simple msgspec one (a type and its constraint keywords)."""
    kinds = [OpenAPIType(kind) for kind in sorted(_truth_types(truth))]
    schema = Schema(type=kinds[0] if len(kinds) == 1 else (kinds or None))
    _add_constraints(schema, truth)
    return schema


def _add_constraints(schema: Schema, truth: dict[str, Any]) -> None:
    for keyword, attribute in _KEYWORDS.items():
        if keyword not in truth:
            continue
        given, exact = getattr(schema, attribute), truth[keyword]
        if keyword == "format":
            exact = OpenAPIFormat(exact)
        # (Litestar keeps numeric bounds as floats: 2**63 - 1 would read 2**63, which the decoder refuses)
        if given is None or (isinstance(exact, int) and isinstance(given, float) and given == float(exact)):
            setattr(schema, attribute, exact)


def merge(schema: Schema | Reference, truth: dict[str, Any]) -> None:
    """Add to `schema` (Litestar's) the constraint keywords of `truth` (msgspec's, of the same type) it lacks, down
    through items, dict values and keys, and union branches. References are left to their own component."""
    if isinstance(schema, Reference) or "$ref" in truth:
        return
    branches = truth.get("anyOf") or truth.get("oneOf")
    if branches is not None or schema.one_of or schema.any_of:
        # (Litestar keeps a one-branch `oneOf` for `X | UnsetType`: msgspec's X is that branch's truth)
        branches = branches if branches is not None else [truth]
        for branch in schema.one_of or schema.any_of or ():
            if isinstance(branch, Schema):
                twin = next((item for item in branches if _truth_types(item) & _types(branch)), None)
                if twin is not None:
                    merge(branch, twin)
        return
    if _types(schema) and _truth_types(truth) and not _types(schema) & _truth_types(truth):
        return
    _add_constraints(schema, truth)
    items = truth.get("items")
    if isinstance(items, dict) and isinstance(schema.items, Schema | Reference):
        merge(schema.items, items)
    values = truth.get("additionalProperties")
    if isinstance(values, dict) and isinstance(schema.additional_properties, Schema | Reference):
        merge(schema.additional_properties, values)
    elif values is False:
        schema.additional_properties = False
    names = truth.get("propertyNames")
    if isinstance(names, dict) and schema.property_names is None:
        schema.property_names = _schema_of(names)
    for name, property_truth in (truth.get("properties") or {}).items():
        if schema.properties and name in schema.properties:
            schema.properties[name] = narrowed(schema.properties[name], property_truth)
            merge(schema.properties[name], property_truth)


def narrowed(schema: Schema | Reference, truth: dict[str, Any]) -> Schema | Reference:
    """A reference to an enum narrowed where it is used (`Annotated[AnEnum, Meta(extra_json_schema={"enum":
    [...]})]`: the values a request may give) becomes those values."""
    values = truth.get("enum")
    if isinstance(schema, Schema) or values is None or "$ref" not in truth:
        return schema
    kinds = {type(value) for value in values}
    return Schema(type=OpenAPIType.STRING if kinds == {str} else None, enum=list(values))


def struct_truth(kind: type[msgspec.Struct]) -> dict[str, Any]:
    """msgspec's JSON Schema of a Struct: what its decoder checks."""
    (reference,), components = msgspec.json.schema_components((kind,))
    return dict(components[str(reference["$ref"]).rsplit("/", 1)[-1]])


class RequestBodySchemas(OpenAPISchemaPlugin):
    """Request bodies (`wire.Request` Structs): Litestar's schema plus msgspec's constraints, closed."""

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        return not field_definition.is_union and field_definition.is_subclass_of(Request)

    def to_openapi_schema(self, field_definition: FieldDefinition, schema_creator: Any) -> Schema:
        # (`schema_creator`: Litestar's SchemaCreator, whose type lives in a private module; its `plugins` and the
        # plugins' `to_openapi_schema` are the plugin protocol's own)
        litestar = next(
            plugin
            for plugin in schema_creator.plugins
            if plugin is not self
            and isinstance(plugin, OpenAPISchemaPlugin)
            and plugin.is_plugin_supported_field(field_definition)
        )
        schema = litestar.to_openapi_schema(field_definition, schema_creator)
        merge(schema, struct_truth(field_definition.type_))
        schema.additional_properties = False
        return schema
