"""The enabled policies of each organization, compiled, as this node last read them; dropped on any change."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from controlplane_domain.policies.entity import Action, Policy
from controlplane_domain.policies.ports import PolicyEngine, PreparedPolicies

if TYPE_CHECKING:
    from controlplane_domain.ports import EventBus

CHANGED = "policies:changed"
"""Published (on every node, through the event bus) after a policy is created, changed or deleted."""
MAX_REMEMBERED = 10_000
MAX_PREPARED = 1_000


@dataclass(frozen=True, slots=True)
class Guard:
    """The enabled policies of one organization that guard one action, and their modules compiled together."""

    policies: tuple[Policy, ...]
    prepared: PreparedPolicies


Guards = dict[Action, Guard]
"""An organization's guards by action; an action no enabled policy guards is absent (it costs nothing)."""


class PolicyCache:
    """Per organization, its guards (`Guards`). An action in an organization known to have no enabled policy for it
    is decided without a read (a dict lookup); any change of a policy, on this node or another (the bus's
    `CHANGED`), forgets every organization before the next use, and a read begun before a change arrived is used
    once but not remembered (`generation`), as contexts/presence.py does.

    Compiling is the costly part, so compiled sets outlive a change: they are kept by what they were compiled from
    (each policy's id and module), and an organization read again after another organization's change finds its
    own set compiled already."""

    def __init__(self, engine: PolicyEngine, bus: EventBus | None) -> None:
        self._engine = engine
        self._changes = bus.subscribe(CHANGED) if bus is not None else None
        self._guards: dict[str, Guards] = {}
        self._prepared: OrderedDict[tuple[tuple[str, str], ...], PreparedPolicies] = OrderedDict()
        self._generation = 0

    def _forget_if_changed(self) -> None:
        if self._changes is not None and self._changes.take():
            self._guards.clear()
            self._generation += 1

    def known(self, organization_id: str) -> Guards | None:
        """The organization's guards when known and unchanged since; None when they must be read."""
        self._forget_if_changed()
        return self._guards.get(organization_id)

    @property
    def generation(self) -> int:
        self._forget_if_changed()
        return self._generation

    def learned(self, organization_id: str, generation: int, enabled: list[Policy]) -> Guards:
        """The guards of the organization's `enabled` policies (read from `generation` on); remembered only when
        no change arrived meanwhile, and only with a bus that tells of changes."""
        by_action: dict[Action, list[Policy]] = {}
        for policy in enabled:
            for action in policy.actions:
                by_action.setdefault(action, []).append(policy)
        guards = {action: Guard(tuple(found), self._prepare(found)) for action, found in by_action.items()}
        self._forget_if_changed()
        if self._changes is not None and generation == self._generation:
            if len(self._guards) >= MAX_REMEMBERED:
                self._guards.clear()
            self._guards[organization_id] = guards
        return guards

    def _prepare(self, policies: list[Policy]) -> PreparedPolicies:
        key = tuple((policy.id, policy.rego) for policy in policies)
        prepared = self._prepared.get(key)
        if prepared is None:
            prepared = self._prepared[key] = self._engine.prepare(policies)
            if len(self._prepared) > MAX_PREPARED:
                self._prepared.popitem(last=False)
        else:
            self._prepared.move_to_end(key)
        return prepared
