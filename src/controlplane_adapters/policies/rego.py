"""The policy engine on regopy (rego-cpp): modules compiled on save, evaluated here (in the policy processes of
sandbox.py: the server itself never loads a module; `RegoPolicyEngine` evaluates in its caller's process, for
embedders and tests with modules they trust).

Each policy's module is loaded under a package of its own (its `package` line renamed, and its `data.<package>`
references with it), so that two policies never merge their rules. The policies that guard one action in one
organization are compiled together into one bundle with a generated module that reads each one's `deny`
(`default` empty), so one input and one query decide them all. When that query fails (one policy's evaluation
errors), each policy is queried on its own through its entrypoint, so that only the failing one fails (closed).

Built-in errors are errors (`strict_built_in_errors`): a time zone that does not exist, a division by zero, fail
the policy instead of leaving its rule undefined, which would let the action through."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from regopy import Bundle, Input, Interpreter, LogLevel, Output, RegoError  # type: ignore[import-untyped]

from controlplane_adapters.policies.screen import refused_built_in, screen
from controlplane_domain.policies.entity import Outcome, Policy, PolicyCompileError

_PACKAGE = re.compile(r"^[ \t]*package[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)", re.MULTILINE)
_DENY = re.compile(r"^[ \t]*(?:default[ \t]+)?deny\b", re.MULTILINE)
_LOCATION = re.compile(r"\(error (?:\d+:[^|\s]*)?\|(\d+)\|\d+")
_MESSAGE = re.compile(r"\(errormsg (\d+):")
_FUNCTION = re.compile(r"Function not found: ([\w.]+)")
GATE = "controlplane_gate"
QUERY = f"x := data.{GATE}.results"


def _interpreter() -> Any:
    interpreter = Interpreter()
    interpreter.log_level = LogLevel.NONE  # rego-cpp prints compile errors on stdout otherwise
    interpreter.strict_built_in_errors = True
    return interpreter


def _renamed(source: str, package: str) -> str:
    found = _PACKAGE.search(source)
    if found is None:
        raise PolicyCompileError("the module declares no package (`package <name>` comes first)", 1, 1)
    original = found.group(1)
    renamed = source[: found.start(1)] + package + source[found.end(1) :]
    return re.sub(rf"\bdata\.{re.escape(original)}\b", f"data.{package}", renamed)


def _messages(text: str) -> list[tuple[str, int | None]]:
    """The (message, byte offset) of each error in rego-cpp's error text (`(error 6:policy|77|2 (errormsg 27:...`)."""
    raw = text.encode()
    found: list[tuple[str, int | None]] = []
    for match in _MESSAGE.finditer(text):
        start = len(text[: match.end()].encode())
        message = raw[start : start + int(match.group(1))].decode(errors="replace")
        located = None
        for location in _LOCATION.finditer(text, 0, match.start()):
            located = int(location.group(1))
        found.append((message, located))
    return found or [(text.strip() or "evaluation failed", None)]


def _position(source: str, offset: int) -> tuple[int, int]:
    before = source.encode()[:offset].decode(errors="replace")
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


def _compile_error(source: str, message: str, offset: int | None) -> PolicyCompileError:
    if offset is not None:
        return PolicyCompileError(message, *_position(source, offset))
    if named := _FUNCTION.search(message):  # reported without a place: the first call of that function
        call = re.search(rf"\b{re.escape(named.group(1))}\s*\(", source)
        if call is not None:
            return PolicyCompileError(message, *_position(source, len(source[: call.start()].encode())))
    return PolicyCompileError(message)


def _error_of(output: Output) -> str:
    """The message of a failed query, in its output's error nodes (`(error (errormsg 14:divide by zero) ...)`)."""
    node = output.node()
    for index in range(len(node)):
        text = node.at(index).json()
        if text.startswith("(error"):
            return _messages(text)[0][0]
    return "evaluation failed"


def _screened(interpreter: Any, rego: str) -> None:
    """PolicyCompileError when the module is too large, too deep, or names a built-in outside the allowlist."""
    screen(rego)
    refused = refused_built_in(rego, interpreter.is_builtin)
    if refused is not None:
        raise refused


