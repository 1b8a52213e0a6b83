"""The reference worker: registers, heartbeats, leases from a queue, runs agents and teams against an
OpenAI-compatible chat-completions endpoint, streams their output as events, completes, honours cancel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import signal
import socket
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import msgspec

log = logging.getLogger("controlplane.worker")

FLUSH_SECONDS = 0.05
FLUSH_EVENTS = 32
MAX_BATCH = 500  # the most events the control plane takes in one batch
RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 15.0
QUICK_POLL_SECONDS = 1.0  # a lease answered 204 sooner than this (the server stopping, or no wait) waits a little
MAX_WAIT_SECONDS = 60.0  # the longest long poll the control plane accepts
OFFLINE_TIMEOUT_SECONDS = 5.0  # the last heartbeat's time, at exit


class LlmError(Exception):
    """The model provider answered with an error, with something that is not a chat-completion stream, or not at
    all within the time allowed."""


class Stale(Exception):
    """The lease moved on (cancelled, expired, given to another worker): stop without completing."""


class Refused(Exception):
    """The control plane refused a request for good (a 4xx other than 409 and 429): the worker's configuration
    (key, queue) or the worker itself is wrong; retrying would not help."""


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
    lease_seconds: float = 60.0
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    pending: list[dict[str, Any]] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    sending: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_flush: float = 0.0


Outcome = tuple[str, str | None, str | None, dict[str, Any]]  # status, response, error, usage


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
        self._running: asyncio.Task[None] | None = None
        self._abandoning = False  # a second stop signal cancelled `_running`
        self._period_changed = asyncio.Event()

    # -- control plane --------------------------------------------------------------------------------

    async def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST to the control plane until it answers for good: an unreachable server, a 429 and a 5xx are tried
        again after an exponential, jittered back-off (at least what Retry-After asks), so that a restart or an
        outage of the control plane costs the worker time, never its task. A 409 is returned (the caller knows
        what it means); any other 4xx is Refused. (A request whose answer was lost is sent again: event batches are
        delivered at least once.)"""
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                response = await self.api.post(path, json=body)
            except httpx.TransportError as exc:
                reason = repr(exc)
            else:
                if not _worth_retrying(response):
                    if response.status_code < 400 or response.status_code == 409:
                        return response
                    raise Refused(f"{path}: {response.status_code} {response.text[:500]}")
                reason = f"{response.status_code} {response.text[:200]}"
                delay = max(delay, _retry_after(response))
            wait = delay * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not crypto
            log.warning("control plane: %s failed (%s); trying again in %.1f s", path, reason, wait)
            await asyncio.sleep(wait)
            delay = min(delay * 2, RETRY_MAX_SECONDS)

    def _report(self, status: str | None = None) -> dict[str, Any]:
        if status is None:
            status = "busy" if self.task else "idle"
        return {
            "worker_id": self.config.worker_id,
            "environment_name": self.config.environment,
            "status": status,
            "tasks_processed": self.tasks_processed,
            "current_task_id": self.task.execution_id if self.task else None,
            "worker_metadata": {"kind": "reference", "queue_id": self.config.queue_id},
        }

    async def heartbeat(self) -> None:
        """One heartbeat, saying what the worker does now (a retry would say what it did when it was built: an
        `idle` sent late gives back the lease of a task the worker has started since)."""
        response = await self.api.post("/api/v1/workers/heartbeat", json=self._report())
        if response.status_code >= 400 and not _worth_retrying(response):
            raise Refused(f"heartbeat: {response.status_code} {response.text[:500]}")
        response.raise_for_status()
        self.heard(response.json())

    def heard(self, answer: dict[str, Any]) -> None:
        """What a heartbeat's answer says: the interval to keep, and cancels of the running task."""
        self.heartbeat_interval = float(answer.get("heartbeat_interval_seconds", 30))
        for command in answer.get("commands", []):
            if command.get("type") == "cancel" and self.task and command.get("execution_id") == self.task.execution_id:
                self.task.cancelled.set()

    def heartbeat_period(self) -> float:
        """A third of the interval the control plane asks for, or of the lease held, whichever is shorter:
        heartbeats are what keep a lease alive."""
        period = self.heartbeat_interval / 3
        if self.task is not None:
            period = min(period, self.task.lease_seconds / 3)
        return max(0.2, period)

    async def heartbeat_loop(self) -> None:
        """A heartbeat every period; a task that starts wakes the loop, which then keeps the task's (shorter)
        period from the last heartbeat on. Whatever a heartbeat meets is logged, and the next one follows."""
        last = time.monotonic()
        while True:
            self._period_changed.clear()
            remaining = last + self.heartbeat_period() - time.monotonic()
            if remaining > 0:
                await _wait(self._period_changed, remaining)
                continue
            last = time.monotonic()
            try:
                await self.heartbeat()
            except Refused:
                log.error("the control plane refused a heartbeat", exc_info=True)
            except httpx.HTTPError as exc:  # the next one, at the next period, says what is then true
                log.warning("heartbeat failed (%r); the next one follows in %.1f s", exc, self.heartbeat_period())
            except Exception:  # (an answer that is not what it should be, say): logged, and the loop goes on
                log.exception("heartbeat failed; the next one follows in %.1f s", self.heartbeat_period())

    async def lease(self) -> dict[str, Any] | None:
        body = {"worker_id": self.config.worker_id, "wait_seconds": self.config.wait_seconds}
        self._lease_call = asyncio.create_task(self.post(f"/api/v1/worker-queues/{self.config.queue_id}/lease", body))
        try:
            response = await self._lease_call
        finally:
            self._lease_call = None
        if response.status_code == 204:
            return None
        if response.status_code == 409:
            raise Refused(f"lease: 409 {response.text[:500]}")
        leased: dict[str, Any] = response.json()
        return leased

    async def emit(self, event_type: str, data: dict[str, Any], *, force: bool = False) -> None:
        """Queue an event; the task's flusher sends what is queued every FLUSH_SECONDS at most (or at once from
        FLUSH_EVENTS events); `force` sends it now."""
        task = self.task
        if task is None:
            return
        task.pending.append({"type": event_type, "data": data})
        if force:
            await self.flush(task)
        else:
            task.wake.set()

    async def flush(self, task: Task) -> None:
        """Send the task's queued events, in order, a batch at a time; a batch leaves the queue only once the
        control plane took it."""
        async with task.sending:
            while task.pending:
                batch = task.pending[:MAX_BATCH]
                response = await self.post(
                    f"/api/v1/executions/{task.execution_id}/events",
                    {"worker_id": self.config.worker_id, "attempt": task.attempt, "events": batch},
                )
                if response.status_code == 409:
                    raise Stale(response.text)
                del task.pending[: len(batch)]
                task.last_flush = time.monotonic()
                if response.json().get("cancel_requested"):
                    task.cancelled.set()

    async def flusher(self, task: Task) -> None:
        while True:
            await task.wake.wait()
            task.wake.clear()
            delay = task.last_flush + FLUSH_SECONDS - time.monotonic()
            if delay > 0 and len(task.pending) < FLUSH_EVENTS:
                await asyncio.sleep(delay)
            await self.flush(task)

    async def complete(self, task: Task, outcome: Outcome) -> None:
        status, response, error, usage = outcome
        await self.flush(task)
        body = {
            "worker_id": self.config.worker_id,
            "attempt": task.attempt,
            "status": status,
            "response": response,
            "error": error,
            "usage": usage,
        }
        answer = await self.post(f"/api/v1/executions/{task.execution_id}/complete", body)
        if answer.status_code == 409:
            raise Stale(answer.text)

    # -- the model ------------------------------------------------------------------------------------

    async def chat(
        self, model: str, messages: list[dict[str, str]], settings: dict[str, Any], agent_id: str | None
    ) -> tuple[str, dict[str, Any]]:
        """Stream one chat completion, emitting `message_chunk` events; the full text and the usage. Whatever the
        provider does wrong (an error status or object, something that is not a stream of chunks, a stream that
        stops before the model finished, no end within the LLM timeout) is an LlmError that says what."""
        body = {"model": model, "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
        body.update({k: v for k, v in settings.items() if v is not None and k != "model"})
        text: list[str] = []
        usage: dict[str, Any] = {}
        finished = False
        limit = self.config.llm_timeout_seconds
        try:
            async with asyncio.timeout(limit), self.llm.stream("POST", "/chat/completions", json=body) as response:
                if response.status_code >= 400:
                    raise LlmError(_provider_message(response.status_code, await response.aread()))
                kind = response.headers.get("content-type", "")
                if not kind.startswith("text/event-stream"):
                    raise LlmError(f"the LLM endpoint did not stream its answer (content type {kind or 'none'!r})")
                async for data in _sse_data(response):
                    if data == "[DONE]":
                        finished = True
                        break
                    pieces, done, reported = _read_chunk(data)
                    finished = finished or done
                    usage = reported or usage
                    for piece in pieces:
                        text.append(piece)
                        await self.emit("message_chunk", {"text": piece, "agent_id": agent_id})
        except TimeoutError:
            raise LlmError(f"the LLM endpoint did not finish its answer within {limit:g} s") from None
        except httpx.HTTPError as exc:
            raise LlmError(f"LLM endpoint unreachable or too slow: {exc!r}") from exc
        if not finished:
            raise LlmError("the LLM endpoint's stream ended before the model finished (no [DONE], no finish_reason)")
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
        await self.emit("tool_completed", {"tool": "llm", "agent_id": agent["id"], "usage": usage})
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

    async def work(self, leased: dict[str, Any]) -> Outcome:
        """The task itself: what the execution's completion will say."""
        execution = leased["execution"]
        try:
            if leased.get("agent"):
                text, usage = await self.run_agent(leased["agent"], execution["prompt"], None, {})
            elif leased.get("team"):
                text, usage = await self.run_team(leased["team"], execution["prompt"])
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

    # -- the loop -------------------------------------------------------------------------------------

    async def run_lease(self, leased: dict[str, Any]) -> None:
        """Run the task beside its flusher; a cancel (from a heartbeat's commands or an event batch's answer)
        stops it at once, even while the model is still thinking. A lease that moved on (409) or a refusal drops
        the task; a second stop signal abandons it (the offline heartbeat gives it back)."""
        try:
            execution = leased["execution"]
            task = Task(str(execution["id"]), int(leased["attempt"]), _seconds_until(leased.get("lease_expires_at")))
        except (KeyError, TypeError, ValueError):  # its lease goes back when this worker next reports itself idle
            log.error("a lease answer of the wrong shape, left alone: %.500r", leased)
            return
        self.task = task
        self._period_changed.set()  # heartbeats keep up with the lease from now on
        log.info("running execution %s (attempt %s)", task.execution_id, task.attempt)
        work = asyncio.create_task(self.work(leased))
        flushing = asyncio.create_task(self.flusher(task))
        cancel = asyncio.create_task(task.cancelled.wait())
        try:
            done, _ = await asyncio.wait({work, flushing, cancel}, return_when=asyncio.FIRST_COMPLETED)
            if flushing in done:
                flushing.result()  # raises what stopped it: Stale, Refused
            if work not in done:  # cancelled on request: the model stops now, before the completion is sent
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
            outcome: Outcome = work.result() if work in done else ("cancelled", None, "cancelled on request", {})
            await self.complete(task, outcome)
            self.tasks_processed += 1
        except Stale:
            log.warning("execution %s moved on without this worker; dropping it", task.execution_id)
        except Refused as refusal:  # (a batch or an answer too large for the server, say): fail it, saying why
            log.error("the control plane refused execution %s's events or completion: %s", task.execution_id, refusal)
            task.pending.clear()
            error = f"the control plane refused this execution's events or completion: {refusal}"[:2000]
            try:
                await self.complete(task, ("failed", None, error, {}))
            except (Refused, Stale):  # then the lease goes back when this worker next reports itself idle
                log.error("execution %s could not be failed either; leaving it", task.execution_id, exc_info=True)
        finally:
            for part in (work, flushing, cancel):
                part.cancel()
            await asyncio.gather(work, flushing, cancel, return_exceptions=True)
            self.task = None
            self._period_changed.set()

    async def register(self) -> bool:
        """The first heartbeat, tried until the control plane answers (it may start after the worker); False when
        the worker was stopped first."""
        registering = asyncio.ensure_future(self.post("/api/v1/workers/heartbeat", self._report("idle")))
        stopped = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({registering, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (registering, stopped):
                if not waiting.done():
                    waiting.cancel()
        if not registering.done() or registering.cancelled():
            return False
        self.heard(registering.result().json())  # (raises Refused: a wrong key, say)
        return True

    async def run(self) -> None:
        if not await self.register():
            await self.close()
            return
        beating = asyncio.create_task(self.heartbeat_loop())
        try:
            while not self.stopping.is_set():
                asked = time.monotonic()
                try:
                    leased = await self.lease()
                except asyncio.CancelledError:
                    if self.stopping.is_set():
                        break
                    raise
                if leased is not None:
                    self._running = asyncio.create_task(self.run_lease(leased))
                    try:
                        await self._running
                    except asyncio.CancelledError:
                        if not self._abandoning:  # this worker itself is being cancelled
                            raise
                        log.warning("execution %s abandoned on a second stop signal", leased["execution"]["id"])
                    finally:
                        self._running = None
                elif time.monotonic() - asked < QUICK_POLL_SECONDS:  # no long poll happened: do not hammer
                    await _wait(self.stopping, QUICK_POLL_SECONDS * random.uniform(0.5, 1.0))  # noqa: S311
        finally:
            beating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beating
            with contextlib.suppress(httpx.HTTPError):  # one short try: the worker is leaving
                await self.api.post(
                    "/api/v1/workers/heartbeat", json=self._report("offline"), timeout=OFFLINE_TIMEOUT_SECONDS
                )
            await self.close()

    async def close(self) -> None:
        await self.api.aclose()
        await self.llm.aclose()

    def stop(self) -> None:
        """First signal: finish the running task, lease nothing more, exit. Second: abandon the task too."""
        if self.stopping.is_set():
            if self._running is not None:  # whatever it waits for: the model, or a control plane that is away
                self._abandoning = True
                self._running.cancel()
            return
        self.stopping.set()
        if self._running is not None:
            log.info("stopping: finishing the running task first (a second signal abandons it)")
        else:
            log.info("stopping")
        if self._lease_call is not None and self.task is None:
            self._lease_call.cancel()  # (a lease recorded meanwhile is given back: the server sees the hang-up)


async def _wait(event: asyncio.Event, seconds: float) -> None:
    """Until `event` is set or `seconds` pass. (Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation
    that arrives as the event is set, and the heartbeat loop then outlived its worker's stop.)"""
    waiting = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiting}, timeout=seconds)
    finally:
        waiting.cancel()


def _worth_retrying(response: httpx.Response) -> bool:
    """An answer that a later try may change: a 429, a 5xx, or a 409 `CONCURRENT_UPDATE` (the server asking for
    one)."""
    status = response.status_code
    return status == 429 or status >= 500 or (status == 409 and _error_code(response) == "CONCURRENT_UPDATE")


def _error_code(response: httpx.Response) -> str | None:
    """The `error.code` of the service's error envelope, when the answer is one."""
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _retry_after(response: httpx.Response) -> float:
    try:
        return min(float(response.headers.get("retry-after", "0")), RETRY_MAX_SECONDS * 4)
    except ValueError:
        return 0.0


def _seconds_until(timestamp: Any) -> float:
    """Seconds from now to an ISO 8601 time the control plane sent (60 when it sent none or nonsense)."""
    if not isinstance(timestamp, str):
        return 60.0
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return 60.0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.6, (moment - datetime.now(UTC)).total_seconds())


