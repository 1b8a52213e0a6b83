"""A queue's `active_workers` (what the dashboard's queues tab shows) drops a worker as soon as it reports
`offline`, on every store, and counts it again when it comes back."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_executions import lease, setup_queue


def active_workers(client: TestClient[Any], queue_id: str) -> int:
    one = client.get(f"/api/v1/worker-queues/{queue_id}").json()["active_workers"]
    listed = [queue for queue in client.get("/api/v1/worker-queues").json()["items"] if queue["id"] == queue_id]
    assert [queue["active_workers"] for queue in listed] == [one], "the list says what the queue says"
    count: int = one
    return count


def beat(client: TestClient[Any], worker_id: str, status: str) -> None:
    sent = client.post(
        "/api/v1/workers/heartbeat", json={"worker_id": worker_id, "environment_name": "e", "status": status}
    )
    assert sent.status_code == 200, sent.text


def test_a_worker_that_reports_offline_leaves_the_count_at_once(client: TestClient[Any]) -> None:
    _, queue_id = setup_queue(client)
    for worker_id in ("w1", "w2"):
        beat(client, worker_id, "active")
        assert lease(client, queue_id, worker_id) is None  # (nothing queued: the worker now polls this queue)
    assert active_workers(client, queue_id) == 2
    beat(client, "w1", "offline")  # no time passes: not three missed intervals, its own word
    assert client.get("/api/v1/workers/w1").json()["status"] == "offline"
    assert active_workers(client, queue_id) == 1
    beat(client, "w1", "idle")
    assert active_workers(client, queue_id) == 2
