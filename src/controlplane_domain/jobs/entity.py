"""Jobs: an agent's, team's or workflow's prompt fired by a cron schedule, a signed webhook or by hand; each firing
is a run, which records the execution it created (or why it was skipped)."""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.rendering import PROMPT_LIMIT, render_counted
from controlplane_domain.secrets.entity import SealedValue


class TriggerType(enum.StrEnum):
    CRON = "cron"
    WEBHOOK = "webhook"
    MANUAL = "manual"


class TargetKind(enum.StrEnum):
    AGENT = "agent"
    TEAM = "team"
    WORKFLOW = "workflow"


class Overlap(enum.StrEnum):
    """A firing while the previous run's execution is not finished: `allow` it, or `skip` it (a skipped run)."""

    ALLOW = "allow"
    SKIP = "skip"


class Misfire(enum.StrEnum):
    """Cron firings missed (no scheduler running at the time): `skip` them, or `fire_once` for all of them."""

    SKIP = "skip"
    FIRE_ONCE = "fire_once"


class RunStatus(enum.StrEnum):
    FIRED = "fired"
    """An execution was created."""
    SKIPPED = "skipped"
    """Nothing was created: `skipped_reason` says why (`overlap`, `misfire`)."""
    FAILED = "failed"
    """The firing could not create an execution (its target or queue is gone): `skipped_reason` says why."""


@dataclass(frozen=True, slots=True)
class Trigger:
    type: TriggerType
    cron: str | None = None
    timezone: str | None = None


@dataclass(frozen=True, slots=True)
class Target:
    kind: TargetKind
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    audited: ClassVar[Audited] = Audited(
        "job", ignored=frozenset({"next_run_at"}), renamed={"secret": "signing_secret"}
    )
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    name: str
    enabled: bool
    trigger: Trigger
    target: Target
    prompt: str
    worker_queue_id: str | None
    overlap: Overlap
    misfire: Misfire
    next_run_at: datetime | None
    """When the next cron firing is due (UTC); None for webhook and manual jobs and disabled ones."""
    secret: SealedValue | None
    """A webhook job's signing secret (`whsec_...`), sealed by the secrets cipher."""
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class JobRun:
    id: str
    organization_id: str
    job_id: str
    trigger: TriggerType
    fired_at: datetime
    scheduled_for: datetime | None
    """The cron time this run is for (None for webhook and manual runs)."""
    status: RunStatus
    execution_id: str | None = None
    workflow_run_id: str | None = None
    skipped_reason: str | None = None
    webhook_id: str | None = None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class FiringFilter:
    """Which runs of an organization's jobs to list: those whose own status is in `firing` (skipped, failed), and
    the fired ones whose execution's status is in `executions` or whose workflow run's status is in
    `workflow_runs` (the values of those areas' status enums)."""

    firing: frozenset[str] = frozenset()
    executions: frozenset[str] = frozenset()
    workflow_runs: frozenset[str] = frozenset()


def secret_data(organization_id: str, job_id: str) -> bytes:
    """What a job's sealed signing secret is bound to (another row's secret does not open here)."""
    return json.dumps(["job-webhook", organization_id, job_id]).encode()


PLACEHOLDER = re.compile(r"\{\{\s*payload((?:\.[A-Za-z0-9_\-]+)*)\s*\}\}")


def render_prompt(prompt: str, payload: dict[str, Any], limit: int = PROMPT_LIMIT) -> str:
    """`{{payload.a.b}}` replaced by the payload's value at that path: a string as it is, anything else as JSON; a
    path the payload does not have renders as the empty string. `{{payload}}` is the whole payload as JSON.
    Rendered as counted (`render_counted`): RenderedTooLong, naming `prompt`, once past `limit` characters."""

    def value(match: re.Match[str]) -> str:
        found: Any = payload
        for part in match.group(1).split(".")[1:]:
            if isinstance(found, dict) and part in found:
                found = found[part]
            elif isinstance(found, list) and part.isdigit() and int(part) < len(found):
                found = found[int(part)]
            else:
                return ""
        return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)

    return render_counted(PLACEHOLDER, prompt, value, limit=limit, field="prompt")
