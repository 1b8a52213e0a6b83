"""The floor under one event's fan-out: the system calls alone, one `send` a stream on loopback TCP.

An SSE event goes to each of its streams by one write on that stream's socket; on loopback the kernel runs the
receiver's side of TCP inside the sender's call. This measures what those calls cost on the machine, with no
server, no framework and no Python beyond a loop: `pairs` connected sockets, one frame the size of an execution
event sent on each in turn, `rounds` times (each read back between rounds, untimed). The time of one round is the
least a single thread can take to deliver one event to that many streams; `--threads` spreads the sends over
threads (each call gives the interpreter lock back). Figures in docs/benchmarks.md.

    python -m benchmarks.send_floor --pairs 5000 --rounds 5
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time

FRAME = b"id: 1\nevent: execution.event\ndata: " + b"x" * 160 + b"\n\n"  # about an event's size


def _pairs(count: int) -> tuple[list[socket.socket], list[socket.socket]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(count)
    port = listener.getsockname()[1]
    senders, receivers = [], []
    for _ in range(count):
        receivers.append(socket.create_connection(("127.0.0.1", port)))
        senders.append(listener.accept()[0])
    listener.close()
    return senders, receivers


def _send_all(sockets: list[socket.socket]) -> None:
    for each in sockets:
        each.send(FRAME)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5000, help="streams (two descriptors each)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    arguments = parser.parse_args()
    senders, receivers = _pairs(arguments.pairs)
    rounds = []
    try:
        for _ in range(arguments.rounds):
            parts = [senders[i :: arguments.threads] for i in range(arguments.threads)]
            threads = [threading.Thread(target=_send_all, args=(part,)) for part in parts]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            rounds.append(time.perf_counter() - started)
            for receiver in receivers:
                receiver.recv(4096)
    finally:
        for each in senders + receivers:
            each.close()
    median = statistics.median(rounds)
    per_send = median / arguments.pairs
    print(f"{arguments.pairs} sends, {arguments.threads} thread(s): rounds "
          f"{', '.join(f'{r * 1000:.1f}' for r in rounds)} ms; median {median * 1000:.1f} ms, "
          f"{per_send * 1e6:.2f} us a send; 10,000 streams: {per_send * 10_000 * 1000:.0f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