def _read_chunk(data: str) -> tuple[list[str], bool, dict[str, Any] | None]:
    """One `data:` line of a chat-completion stream: its text pieces, whether a choice finished, its usage."""
    try:
        chunk = msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise LlmError(f"the LLM endpoint sent malformed data: {exc}") from None
    if not isinstance(chunk, dict):
        raise LlmError(f"the LLM endpoint sent something that is not a chat-completion chunk: {data[:200]}")
    if chunk.get("error") is not None:
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise LlmError(f"LLM provider error in its stream: {str(message)[:500]}")
    choices = chunk.get("choices") or []
    usage = chunk.get("usage")
    if not isinstance(choices, list) or (usage is not None and not isinstance(usage, dict)):
        raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
    pieces: list[str] = []
    finished = False
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        if not isinstance(choice, dict) or (delta is not None and not isinstance(delta, dict)):
            raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
        if content is not None and not isinstance(content, str):
            raise LlmError(f"the LLM endpoint sent a chunk of the wrong shape: {data[:200]}")
        if content:
            pieces.append(content)
        finished = finished or bool(choice.get("finish_reason"))
    return pieces, finished, usage


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


def check_worker_config(config: WorkerConfig) -> None:
    """ValueError naming the flag when a setting is out of its range."""
    if not 0 <= config.wait_seconds <= MAX_WAIT_SECONDS:
        raise ValueError(f"--wait-seconds must be between 0 and {MAX_WAIT_SECONDS:g}, got {config.wait_seconds:g}")
    if config.llm_timeout_seconds <= 0:
        raise ValueError(f"--llm-timeout-seconds must be above 0, got {config.llm_timeout_seconds:g}")


def run_worker(config: WorkerConfig) -> int:
    """Run until SIGTERM or SIGINT (exit 0); exit 2 when the control plane refuses the worker for good (a wrong key
    or queue: it says so)."""
    check_worker_config(config)

    async def main() -> None:
        worker = ReferenceWorker(config)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, worker.stop)
        await worker.run()

    try:
        asyncio.run(main())
    except Refused as exc:
        log.error("the control plane refused this worker: %s", exc)
        return 2
    return 0
