"""The limits every policy process runs under (`SandboxLimits`, the settings' CONTROLPLANE_POLICY_*), the
pool's timings, and how a call fails (`ProcessFailed`, `Unencodable`)."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

import msgspec

import controlplane_adapters
import controlplane_domain
from controlplane_adapters.policies.screen import MAX_MODULE_BYTES, MAX_NESTING

WORKER = "controlplane_adapters.policies.worker"
START_SECONDS = 30.0
"""How long a new policy process may take to say it is ready (an interpreter starting on a busy machine)."""
STOP_SECONDS = 2.0
WATCHDOG_SECONDS = 1.0
"""How often the pool looks for a call past its wall-time backstop (only while one is pending)."""
WALL_FACTOR = 20
"""A call also ends at this many times its limit in wall time, at least `WALL_MINIMUM` (a process that gets no CPU
for that long is as good as hung)."""
WALL_MINIMUM = 5.0
MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""An answer longer than this (a policy denying with millions of messages) kills its process."""
MEMORY_SHARE = 0.75
"""A process that aborted with its peak resident size at this share of its memory limit or more ran out of it
(rego-cpp's allocation failure aborts)."""
ENCODER = msgspec.msgpack.Encoder()
DECODER = msgspec.msgpack.Decoder()


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """The pool's size and each process's limits (settings: CONTROLPLANE_POLICY_*, docs/configuration.md)."""

    processes: int = 2
    evaluation_timeout_ms: int = 250
    compile_timeout_ms: int = 2000
    memory_mb: int = 512
    max_module_bytes: int = MAX_MODULE_BYTES
    max_nesting: int = MAX_NESTING

    def timed_out(self, op: str) -> str:
        if op == "evaluate":
            return f"policy evaluation timed out after {self.evaluation_timeout_ms} ms"
        if op == "check":
            return f"compiling the module timed out after {self.compile_timeout_ms} ms"
        return f"compiling the policies timed out after {self.compile_timeout_ms} ms"

    def wall_seconds(self, op: str) -> float:
        limit = (self.evaluation_timeout_ms if op == "evaluate" else self.compile_timeout_ms) / 1000
        return max(WALL_MINIMUM, limit * WALL_FACTOR)

    @property
    def over_memory(self) -> str:
        return f"policy process went over its memory limit of {self.memory_mb} MiB"


class Unencodable(ValueError):
    """The request holds a value the frames cannot carry (an integer over 64 bits): nothing was sent."""


class ProcessFailed(Exception):
    """A policy process ran out of time or memory, crashed, or could not be started: `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def minimal_environment() -> dict[str, str]:
    """All a policy process is given: where this code is (the interpreter finds its own packages), and a locale."""
    roots = {str(Path(package.__file__ or ".").resolve().parent.parent) for package in (controlplane_adapters,
             controlplane_domain)}  # fmt: skip
    return {"PYTHONPATH": os.pathsep.join(sorted(roots)), "LANG": "C.UTF-8", "PYTHONNOUSERSITE": "1"}


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
