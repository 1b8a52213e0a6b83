"""The reference worker's loop: it registers, keeps heartbeats going, leases from its queue one execution at a
time and runs it (`tasks`), and stops on SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import signal
import socket
import time
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import httpx

from controlplane_wire.workers import HeartbeatResponse
from controlplane_worker.config import WorkerConfig, check_worker_config
from controlplane_worker.control_plane import ControlPlane, Refused, Stale, heartbeat_answer
from controlplane_worker.model import ChatModel
from controlplane_worker.tasks import Outcome, Task, TaskRun

log = logging.getLogger("controlplane.worker")

try:
    VERSION = metadata.version("agent-control-plane")
except metadata.PackageNotFoundError:  # run from a source tree that is not installed
    VERSION = "unknown"
QUICK_POLL_SECONDS = 1.0  # a lease answered 204 sooner than this (the server stopping, or no wait) waits a little


class ReferenceWorker:
    def __init__(self, config: WorkerConfig) -> None:
        self.config = config
        self.stopping = asyncio.Event()
        self.task: Task | None = None
        self.tasks_processed = 0
        self.heartbeat_interval = 30.0
        self.control_plane = ControlPlane(config)
        self.model = ChatModel(config)
        self._lease_call: asyncio.Task[httpx.Response] | None = None
        self._running: asyncio.Task[None] | None = None
        self._abandoning = False  # a second stop signal cancelled `_running`
        self._period_changed = asyncio.Event()

    # -- heartbeats -----------------------------------------------------------------------------------

    def _report(self, status: str | None = None) -> dict[str, Any]:
        if status is None:
            status = "busy" if self.task else "idle"
        return {
            "worker_id": self.config.worker_id,
            "environment_name": self.config.environment,
            "status": status,
            "tasks_processed": self.tasks_processed,
            "current_task_id": self.task.execution_id if self.task else None,
            "worker_metadata": {
                "kind": "reference",
                "queue_id": self.config.queue_id,
                # what GET /api/v1/runners reads: the host it groups by, the version, one execution at a time
                "hostname": socket.gethostname(),
                "version": VERSION,
                "capacity": 1,
            },
        }

    async def heartbeat(self) -> None:
        """One heartbeat, saying what the worker does now (a retry would say what it did when it was built: an
        `idle` sent late gives back the lease of a task the worker has started since)."""
        self.heard(await self.control_plane.heartbeat(self._report()))

    def heard(self, answer: HeartbeatResponse) -> None:
        """What a heartbeat's answer says: the interval to keep, and cancels of the running task."""
        self.heartbeat_interval = float(answer.heartbeat_interval_seconds)
        for command in answer.commands:
            if command.type == "cancel" and self.task and command.execution_id == self.task.execution_id:
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

    # -- the loop -------------------------------------------------------------------------------------

    async def lease(self) -> dict[str, Any] | None:
        body = {"worker_id": self.config.worker_id, "wait_seconds": self.config.wait_seconds}
        path = f"/api/v1/worker-queues/{self.config.queue_id}/lease"
        self._lease_call = asyncio.create_task(self.control_plane.post(path, body))
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

    async def run_lease(self, leased: dict[str, Any]) -> None:
        """Run the task beside its flusher; a cancel (from a heartbeat's commands or an event batch's answer)
        stops it at once, even while the model is still thinking. A lease that moved on (409) or a refusal drops
        the task; a second stop signal abandons it (the offline heartbeat gives it back)."""
        try:
            execution = leased["execution"]
            task = Task(str(execution["id"]), int(leased["attempt"]), _seconds_until(leased.get("lease_expires_at")))
        except (KeyError, TypeError, ValueError):  # its lease goes back when this worker next reports itself idle
            shown = {key: value for key, value in leased.items() if key != "resolved"}  # (secrets: never logged)
            log.error("a lease answer of the wrong shape, left alone: %.500r", shown)
            return
        self.task = task
        self._period_changed.set()  # heartbeats keep up with the lease from now on
        log.info("running execution %s (attempt %s)", task.execution_id, task.attempt)
        run = TaskRun(task, self.config, self.control_plane, self.model)
        work = asyncio.create_task(run.work(leased))
        flushing = asyncio.create_task(run.flusher())
        cancel = asyncio.create_task(task.cancelled.wait())
        try:
            done, _ = await asyncio.wait({work, flushing, cancel}, return_when=asyncio.FIRST_COMPLETED)
            if flushing in done:
                flushing.result()  # raises what stopped it: Stale, Refused
            if work not in done:  # cancelled on request: the model stops now, before the completion is sent
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
            outcome: Outcome = work.result() if work in done else ("cancelled", None, "cancelled on request", {})
            await run.complete(outcome)
            self.tasks_processed += 1
        except Stale:
            log.warning("execution %s moved on without this worker; dropping it", task.execution_id)
        except Refused as refusal:  # (a batch or an answer too large for the server, say): fail it, saying why
            log.error("the control plane refused execution %s's events or completion: %s", task.execution_id, refusal)
            task.pending.clear()
            error = f"the control plane refused this execution's events or completion: {refusal}"[:2000]
            try:
                await run.complete(("failed", None, error, {}))
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
        registering = asyncio.ensure_future(self.control_plane.post("/api/v1/workers/heartbeat", self._report("idle")))
        stopped = asyncio.ensure_future(self.stopping.wait())
        try:
            await asyncio.wait({registering, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (registering, stopped):
                if not waiting.done():
                    waiting.cancel()
        if not registering.done() or registering.cancelled():
            return False
        self.heard(heartbeat_answer(registering.result()))  # (post raised Refused: a wrong key, say)
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
            await self.control_plane.offline(self._report("offline"))
            await self.close()

    async def close(self) -> None:
        await self.control_plane.aclose()
        await self.model.aclose()

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
