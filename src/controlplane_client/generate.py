"""Writes `_operations.py`: one method an operation of the service's OpenAPI document, async and sync.

    python -m controlplane_client.generate            # rewrites src/controlplane_client/_operations.py
    python -m controlplane_client.generate --check    # exit 1 when the checked-in file is out of date

The document comes from the app itself (`build_app` on the memory store), so the client follows the routes of the
code it ships with; result and body types are the server's own msgspec wire Structs, found by their schema name."""

from __future__ import annotations

import argparse
import importlib
import inspect
import keyword
import pkgutil
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

TARGET = Path(__file__).with_name("_operations.py")
# Operations the hand-written clients implement themselves (server-sent events with resume).
HAND_WRITTEN = frozenset({"streamExecution", "streamWorkflowRun"})
METHODS = ("get", "post", "put", "patch", "delete")


def openapi_document() -> dict[str, Any]:
    from controlplane_adapters.settings.model import Settings
    from controlplane_http.bootstrap import build_app

    document: dict[str, Any] = build_app(Settings(database_url="memory://")).openapi_schema.to_schema()
    return document


def wire_types() -> dict[str, tuple[str, str]]:
    """Schema name -> (module, class name) of every msgspec Struct in the wire package's modules."""
    import controlplane_wire

    found: dict[str, tuple[str, str]] = {}
    names = [info.name for info in pkgutil.walk_packages(controlplane_wire.__path__, "controlplane_wire.")]
    for name in sorted(names):
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, msgspec.Struct) and value.__module__ == name:
                found.setdefault(attribute, (name, attribute))
    return found


