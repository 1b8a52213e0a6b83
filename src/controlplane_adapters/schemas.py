"""The `SchemaValidator` port on the `jsonschema` package (draft 2020-12), imported at the first check: a server
whose skills and templates check no instance never loads it (docs/benchmarks.md "Idle memory")."""

from __future__ import annotations

import functools
import itertools
import json
from typing import TYPE_CHECKING, Any

from controlplane_domain.config import JSONObject
from controlplane_domain.skills.ports import SchemaProblem

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

MAX_PROBLEMS = 20
"""The problems of an instance collected at most (the first is reported): an array of 100,000 wrong items was
100,000 errors, and seconds of work."""


@functools.lru_cache(maxsize=64)
def _validator(schema_text: str) -> jsonschema.Draft202012Validator:
    import jsonschema

    schema = json.loads(schema_text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _named(error: ValidationError) -> SchemaProblem:
    """The problem at the property it is about: a missing required one, or the first unexpected one."""
    path = tuple(error.absolute_path)
    instance, schema = error.instance, error.schema
    if error.validator == "required" and isinstance(instance, dict) and isinstance(error.validator_value, list):
        missing = [name for name in error.validator_value if name not in instance]
        if missing:
            return SchemaProblem((*path, missing[0]), "is required")
    if error.validator == "additionalProperties" and isinstance(instance, dict) and isinstance(schema, dict):
        known = set(schema.get("properties", {}))
        extra = sorted(name for name in instance if name not in known)
        if extra:
            return SchemaProblem((*path, extra[0]), "is not an allowed property")
    return SchemaProblem(path, error.message)


class JsonSchemaValidator:
    """Checks instances against JSON Schemas (draft 2020-12); compiled validators are kept per schema."""

    def problems(self, schema: JSONObject, instance: Any) -> list[SchemaProblem]:
        from jsonschema.exceptions import best_match

        validator = _validator(json.dumps(schema, sort_keys=True))
        errors = list(itertools.islice(validator.iter_errors(instance), MAX_PROBLEMS))
        if not errors:
            return []
        first = best_match(errors)
        assert first is not None
        return [_named(first), *(_named(error) for error in errors if error is not first)]
