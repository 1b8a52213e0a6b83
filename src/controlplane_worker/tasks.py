"""One leased execution in the reference worker: the agent or team it runs (or the task it plans), the events it
queues and sends in batches, its completion."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from controlplane_worker.config import WorkerConfig
from controlplane_worker.control_plane import ControlPlane, Stale, events_answer
from controlplane_worker.model import ChatModel, LlmError

log = logging.getLogger("controlplane.worker")

FLUSH_SECONDS = 0.05
FLUSH_EVENTS = 32
MAX_BATCH = 500  # the most events the control plane takes in one batch


@dataclass
class Task:
    execution_id: str
    attempt: int
    lease_seconds: float = 60.0
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    pending: list[dict[str, Any]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    sending: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_flush: float = 0.0


Outcome = tuple[str, str | None, str | None, dict[str, Any]]  # status, response, error, usage


@dataclass(frozen=True)
class Run:
    """What one model call runs with, from the lease's `resolved`: the execution's context as system-prompt text,
    and the run's environment (its execution environment's variables and secrets, for the model call only)."""

    context: str = ""
    environ: dict[str, str] = field(default_factory=dict)


def context_prompt(context: Any) -> str:
    """The execution's stored context as system-prompt text: its instructions, then each knowledge document that
    has a text, under its name (a document given by `uri` is not fetched by the reference worker)."""
    if not isinstance(context, dict):
        return ""
    parts = [str(context.get("instructions") or "")]
    for item in context.get("knowledge") or []:
        if isinstance(item, dict) and item.get("text"):
            parts.append(f"{item.get('name') or 'knowledge'}:\n{item['text']}")
    return "\n\n".join(part for part in parts if part)


def run_environment(run: Any) -> dict[str, str]:
    """A run's environment as its model call sees it: the secrets its execution environment lists, then its
    variables (references filled in; a variable wins over a secret of its name)."""
    if not isinstance(run, dict):
        return {}
    merged = {**(run.get("secrets") or {}), **(run.get("env_vars") or {})}
    return {str(name): str(value) for name, value in merged.items()}


def plan_json(text: str) -> str:
    """The JSON object of a model's answer: the answer itself when it is one, else what lies between its first
    `{` and its last `}` when that is one (a code fence or a sentence around it); else the answer as it is."""
    candidates = [text.strip()]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            if isinstance(json.loads(candidate), dict):
                return candidate
        except ValueError:
            continue
    return text


class TaskRun:
    """The parts of a task the worker's loop runs: its work, its flusher, its completion."""

    def __init__(self, task: Task, config: WorkerConfig, control_plane: ControlPlane, model: ChatModel) -> None:
        self.task = task
        self.config = config
        self.control_plane = control_plane
        self.model = model

    async def emit(self, event_type: str, data: dict[str, Any], *, force: bool = False) -> None:
        """Queue an event; the task's flusher sends what is queued every FLUSH_SECONDS at most (or at once from
        FLUSH_EVENTS events); `force` sends it now."""
        task = self.task
        task.pending.append({"type": event_type, "data": data})
        if force:
            await self.flush()
        else:
            task.wake.set()

    async def flush(self) -> None:
        """Send the task's queued events, in order, a batch at a time; a batch leaves the queue only once the
        control plane took it."""
        task = self.task
        async with task.sending:
            while task.pending:
                batch = task.pending[:MAX_BATCH]
                response = await self.control_plane.post(
                    f"/api/v1/executions/{task.execution_id}/events",
                    {"worker_id": self.config.worker_id, "attempt": task.attempt, "events": batch},
                )
                if response.status_code == 409:
                    raise Stale(response.text)
                del task.pending[: len(batch)]
                task.last_flush = time.monotonic()
                if events_answer(response).cancel_requested:
                    task.cancelled.set()

    async def flusher(self) -> None:
        task = self.task
        while True:
            await task.wake.wait()
            task.wake.clear()
            delay = task.last_flush + FLUSH_SECONDS - time.monotonic()
            if delay > 0 and len(task.pending) < FLUSH_EVENTS:
                await asyncio.sleep(delay)
            await self.flush()

    async def complete(self, outcome: Outcome) -> None:
        task = self.task
        status, response, error, usage = outcome
        await self.flush()
        body = {
            "worker_id": self.config.worker_id,
            "attempt": task.attempt,
            "status": status,
            "response": response,
            "error": error,
            "usage": usage,
        }
        answer = await self.control_plane.post(f"/api/v1/executions/{task.execution_id}/complete", body)
        if answer.status_code == 409:
            raise Stale(answer.text)

    async def run_agent(
        self,
        agent: dict[str, Any],
        prompt: str,
        context: str | None,
        settings: dict[str, Any],
        run: Run | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """One model call: the system prompt is the agent's own followed by the execution's context (`run`);
        `context` (a team's instructions and the answers before) follows it; `run.environ` is the call's
        environment (`ChatModel.call_headers`)."""
        run = run or Run()
        messages = []
        system = "\n\n".join(filter(None, [agent.get("system_prompt") or "", run.context]))
        if system:
            messages.append({"role": "system", "content": system})
        if context:
            messages.append({"role": "system", "content": context})
        messages.append({"role": "user", "content": prompt})
        model = settings.get("model") or agent.get("model_id") or self.config.default_model
        await self.emit("tool_started", {"tool": "llm", "model": model, "agent_id": agent["id"]})
        text, usage = await self.model.chat(model, messages, settings, agent["id"], self.emit, run.environ)
        await self.emit("message", {"text": text, "agent_id": agent["id"]})
        await self.emit("tool_completed", {"tool": "llm", "agent_id": agent["id"], "usage": usage})
        return text, usage

    async def run_team(
        self, team: dict[str, Any], prompt: str, resolved: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Members answer in order; each sees the answers before it; the last answer is the team's. Each member
        runs with its own resolved run (the team's when the lease has none for it)."""
        resolved = resolved or {}
        context = context_prompt(resolved.get("context"))
        runs = {m.get("agent_id"): m for m in resolved.get("members") or [] if isinstance(m, dict)}
        configuration = team.get("configuration") or {}
        settings = dict(configuration.get("llm") or {})
        instructions = configuration.get("instructions") or ""
        if isinstance(instructions, list):
            instructions = "\n".join(instructions)
        answers: list[str] = []
        total: dict[str, Any] = {}
        text = ""
        for member in team.get("agents") or []:
            before = "\n\n".join(filter(None, [instructions, *(f"A teammate answered:\n{a}" for a in answers)]))
            run = Run(context, run_environment(runs.get(member.get("id"), resolved)))
            text, usage = await self.run_agent(member, prompt, before or None, settings, run)
            answers.append(text)
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
        if not answers:
            raise LlmError("the team has no member agents")
        return text, total

    async def run_planning(self, planning: dict[str, Any], resolved: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """A task plan's planning: one model call (JSON mode) with the control plane's instructions, the
        execution's context, and the agents and teams the plan may use (as JSON); the answer is the plan, its JSON
        object taken out of any prose or code fence around it (the control plane checks it)."""
        catalog = {"agents": planning.get("agents") or [], "teams": planning.get("teams") or []}
        messages = [{"role": "system", "content": str(planning.get("instructions") or "")}]
        context = context_prompt(resolved.get("context"))
        if context:
            messages.append({"role": "system", "content": context})
        messages.append({"role": "system", "content": json.dumps(catalog)})
        messages.append({"role": "user", "content": str(planning.get("task") or "")})
        model = self.config.default_model
        await self.emit("tool_started", {"tool": "llm", "model": model, "planning": planning.get("plan_id")})
        settings = {"response_format": {"type": "json_object"}}
        text, usage = await self.model.chat(model, messages, settings, None, self.emit, run_environment(resolved))
        plan = plan_json(text)
        await self.emit("message", {"text": plan})
        await self.emit("tool_completed", {"tool": "llm", "usage": usage})
        return plan, usage

    async def work(self, leased: dict[str, Any]) -> Outcome:
        """The task itself: what the execution's completion will say."""
        execution = leased["execution"]
        resolved = leased.get("resolved") or {}
        try:
            if resolved.get("planning"):  # a task plan's planning execution
                text, usage = await self.run_planning(resolved["planning"], resolved)
            elif leased.get("agent"):
                run = Run(context_prompt(resolved.get("context")), run_environment(resolved))
                text, usage = await self.run_agent(leased["agent"], execution["prompt"], None, {}, run)
            elif leased.get("team"):
                text, usage = await self.run_team(leased["team"], execution["prompt"], resolved)
            else:
                raise LlmError("the execution's agent or team no longer exists")
        except LlmError as exc:
            await self.emit("error", {"message": str(exc)})
            return "failed", None, str(exc), {}
        except Exception as exc:  # a bug, or a lease answer of the wrong shape: this execution fails, not the worker
            log.exception("execution %s failed in the worker", execution.get("id"))
            message = f"the worker failed: {exc!r}"[:2000]
            await self.emit("error", {"message": message})
            return "failed", None, message, {}
        return "completed", text, None, usage
