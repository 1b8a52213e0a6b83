"""Storage's memory: the real server uploads and downloads one large file (1 GiB by default) while its resident
set (VmRSS, /proc/<pid>/status) is sampled; the figure that matters is the peak's growth over the idle server.

    python -m benchmarks.storage_memory [--mib 1024] [--backend local|s3]

The file is generated on the fly and streamed by httpx (never whole in this process either), then downloaded and
its SHA-256 compared with the upload's. `--backend s3` runs the server against moto's S3 server on loopback."""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from tests.s3 import CREDENTIALS, REGION, moto_server, new_bucket

from benchmarks.run import KEY, free_port, machine, process, rss_kb, server_env, wait_ready

MIB = 1024 * 1024
CHUNK = 256 * 1024


class Sampler:
    """The peak VmRSS of a process (KiB) between `reset` and `peak`, sampled every few milliseconds by a thread."""

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        self.pid = pid
        self.interval = interval
        self.highest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.highest = max(self.highest, rss_kb(self.pid))
            self._stop.wait(self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def reset(self) -> None:
        self.highest = rss_kb(self.pid)

    def peak(self) -> int:
        self.highest = max(self.highest, rss_kb(self.pid))
        return self.highest


def generated(size: int, digest: hashlib._Hash) -> Iterator[bytes]:
    """`size` bytes made as they are sent (each chunk differs), hashed on the way."""
    sent = 0
    block = bytes(range(256)) * (CHUNK // 256)
    while sent < size:
        chunk = (sent.to_bytes(8, "big") + block[8:])[: min(CHUNK, size - sent)]
        digest.update(chunk)
        sent += len(chunk)
        yield chunk


@dataclass
class Figures:
    idle_kib: int
    upload_peak_kib: int
    download_peak_kib: int
    upload_seconds: float
    download_seconds: float


def measure(base: str, pid: int, size: int) -> Figures:
    headers = {"Authorization": f"Bearer {KEY}"}
    url = f"{base}/api/v1/storage/files/bench/large.bin"
    sent, received = hashlib.sha256(), hashlib.sha256()
    with Sampler(pid) as sampler, httpx.Client(headers=headers, timeout=600) as client:
        idle = rss_kb(pid)
        sampler.reset()
        started = time.perf_counter()
        response = client.put(url, content=generated(size, sent), headers={"content-type": "application/x-bench"})
        upload_seconds = time.perf_counter() - started
        assert response.status_code == 201, response.text
        assert response.json()["sha256"] == sent.hexdigest()
        upload_peak = sampler.peak()
        sampler.reset()
        started = time.perf_counter()
        with client.stream("GET", url) as download:
            assert download.status_code == 200
            for chunk in download.iter_raw(CHUNK):
                received.update(chunk)
        download_seconds = time.perf_counter() - started
        assert received.hexdigest() == sent.hexdigest(), "the download differs from the upload"
        download_peak = sampler.peak()
        assert client.delete(url).status_code == 204
    return Figures(idle, upload_peak, download_peak, upload_seconds, download_seconds)


def run(size: int, backend: str, workdir: Path) -> Figures:
    port = free_port()
    env = server_env(f"sqlite+aiosqlite:///{workdir / 'bench.db'}")
    env["CONTROLPLANE_STORAGE_QUOTA_BYTES"] = str(2 * size)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    s3 = moto_server() if backend == "s3" else None
    if s3 is not None:
        endpoint = next(s3)
        env |= {
            "CONTROLPLANE_STORAGE_BACKEND": "s3", "CONTROLPLANE_STORAGE_S3_BUCKET": new_bucket(endpoint),
            "CONTROLPLANE_STORAGE_S3_ENDPOINT_URL": endpoint, "CONTROLPLANE_STORAGE_S3_REGION": REGION,
            "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
            "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
        }  # fmt: skip
    try:
        command = [sys.executable, "-m", "controlplane_http.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
        with process(command, env, workdir / "server.log") as server:
            base = f"http://127.0.0.1:{port}"
            wait_ready(f"{base}/api/health", {"Authorization": f"Bearer {KEY}"}, timeout=120)
            return measure(base, server.pid, size)
    finally:
        if s3 is not None:
            s3.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="the file's size in MiB (default 1024)")
    parser.add_argument("--backend", choices=["local", "s3"], default="local")
    options = parser.parse_args()
    size = options.mib * MIB
    with tempfile.TemporaryDirectory(prefix="storage-bench-") as workdir:
        figures = run(size, options.backend, Path(workdir))
    print(machine())
    print(f"{options.mib} MiB file, {options.backend} backend; server RSS idle {figures.idle_kib / 1024:.1f} MiB")
    for label, peak, seconds in (
        ("upload", figures.upload_peak_kib, figures.upload_seconds),
        ("download", figures.download_peak_kib, figures.download_seconds),
    ):
        growth = (peak - figures.idle_kib) / 1024
        rate = size / MIB / seconds
        print(f"  {label:8}: peak RSS {peak / 1024:.1f} MiB (+{growth:.1f} MiB), {seconds:.1f} s, {rate:.0f} MiB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
