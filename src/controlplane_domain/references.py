"""References: one rule for deleting what others name (issue #33).

Deleting an object that other objects of its organization name answers 409 `IN_USE`, listing them (`type` and
`id`); `force` deletes it anyway, and the delete says what it left naming nothing (`Dangling`). Which objects name
which is `REFERRERS` below; the stores answer it (`Referrers`, `UnitOfWork.referrers`: one query a referring
table, only on delete); every area's delete calls `check_unreferenced` once, after locking its object.

A forced delete either leaves the references dangling (the referrer keeps the id or name, and says why it fails:
a job records one failed run and disables itself, a lease reports the missing secret) or, where nothing else makes
sense, cascades: docs/api-decisions.md, "References", says which, per area."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from controlplane_domain.audit.usecases import record
from controlplane_domain.errors import Conflict

if TYPE_CHECKING:
    from controlplane_domain.ports import UnitOfWork

REFERRERS_SHOWN = 50
"""Referrers a 409 lists (and a forced delete reports) at most; `details.more` says when there were others."""


class Kind(enum.StrEnum):
    """What can be named, as a referrer's `type` says it too."""

    AGENT = "agent"
    TEAM = "team"
    WORKER_QUEUE = "worker_queue"
    ENVIRONMENT = "environment"
    WORKFLOW = "workflow"
    SECRET = "secret"  # noqa: S105 (a kind's name, not a password)
    SKILL = "skill"
    INTEGRATION = "integration"
    CUSTOM_INTEGRATION = "custom_integration"
    PROJECT = "project"
    MODEL = "model"


AUDITED_AS = {Kind.MODEL: "llm_model"}
"""A kind whose audit log resource type is not its own name."""

REFERRERS: dict[Kind, tuple[str, ...]] = {
    # a team's reasoning agent, a job's target, a workflow step's agent_id, an unfinished task plan's
    Kind.AGENT: ("team", "job", "workflow", "task_plan"),
    Kind.TEAM: ("agent", "job", "workflow", "task_plan"),  # a member's team_id, a job's target, a step's team_id
    # a job's queue, a step's queue, a worker key's binding, an unfinished task plan's queue
    Kind.WORKER_QUEUE: ("job", "workflow", "api_key", "task_plan"),
    Kind.ENVIRONMENT: ("worker_queue", "api_key"),  # its queues, a worker key's binding
    Kind.WORKFLOW: ("job",),  # a job's target
    Kind.SECRET: ("agent", "team", "custom_integration"),  # `secrets`, `{{secret:NAME}}`, `secret_names`
    Kind.SKILL: ("agent", "team", "environment"),  # attached (an agent's and a team's `skill_ids`)
    Kind.INTEGRATION: ("agent", "team"),  # execution_environment.integration_ids
    Kind.CUSTOM_INTEGRATION: ("agent", "team"),  # execution_environment.custom_integration_ids
    Kind.PROJECT: ("agent", "team"),  # its members
    Kind.MODEL: ("agent", "team"),  # an agent's model_id, a team's llm.model and reasoning.model: its id or value
}
"""Which types of objects may name an object of each kind (the order in which a 409 lists them)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What is being deleted: its kind, id and, where others name it by name, its name (a secret's name, a model's
    value)."""

    kind: Kind
    id: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Referrer:
    type: str
    id: str


@dataclass(frozen=True, slots=True)
class Dangling:
    """What a delete left naming nothing (empty unless forced); `more`: there were more than those listed."""

    referrers: tuple[Referrer, ...] = ()
    more: bool = False


class Referrers(Protocol):
    async def naming(self, organization_id: str, target: Target, limit: int) -> list[Referrer]:
        """The objects of the organization that name `target` (at most `limit`), in the order of
        `REFERRERS[target.kind]`, each type's in id order."""


class InUse(Conflict):
    """Deleting the object would leave others naming nothing: 409, with them in `details.referrers`."""

    code = "IN_USE"

    def __init__(self, target: Target, referrers: list[Referrer], *, more: bool) -> None:
        shown = ", ".join(f"{referrer.type} {referrer.id}" for referrer in referrers[:3])
        others = len(referrers) - 3
        rest = f" and {others}{'+' if more else ''} more" if others > 0 else ""
        super().__init__(
            f"the {target.kind.value.replace('_', ' ')} is in use by {shown}{rest}; "
            "change or delete them first, or delete with force=true",
            {
                "resource": target.kind.value,
                "id": target.id,
                "referrers": [{"type": r.type, "id": r.id} for r in referrers],
                "more": more,
            },
        )
        self.referrers = referrers


async def check_unreferenced(uow: UnitOfWork, organization_id: str, target: Target, *, force: bool) -> Dangling:
    """Before deleting `target` (locked by the caller): InUse when others name it, unless `force`; what it leaves
    dangling (for a forced delete). A forced delete past referrers is recorded in the audit log, with them
    (`<resource_type>.delete_forced`, beside the area's own `.delete`)."""
    found = await uow.referrers.naming(organization_id, target, REFERRERS_SHOWN + 1)
    shown, more = found[:REFERRERS_SHOWN], len(found) > REFERRERS_SHOWN
    if shown and not force:
        raise InUse(target, shown, more=more)
    if shown:
        resource_type = AUDITED_AS.get(target.kind, target.kind.value)
        referrers = [{"type": referrer.type, "id": referrer.id} for referrer in shown]
        await record(
            uow,
            organization_id=organization_id,
            action=f"{resource_type}.delete_forced",
            resource_type=resource_type,
            resource_id=target.id,
            details={"referrers": referrers, "more": more},
        )
    return Dangling(tuple(shown), more)