def snake(name: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    identifier = re.sub(r"\W", "_", words).lower()
    return identifier + "_" if keyword.iskeyword(identifier) else identifier


class Generator:
    def __init__(self, document: dict[str, Any], types: dict[str, tuple[str, str]]) -> None:
        self.document = document
        self.types = types
        self.imports: set[tuple[str, str]] = set()

    def ref(self, schema: dict[str, Any]) -> str | None:
        name = str(schema.get("$ref", "")).rpartition("/")[2]
        if name in self.types:
            self.imports.add(self.types[name])
            return name
        return None

    def schema_type(self, schema: dict[str, Any]) -> str:
        """A result's or a query parameter's Python type."""
        if "oneOf" in schema:
            parts = [self.schema_type(part) for part in schema["oneOf"]]
            return " | ".join(dict.fromkeys(part for part in parts if part != "None")) + (
                " | None" if "None" in parts else ""
            )
        if "$ref" in schema:
            return self.ref(schema) or "str"  # enums of the document are StrEnums: their values are strings
        kind = schema.get("type")
        if kind == "null":
            return "None"
        if kind == "array":
            return f"list[{self.schema_type(schema.get('items', {}))}]"
        if schema.get("format") == "date-time":
            return "str | datetime"
        return {"string": "str", "integer": "int", "boolean": "bool", "number": "float"}.get(str(kind), "Any")

    def result(self, operation: dict[str, Any]) -> str:
        kinds: list[str] = []
        for code, response in operation["responses"].items():
            if not code.startswith("2"):
                continue
            content = response.get("content") or {}
            if not content:
                kinds.append("None")
            for media, body in content.items():
                if media == "application/json":
                    kinds.append(self.schema_type(body.get("schema", {})))
                elif media.startswith("text/plain"):
                    kinds.append("str")
                elif media != "text/event-stream":
                    kinds.append("bytes")
        unique = list(dict.fromkeys(part.strip() for kind in kinds for part in kind.split("|")))
        return " | ".join([part for part in unique if part != "None"] + (["None"] if "None" in unique else []))

    def operations(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        for path, item in self.document["paths"].items():
            for method in METHODS:
                if method in item:
                    yield path, method, item[method]

    def method(self, path: str, method: str, operation: dict[str, Any], is_async: bool) -> str:
        name = snake(operation["operationId"])
        parameters = operation.get("parameters", [])
        path_names = re.findall(r"{(\w+)}", path)
        arguments = ["self", *(f"{snake(p)}: str" for p in path_names)]
        keywords: list[str] = []
        query: list[tuple[str, str]] = []
        for parameter in parameters:
            if parameter["in"] != "query":
                continue
            python = snake(parameter["name"])
            kind = self.schema_type(parameter.get("schema", {}))
            if parameter.get("required"):
                keywords.insert(0, f"{python}: {kind}")
            else:
                keywords.append(f"{python}: {kind.removesuffix(' | None')} | None = None")
            query.append((parameter["name"], python))
        body = "None"
        request = operation.get("requestBody")
        if request is not None:
            (media, content), *_ = request["content"].items()
            if media == "application/json":
                struct = self.schema_type(content.get("schema", {})).removesuffix(" | None")
                optional = not request.get("required", False) or "None" in self.schema_type(content["schema"])
                annotation = f"{struct} | Mapping[str, Any]" if struct != "str" else "Mapping[str, Any]"
                arguments.append(f"body: {annotation} | None = None" if optional else f"body: {annotation}")
                body = "body"
            else:
                arguments.append("content: bytes")
                body = "content"
        if method == "post":
            keywords.append("idempotency_key: str | None = None")
        result = self.result(operation)
        decode = result if result not in ("", "None") else "None"
        signature = ", ".join(arguments + (["*", *keywords] if keywords else []))
        url = "f" + repr(re.sub(r"{(\w+)}", segment, path)) if path_names else repr(path)
        params = "{" + ", ".join(f"{name!r}: {python}" for name, python in query) + "}" if query else "None"
        extra = ", idempotency_key=idempotency_key" if method == "post" else ""
        media = ", media=" + repr(next(iter(request["content"]))) if request is not None and body == "content" else ""
        call = f"self._call({method.upper()!r}, {url}, {decode}, params={params}, body={body}{media}{extra})"
        summary = _summary(operation)
        prefix = "async def" if is_async else "def"
        awaited = f"await {call}" if is_async else call
        return (
            f"    {prefix} {name}({signature}) -> {result or 'None'}:\n"
            f'        """{summary} (`{method.upper()} {path}`)."""\n'
            f"        return cast({(result or 'None')!r}, {awaited})\n"
        )

    def render(self) -> str:
        operations = [op for op in self.operations() if op[2]["operationId"] not in HAND_WRITTEN]
        async_methods = [self.method(path, method, op, True) for path, method, op in operations]
        sync_methods = [self.method(path, method, op, False) for path, method, op in operations]
        by_module: dict[str, list[str]] = {}
        for module, name in sorted(self.imports):
            by_module.setdefault(module, []).append(name)
        imports = "\n".join(f"from {module} import {', '.join(names)}" for module, names in by_module.items())
        return HEADER.format(imports=imports) + "\n".join(async_methods) + SYNC + "\n".join(sync_methods)


HEADER = '''"""Generated by `python -m controlplane_client.generate` from the OpenAPI document: do not edit."""

# ruff: noqa: E501
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

{imports}
from controlplane_client._core import Call, path_segment as _path

__all__ = ["AsyncOperations", "Operations"]


class AsyncOperations(Call):
    """Every operation of the document but the streams, awaited."""

'''

SYNC = '''

class Operations(Call):
    """Every operation of the document but the streams."""

'''


def segment(match: re.Match[str]) -> str:
    """A path parameter in the URL, quoted; `{path}` (a stored file's) keeps its slashes."""
    name = match.group(1)
    return "{_path(" + snake(name) + (', "/"' if name == "path" else "") + ")}"


def _summary(operation: dict[str, Any]) -> str:
    text = str(operation.get("description") or operation.get("summary") or operation["operationId"]).strip()
    first = text.split("\n\n")[0].replace("\n", " ").replace('"""', "'").replace("\\", "")
    return first[:110].rstrip() + ("..." if len(first) > 110 else "")


def render() -> str:
    return Generator(openapi_document(), wire_types()).render()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only compare with the checked-in file")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if TARGET.read_text() != text:
            print(f"{TARGET} is out of date: run python -m controlplane_client.generate", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
