"""Workflows' steps and runs' step states, between the domain's dataclasses and JSON (shared by both stores'
rows: the SQL columns hold this JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from controlplane_domain.workflows.entity import StepDefinition, StepRun, StepStatus


def steps_to_json(steps: tuple[StepDefinition, ...]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "agent_id": s.agent_id,
            "team_id": s.team_id,
            "prompt": s.prompt,
            "depends_on": list(s.depends_on),
            "worker_queue_id": s.worker_queue_id,
            "max_attempts": s.max_attempts,
            "timeout_seconds": s.timeout_seconds,
        }
        for s in steps
    ]


def steps_from_json(value: Any) -> tuple[StepDefinition, ...]:
    return tuple(
        StepDefinition(
            id=s["id"],
            agent_id=s.get("agent_id"),
            team_id=s.get("team_id"),
            prompt=s["prompt"],
            depends_on=tuple(s.get("depends_on") or ()),
            worker_queue_id=s.get("worker_queue_id"),
            max_attempts=int(s.get("max_attempts") or 1),
            timeout_seconds=s.get("timeout_seconds"),
        )
        for s in value
    )


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def step_runs_to_json(steps: tuple[StepRun, ...]) -> list[dict[str, Any]]:
    return [
        {
            "id": s.id,
            "status": s.status.value,
            "execution_id": s.execution_id,
            "attempt": s.attempt,
            "output": s.output,
            "error": s.error,
            "started_at": _time(s.started_at),
            "finished_at": _time(s.finished_at),
            **({"timeout_at": _time(s.timeout_at)} if s.timeout_at is not None else {}),
        }
        for s in steps
    ]


def step_runs_from_json(value: Any) -> tuple[StepRun, ...]:
    return tuple(
        StepRun(
            id=s["id"],
            status=StepStatus(s["status"]),
            execution_id=s.get("execution_id"),
            attempt=int(s.get("attempt") or 0),
            output=s.get("output"),
            error=s.get("error"),
            started_at=_parse(s.get("started_at")),
            finished_at=_parse(s.get("finished_at")),
            timeout_at=_parse(s.get("timeout_at")),
        )
        for s in value
    )
