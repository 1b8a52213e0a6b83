"""A real `controlplane serve` process on loopback."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.databases import truncate
from tests.support import JWT_SECRET, PATIENCE, SERVICE_KEY, bearer, wait_for_answer


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def cli(*args: str, env: dict[str, str], cwd: Path) -> list[str]:
    return [sys.executable, "-m", "controlplane_http.cli", *args]


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    database_url: str = ""

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=bearer(SERVICE_KEY), timeout=10)


def start_server(
    tmp_path: Path,
    database_url: str,
    *,
    token: str = SERVICE_KEY,
    port: int | None = None,
    args: Sequence[str] = (),
    **extra_env: str,
) -> Server:
    port = port or free_port()
    env = {
        **os.environ,
        "SERVICE_API_KEY": SERVICE_KEY,
        "SERVICE_JWT_SECRET": JWT_SECRET,
        "CONTROLPLANE_RATE_LIMIT_PER_MINUTE": "100000",
        "CONTROLPLANE_WORKER_RATE_LIMIT_PER_MINUTE": "100000",
        "CONTROLPLANE_DATABASE_URL": database_url,
        **extra_env,
    }
    server = launch(tmp_path, env, token, ["--host", "127.0.0.1", "--port", str(port), *args], port=port)
    server.database_url = database_url
    return server


def launch(
    tmp_path: Path, env: dict[str, str], token: str, args: Sequence[str], *, port: int, timeout: float = 2 * PATIENCE
) -> Server:
    """`controlplane serve *args` with exactly `env`, once its health answers `token`; a server whose start
    failed is stopped, never left running."""
    log = tmp_path / f"server-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            cli("serve", *args, env=env, cwd=tmp_path), env=env, cwd=tmp_path, stdout=sink, stderr=subprocess.STDOUT
        )
    server = Server(f"http://127.0.0.1:{port}", process, log)

    def alive() -> None:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}:\n{log.read_text()}")

    try:
        wait_for_answer(lambda http: http.get(f"{server.url}/api/health", headers=bearer(token)), alive=alive,
                        timeout=timeout)  # fmt: skip
    except BaseException:
        stop_server(server)
        raise
    return server


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=PATIENCE)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[Server]:
    server = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}")
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """The server on SQLite with short heartbeat intervals, leases and keep-alives (FAST)."""
    running = start_server(tmp_path, f"sqlite+aiosqlite:///{tmp_path / 'exec.db'}", **FAST)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`server`, started once a test process for the tests that leave it as they found it for the others: each
    makes its own environment, queue, agents (`make_queue` and `make_agent` name them uniquely) and workers (a
    worker id of its own), and reads only those."""
    directory = tmp_path_factory.mktemp("shared-server")
    running = start_server(directory, f"sqlite+aiosqlite:///{directory / 'exec.db'}", **FAST)
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture
def postgres_server(tmp_path: Path, postgres_url: str) -> Iterator[Server]:
    asyncio.run(truncate(postgres_url))
    server = start_server(tmp_path, postgres_url)
    try:
        yield server
    finally:
        stop_server(server)


@dataclass
class Process:
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = PATIENCE) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)


def spawn(args: list[str], log: Path, env: dict[str, str] | None = None) -> Process:
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, *args], env={**os.environ, **(env or {})}, stdout=sink, stderr=subprocess.STDOUT
        )
    return Process(process, log)


def _fake_llm(directory: Path) -> Iterator[str]:
    port = free_port()
    fake = spawn(["-m", "tests.fakes.openai_server", "--port", str(port)], directory / "fake-llm.log")
    url = f"http://127.0.0.1:{port}/v1"

    try:
        wait_for_answer(lambda http: http.post(f"{url}/chat/completions", json={"model": "m", "messages": []}))
        yield url
    finally:
        fake.stop()


@pytest.fixture
def fake_llm(tmp_path: Path) -> Iterator[str]:
    """The URL of a fake OpenAI-compatible endpoint running as its own process."""
    yield from _fake_llm(tmp_path)


@pytest.fixture(scope="session")
def shared_fake_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`fake_llm`, started once a test process (it answers each request on its own; a test that reads its log of
    requests, `/_requests`, picks its own out)."""
    yield from _fake_llm(tmp_path_factory.mktemp("shared-llm"))


def start_worker(
    tmp_path: Path, server: Server | str, queue_id: str, llm_url: str, name: str, *options: str
) -> Process:
    url = server if isinstance(server, str) else server.url
    return spawn(
        ["-m", "controlplane_http.cli", "worker", "--api-url", url, "--api-key", SERVICE_KEY,
         "--queue-id", queue_id, "--llm-base-url", llm_url, "--worker-id", name, "--wait-seconds", "5", *options],
        tmp_path / f"worker-{name}.log",
    )  # fmt: skip


FAST = {
    "CONTROLPLANE_WORKER_HEARTBEAT_INTERVAL_SECONDS": "1",
    "CONTROLPLANE_LEASE_TIMEOUT_SECONDS": "3",
    "CONTROLPLANE_SSE_KEEPALIVE_SECONDS": "1",
}