def _query(interpreter: Interpreter, bundle: Bundle, entrypoint: str | None = None) -> Any:
    """The query's value (the `x` binding or the entrypoint's value), or RegoError with the evaluation's message."""
    try:
        if entrypoint is None:
            output = interpreter.query_bundle(bundle)
        else:
            output = interpreter.query_bundle_entrypoint(bundle, entrypoint)
    except json.JSONDecodeError as exc:  # a built-in's error (strict) comes as an ok output holding error text
        raise RegoError(_messages(exc.doc)[0][0]) from None
    if not output.ok():
        raise RegoError(_error_of(output))
    if not output.results:
        return None
    result = output.results[0]
    if "x" in result.bindings:
        return result.bindings["x"]
    return result.expressions[0] if result.expressions else None


def _deny(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RegoError(f"`deny` must be a set of messages, not {json.dumps(value)[:100]}")
    return tuple(item if isinstance(item, str) else json.dumps(item) for item in value)


class RegoPrepared:
    """Policies compiled together into one bundle (see the module's docstring). Not for several threads at once."""

    def __init__(self, modules: Sequence[tuple[str, str]]) -> None:
        """`modules`: each policy's id and Rego module."""
        self._ids = [policy_id for policy_id, _ in modules]
        self._broken: dict[int, str] = {}
        self._interpreter = _interpreter()
        loaded: list[int] = []
        for index, (_, rego) in enumerate(modules):
            try:
                _screened(self._interpreter, rego)
                self._interpreter.add_module(f"policy_{index}", _renamed(rego, f"policy_{index}"))
                loaded.append(index)
            except PolicyCompileError as exc:  # stored before an engine change: it fails (closed)
                self._broken[index] = f"the module does not compile: {exc.message}"
            except RegoError as exc:
                self._broken[index] = f"the module does not compile: {_messages(str(exc))[0][0]}"
        lines = [f"package {GATE}"]
        for index in loaded:
            lines += [f"default d{index} := []", f"d{index} := data.policy_{index}.deny"]
        lines.append(f"results := [{', '.join(f'd{index}' for index in loaded)}]")
        self._interpreter.add_module(GATE, "\n".join(lines) + "\n")
        self._loaded = loaded
        self._entrypoints = {index: f"{GATE}/d{index}" for index in loaded}
        self._bundle = self._interpreter.build(QUERY, list(self._entrypoints.values()))

    def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        outcomes = {index: Outcome(self._ids[index], error=error) for index, error in self._broken.items()}
        self._interpreter.set_input(Input(document))
        try:
            values = _query(self._interpreter, self._bundle)
            for index, value in zip(self._loaded, values or [], strict=True):
                outcomes[index] = Outcome(self._ids[index], _deny(value))
        except (RegoError, ValueError, TypeError):  # some policy failed: each on its own, to find which
            for index in self._loaded:
                try:
                    value = _query(self._interpreter, self._bundle, self._entrypoints[index])
                    outcomes[index] = Outcome(self._ids[index], _deny(value))
                except (RegoError, ValueError, TypeError) as exc:
                    outcomes[index] = Outcome(self._ids[index], error=str(exc) or type(exc).__name__)
        return [outcomes[index] for index in range(len(self._ids))]


def check_module(rego: str) -> None:
    """Screen and compile the module alone; PolicyCompileError with the message and line when it does not."""
    interpreter = _interpreter()
    _screened(interpreter, rego)
    renamed = _renamed(rego, "policy_0")
    try:
        interpreter.add_module("policy_0", renamed)
    except RegoError as exc:
        message, offset = _messages(str(exc))[0]
        raise _compile_error(renamed, message, offset) from None
    if _DENY.search(rego) is None:
        raise PolicyCompileError("the module defines no `deny` rule (the set of messages that deny an action)")
    outcome = RegoPrepared([("check", rego)]).evaluate({})[0]
    if outcome.error is not None:  # an error whatever the input (an unknown function, conflicting values)
        raise _compile_error(renamed, outcome.error, None)


class InProcessPolicies:
    """`PreparedPolicies` evaluated in the caller's process (`RegoPolicyEngine`)."""

    def __init__(self, prepared: RegoPrepared) -> None:
        self.prepared = prepared

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        return self.prepared.evaluate(document)


class RegoPolicyEngine:
    """The domain's `PolicyEngine` on regopy, in the caller's process: no time or memory limit, so for modules the
    embedder trusts (the server uses sandbox.py's `SandboxedPolicyEngine`). The allowlist and the size and nesting
    limits apply all the same."""

    async def check(self, rego: str) -> None:
        check_module(rego)

    def prepare(self, policies: Sequence[Policy]) -> InProcessPolicies:
        return InProcessPolicies(RegoPrepared([(policy.id, policy.rego) for policy in policies]))
