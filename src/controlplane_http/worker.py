"""The reference worker: registers, heartbeats, leases from a queue, runs agents and teams against an
OpenAI-compatible chat-completions endpoint, streams their output as events, completes, honours cancel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

log = logging.getLogger("controlplane.worker")

FLUSH_SECONDS = 0.05
FLUSH_EVENTS = 32


class LlmError(Exception):
    """The model provider answered with an error, or not at all."""


class Stale(Exception):
    """The lease moved on (cancelled, expired, given to another worker): stop without completing."""


class Cancelled(Exception):
    """The execution's cancellation was requested."""


@dataclass
class WorkerConfig:
    api_url: str
    api_key: str
    queue_id: str
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    environment: str = "default"
    llm_base_url: str = "https://api.openai.com/v1"
    llm_api_key: str | None = None
    default_model: str = "gpt-4o-mini"
    wait_seconds: float = 20.0
    llm_timeout_seconds: float = 120.0


@dataclass
class Task:
    execution_id: str
    attempt: int
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    pending: list[dict[str, Any]] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)


class ReferenceWorker:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.stopping = asyncio.Event()
        self.task: Task | None = None
        self.tasks_processed = 0
        self.heartbeat_interval = 30.0
        self.api = httpx.AsyncClient(
            base_url=config.api_url.rstrip("/"),
            headers={"Authorization": f"Bearer {config.api_key}"},
            timeout=httpx.Timeout(30.0, read=config.wait_seconds + 30.0),
        )
        llm_headers = {"Authorization": f"Bearer {config.llm_api_key}"} if config.llm_api_key else {}
        self.llm = httpx.AsyncClient(
            base_url=config.llm_base_url.rstrip("/"), headers=llm_headers, timeout=config.llm_timeout_seconds
        )
        self._lease_call: asyncio.Task[httpx.Response] | None = None

    # -- control plane --------------------------------------------------------------------------------

    async def heartbeat(self) -> None:
        body = {
            "worker_id": self.config.worker_id,
            "environment_name": self.config.environment,
            "status": "busy" if self.task else "idle",
            "tasks_processed": self.tasks_processed,
            "current_task_id": self.task.execution_id if self.task else None,
            "worker_metadata": {"kind": "reference", "queue_id": self.config.queue_id},
        }
        response = await self.api.post("/api/v1/workers/heartbeat", json=body)
        response.raise_for_status()
        answer = response.json()
        self.heartbeat_interval = float(answer.get("heartbeat_interval_seconds", 30))
        for command in answer.get("commands", []):
            if command.get("type") == "cancel" and self.task and command.get("execution_id") == self.task.execution_id:
                self.task.cancelled.set()

    async def heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(max(0.2, self.heartbeat_interval / 3))
            try:
                await self.heartbeat()
            except httpx.HTTPError:
                log.warning("heartbeat failed; retrying", exc_info=True)

    async def lease(self) -> dict[str, Any] | None:
        body = {"worker_id": self.config.worker_id, "wait_seconds": self.config.wait_seconds}
        self._lease_call = asyncio.create_task(
            self.api.post(f"/api/v1/worker-queues/{self.config.queue_id}/lease", json=body)
        )
        try:
            response = await self._lease_call
        finally:
            self._lease_call = None
        if response.status_code == 204:
            return None
        response.raise_for_status()
        leased: dict[str, Any] = response.json()
        return leased

    async def emit(self, event_type: str, data: dict[str, Any], *, force: bool = False) -> None:
        task = self.task
        if task is None:
            return
        task.pending.append({"type": event_type, "data": data})
        if force or len(task.pending) >= FLUSH_EVENTS or time.monotonic() - task.last_flush >= FLUSH_SECONDS:
            await self.flush()

    async def flush(self) -> None:
        task = self.task
        if task is None or not task.pending:
            return
        batch, task.pending = task.pending, []
        task.last_flush = time.monotonic()
        response = await self.api.post(
            f"/api/v1/executions/{task.execution_id}/events",
            json={"worker_id": self.config.worker_id, "attempt": task.attempt, "events": batch},
        )
        if response.status_code == 409:
            raise Stale(response.text)
        response.raise_for_status()
        if response.json().get("cancel_requested"):
            task.cancelled.set()

    async def complete(self, status: str, response: str | None, error: str | None, usage: dict[str, Any]) -> None:
        task = self.task
        assert task is not None
        await self.flush()
        body = {
            "worker_id": self.config.worker_id,
            "attempt": task.attempt,
            "status": status,
            "response": response,
            "error": error,
            "usage": usage,
        }
        answer = await self.api.post(f"/api/v1/executions/{task.execution_id}/complete", json=body)
        if answer.status_code == 409:
            raise Stale(answer.text)
        answer.raise_for_status()

    # -- the model ------------------------------------------------------------------------------------

    async def chat(
        self, model: str, messages: list[dict[str, str]], settings: dict[str, Any], agent_id: str | None
    ) -> tuple[str, dict[str, Any]]:
        """Stream one chat completion, emitting `message_chunk` events; the full text and the usage."""
        body = {"model": model, "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        body.update({k: v for k, v in settings.items() if v is not None and k != "model"})
        text: list[str] = []
        usage: dict[str, Any] = {}
        try:
            async with self.llm.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400:
                    raise LlmError(_provider_message(response.status_code, await response.aread()))
                async for data in _sse_data(response):
                    if self.task is not None and self.task.cancelled.is_set():
                        raise Cancelled()
                    if data == "[DONE]":
                        break
                    chunk = msgspec.json.decode(data)
                    usage = chunk.get("usage") or usage
                    for choice in chunk.get("choices") or []:
                        delta = (choice.get("delta") or {}).get("content")
                        if delta:
                            text.append(delta)
                            await self.emit("message_chunk", {"text": delta, "agent_id": agent_id})
        except httpx.HTTPError as exc:
            raise LlmError(f"LLM endpoint unreachable or too slow: {exc!r}") from exc
        except msgspec.DecodeError as exc:
            raise LlmError(f"LLM endpoint sent malformed data: {exc}") from exc
        return "".join(text), usage

    async def run_agent(
        self, agent: dict[str, Any], prompt: str, context: str | None, settings: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        messages = []
        if agent.get("system_prompt"):
            messages.append({"role": "system", "content": agent["system_prompt"]})
        if context:
            messages.append({"role": "system", "content": context})
        messages.append({"role": "user", "content": prompt})
        model = settings.get("model") or agent.get("model_id") or self.config.default_model
        await self.emit("tool_started", {"tool": "llm", "model": model, "agent_id": agent["id"]})
        text, usage = await self.chat(model, messages, settings, agent["id"])
        await self.emit("message", {"text": text, "agent_id": agent["id"]})
        await self.emit("tool_completed", {"tool": "llm", "agent_id": agent["id"], "usage": usage}, force=True)
        return text, usage

    async def run_team(self, team: dict[str, Any], prompt: str) -> tuple[str, dict[str, Any]]:
        """Members answer in order; each sees the answers before it; the last answer is the team's."""
        configuration = team.get("configuration") or {}
        settings = dict(configuration.get("llm") or {})
        instructions = configuration.get("instructions") or ""
        if isinstance(instructions, list):
            instructions = "\n".join(instructions)
        answers: list[str] = []
        total: dict[str, Any] = {}
        text = ""
        for member in team.get("agents") or []:
            context = "\n\n".join(filter(None, [instructions, *(f"A teammate answered:\n{a}" for a in answers)]))
            text, usage = await self.run_agent(member, prompt, context or None, settings)
            answers.append(text)
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
        if not answers:
            raise LlmError("the team has no member agents")
        return text, total

    # -- the loop -------------------------------------------------------------------------------------

    async def run_lease(self, leased: dict[str, Any]) -> None:
        execution = leased["execution"]
        self.task = Task(execution["id"], leased["attempt"])
        log.info("running execution %s (attempt %s)", execution["id"], leased["attempt"])
        try:
            try:
                if leased.get("agent"):
                    text, usage = await self.run_agent(leased["agent"], execution["prompt"], None, {})
                elif leased.get("team"):
                    text, usage = await self.run_team(leased["team"], execution["prompt"])
                else:
                    raise LlmError("the execution's agent or team no longer exists")
            except Cancelled:
                await self.complete("cancelled", None, "cancelled on request", {})
            except LlmError as exc:
                await self.emit("error", {"message": str(exc)})
                await self.complete("failed", None, str(exc), {})
            else:
                await self.complete("completed", text, None, usage)
            self.tasks_processed += 1
        except Stale:
            log.warning("execution %s moved on without this worker; dropping it", execution["id"])
        finally:
            self.task = None

    async def run(self) -> None:
        await self.heartbeat()
        beating = asyncio.create_task(self.heartbeat_loop())
        try:
            while not self.stopping.is_set():
                try:
                    leased = await self.lease()
                except asyncio.CancelledError:
                    if self.stopping.is_set():
                        break
                    raise
                except httpx.HTTPError:
                    log.warning("lease failed; retrying in a second", exc_info=True)
                    await asyncio.sleep(1)
                    continue
                if leased is not None:
                    await self.run_lease(leased)
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
            with contextlib.suppress(httpx.HTTPError):
                await self.api.post(
                    "/api/v1/workers/heartbeat",
                    json={"worker_id": self.config.worker_id, "environment_name": self.config.environment,
                          "status": "offline", "tasks_processed": self.tasks_processed},
                )  # fmt: skip
            await self.api.aclose()
            await self.llm.aclose()

    def stop(self) -> None:
        """Finish the running task, lease nothing more, exit."""
        self.stopping.set()
        if self._lease_call is not None and self.task is None:
            self._lease_call.cancel()


def _provider_message(status: int, body: bytes) -> str:
    try:
        decoded = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # whatever the provider sent, its status stands
        decoded = None
    message = None
    if isinstance(decoded, dict):
        error = decoded.get("error")
        message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    return f"LLM provider error {status}: {message or body.decode(errors='replace')[:500]}"


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            yield line[5:].strip()


def run_worker(config: WorkerConfig) -> int:
    async def main() -> None:
        worker = ReferenceWorker(config)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        await worker.run()

    asyncio.run(main())
    return 0
