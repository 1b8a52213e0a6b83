"""A set of policies prepared for the sandbox (`SandboxedPolicies`, the domain's `PreparedPolicies`): screened
here, compiled in a policy process on first use, evaluated there in one round trip (sandbox.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from controlplane_adapters.policies.limits import ENCODER, ProcessFailed, Unencodable
from controlplane_adapters.policies.screen import screen
from controlplane_domain.policies.entity import Outcome, PolicyCompileError

if TYPE_CHECKING:
    from controlplane_adapters.policies.sandbox import SandboxedPolicyEngine


class SandboxedPolicies:
    """`PreparedPolicies` decided by the engine's policy processes (compiled there on first use)."""

    def __init__(self, engine: SandboxedPolicyEngine, modules: list[tuple[str, str]]) -> None:
        self._engine = engine
        self._ids = [policy_id for policy_id, _ in modules]
        self._broken: dict[int, str] = {}
        limits = engine.limits
        for index, (_, rego) in enumerate(modules):  # stored before these limits: they fail (closed)
            try:
                screen(rego, max_bytes=limits.max_module_bytes, max_nesting=limits.max_nesting)
            except PolicyCompileError as exc:
                self._broken[index] = f"the module does not compile: {exc.message}"
        sent = [(str(i), rego) for i, (_, rego) in enumerate(modules) if i not in self._broken]
        self._key = hashlib.sha256(ENCODER.encode(sent)).hexdigest()
        self._load = {"op": "load", "key": self._key, "modules": sent} if sent else None

    def _all_failed(self, reason: str) -> list[Outcome]:
        return [Outcome(policy_id, error=self._broken.get(index, reason)) for index, policy_id in enumerate(self._ids)]

    async def evaluate(self, document: Mapping[str, Any]) -> list[Outcome]:
        if self._load is None:
            return self._all_failed("the module does not compile")
        try:
            answer = await self._engine.ask({"op": "evaluate", "key": self._key, "input": document}, self._load)
        except ProcessFailed as failed:
            return self._all_failed(failed.reason)
        except Unencodable as exc:
            return self._all_failed(f"the input cannot be evaluated: {exc}")
        if "outcomes" not in answer:
            return self._all_failed(str(answer.get("failed") or "policy process gave no answer"))
        answered = iter(answer["outcomes"])
        outcomes = []
        for index, policy_id in enumerate(self._ids):
            if index in self._broken:
                outcomes.append(Outcome(policy_id, error=self._broken[index]))
            else:
                deny, error = next(answered)
                outcomes.append(Outcome(policy_id, tuple(deny), error))
        return outcomes
