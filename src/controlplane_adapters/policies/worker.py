"""A policy process (`python -P -m controlplane_adapters.policies.worker MEMORY_MB EVALUATION_MS COMPILE_MS`):
compiles and evaluates Rego for the server, one request at a time, over a socket (its fd 0 and 1; sandbox.py starts
it with a tiny environment).

It limits itself, so that the server runs no timer and reads no /proc for it:

- **Time.** Before each request it arms `ITIMER_PROF` with the request's limit (`EVALUATION_MS` for an evaluation,
  `COMPILE_MS` for a check or a load) and disarms it after: past that much CPU time on the request (its own, not
  the machine's wall time) the kernel's `SIGPROF`, left to its default action, ends the process.
- **Memory.** `RLIMIT_DATA` lets it map `MEMORY_MB` beyond what it holds once rego-cpp is started (the allocator's
  reserve is already counted then: `RLIMIT_AS` could not be used): an allocation past it fails, and the process
  ends (`std::bad_alloc` aborts it, a Python `MemoryError` exits with `MEMORY_EXIT`).

The server tells a limit from a crash by how the process ended (sandbox.py). Frames: a 4-byte big-endian length,
then a msgpack map. Once started, the process says `{"ready": true}`; then requests and their answers:

- `{"op": "check", "rego": ...}`: `{"ok": true}`, or `{"error": {"message", "line", "column"}}` (screen.py's
  refusals and the compiler's errors);
- `{"op": "load", "key": ..., "modules": [[id, rego], ...]}`: `{"ok": true}`, the modules compiled together and
  kept under the key (the last `KEPT` keys used, fewer when the process's resident memory passes half its limit:
  half of those kept are forgotten, the least recently used first);
- `{"op": "evaluate", "key": ..., "input": {...}}`: `{"outcomes": [[deny, error], ...]}` in the modules' order, or
  `{"unknown": true}` when the key names no bundle compiled here (the server loads it).

Anything else going wrong answers `{"failed": message}`. Rego-cpp's own output (it has none at `LogLevel.NONE`)
goes to stderr: the socket carries the frames only."""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections import OrderedDict
from typing import Any

import msgspec

KEPT = 128
MEMORY_EXIT = 75
"""The exit status after a MemoryError (sandbox.py reports it as the memory limit)."""
NO_LIMITS_EXIT = 76
"""The exit status of a process that could not set its limits (it answers nothing: fail closed)."""
_MIB = 1024 * 1024


def _statm() -> tuple[int, int]:
    """This process's (resident, data) sizes in bytes (Linux's /proc/self/statm)."""
    with open("/proc/self/statm", "rb") as statm:
        fields = statm.read().split()
    page = os.sysconf("SC_PAGE_SIZE")
    return int(fields[1]) * page, int(fields[5]) * page


def _resident_bytes() -> int:
    try:
        return _statm()[0]
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(megabytes: int) -> None:
    """RLIMIT_DATA at what the process maps now (rego-cpp's allocator started) plus what it may still use."""
    resident, data = _statm()
    limit = data + max(megabytes * _MIB - resident, 16 * _MIB)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write(fd: int, frame: bytes) -> None:
    view = memoryview(len(frame).to_bytes(4, "big") + frame)
    while view:
        view = view[os.write(fd, view) :]


def main() -> None:
    memory_mb, evaluation_ms, compile_ms = (int(argument) for argument in sys.argv[1:4])
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # nothing of the server's but the socket (fd 0, 1) and stderr
    os.chdir("/")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file (with the modules in it)
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the time limit: SIGPROF ends the process
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGPROF})
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)  # whatever else writes to stdout lands on stderr
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.environ.clear()  # (the server passes a tiny environment already; nothing is left for `opa.runtime`)

    from controlplane_adapters.policies.rego import RegoPrepared, check_module
    from controlplane_domain.policies.entity import PolicyCompileError

    RegoPrepared([])  # rego-cpp's allocator starts (and reserves its address space) before the memory limit
    try:
        _limit_memory(memory_mb)
    except (OSError, ValueError, IndexError) as exc:
        print(f"policy process: no memory limit could be set ({exc}): not starting", file=sys.stderr)
        os._exit(NO_LIMITS_EXIT)
    budget = memory_mb * _MIB // 2
    evaluation_seconds, compile_seconds = evaluation_ms / 1000, compile_ms / 1000

    encoder, decoder = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder()
    bundles: OrderedDict[str, RegoPrepared] = OrderedDict()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        op = request["op"]
        if op == "evaluate":
            prepared = bundles.get(request["key"])
            if prepared is None:
                return {"unknown": True}
            bundles.move_to_end(request["key"])
            signal.setitimer(signal.ITIMER_PROF, evaluation_seconds)
            try:
                outcomes = prepared.evaluate(request["input"])
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            return {"outcomes": [[list(outcome.deny), outcome.error] for outcome in outcomes]}
        signal.setitimer(signal.ITIMER_PROF, compile_seconds)
        try:
            if op == "check":
                try:
                    check_module(request["rego"])
                except PolicyCompileError as exc:
                    return {"error": {"message": exc.message, "line": exc.line, "column": exc.column}}
                return {"ok": True}
            bundles[request["key"]] = RegoPrepared([(str(i), rego) for i, rego in request["modules"]])
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        if len(bundles) > KEPT or (len(bundles) > 1 and _resident_bytes() > budget):
            for _ in range(len(bundles) // 2):
                bundles.popitem(last=False)
        return {"ok": True}

    _write(protocol_out, encoder.encode({"ready": True}))
    while True:
        header = _read_exactly(protocol_in, 4)
        if header is None:
            return  # the server closed the socket (stopping, or gone)
        body = _read_exactly(protocol_in, int.from_bytes(header, "big"))
        if body is None:
            return
        try:
            reply = answer(decoder.decode(body))
        except MemoryError:
            os._exit(MEMORY_EXIT)
        except Exception as exc:  # any fault is the request's, told to the server
            reply = {"failed": f"{type(exc).__name__}: {exc}"[:500]}
        _write(protocol_out, encoder.encode(reply))


if __name__ == "__main__":
    main()
