"""A policy process (`python -m controlplane_adapters.policies.worker`): compiles and evaluates Rego for the server,
one request at a time, over its stdin and stdout (sandbox.py starts it, with a tiny environment, and kills it when
it runs out of time or memory).

Frames: a 4-byte big-endian length, then a msgpack map. Once started, the process says `{"ready": true}`; then
requests and their answers:

- `{"op": "check", "rego": ...}`: `{"ok": true}`, or `{"error": {"message", "line", "column"}}` (screen.py's
  refusals and the compiler's errors);
- `{"op": "load", "key": ..., "modules": [[id, rego], ...]}`: `{"ok": true}`, the modules compiled together and
  kept under the key (the last `KEPT` keys used, fewer when the process's resident memory passes half its limit,
  the first argument, in MiB: half of those kept are forgotten, the least recently used first);
- `{"op": "evaluate", "key": ..., "input": {...}}`: `{"outcomes": [[deny, error], ...]}` in the modules' order, or
  `{"unknown": true}` when the key names no bundle compiled here (the server loads it: a new process knows
  nothing).

Anything else going wrong answers `{"failed": message}`. Rego-cpp's own output (it has none at `LogLevel.NONE`)
goes to stderr: the frames have stdout to themselves."""

from __future__ import annotations

import os
import resource
import sys
from collections import OrderedDict
from typing import Any, BinaryIO

import msgspec

KEPT = 128
MEMORY_EXIT = 75
"""The exit status after a MemoryError (sandbox.py reports it as the memory limit)."""


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> None:
    budget = int(sys.argv[1]) * 1024 * 1024 // 2 if len(sys.argv) > 1 else 256 * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash leaves no core file (with the modules in it)
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else writes to stdout lands on stderr
    protocol_in = sys.stdin.buffer
    os.environ.clear()  # (the server passes a tiny environment already; nothing is left for `opa.runtime`)

    from controlplane_adapters.policies.rego import RegoPrepared, check_module
    from controlplane_domain.policies.entity import PolicyCompileError

    encoder, decoder = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder()
    bundles: OrderedDict[str, RegoPrepared] = OrderedDict()
    ready = encoder.encode({"ready": True})  # started: the time limits count from here
    protocol_out.write(len(ready).to_bytes(4, "big") + ready)
    protocol_out.flush()

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "check":
            try:
                check_module(request["rego"])
            except PolicyCompileError as exc:
                return {"error": {"message": exc.message, "line": exc.line, "column": exc.column}}
            return {"ok": True}
        key = request["key"]
        if request["op"] == "load":
            bundles[key] = RegoPrepared([(str(i), rego) for i, rego in request["modules"]])
            if len(bundles) > KEPT or (len(bundles) > 1 and _resident_bytes() > budget):
                for _ in range(len(bundles) // 2):
                    bundles.popitem(last=False)
            return {"ok": True}
        prepared = bundles.get(key)
        if prepared is None:
            return {"unknown": True}
        bundles.move_to_end(key)
        outcomes = prepared.evaluate(request["input"])
        return {"outcomes": [[list(outcome.deny), outcome.error] for outcome in outcomes]}

    while True:
        header = _read_exactly(protocol_in, 4)
        if header is None:
            return  # the server closed the pipe (stopping, or gone)
        body = _read_exactly(protocol_in, int.from_bytes(header, "big"))
        if body is None:
            return
        try:
            reply = answer(decoder.decode(body))
        except MemoryError:
            os._exit(MEMORY_EXIT)
        except Exception as exc:  # any fault is the request's, told to the server
            reply = {"failed": f"{type(exc).__name__}: {exc}"[:500]}
        frame = encoder.encode(reply)
        protocol_out.write(len(frame).to_bytes(4, "big") + frame)
        protocol_out.flush()


if __name__ == "__main__":
    main()
