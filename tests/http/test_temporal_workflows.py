"""Background workflows over HTTP, on every store: workflow runs and job firings listed in one shape newest first,
filtered by type and by status (one vocabulary), read one by one, and cancelled."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.http.test_agents import assert_validation, create_agent
from tests.http.test_executions import setup_queue
from tests.http.test_jobs import create_job
from tests.http.test_workflows import create_workflow, step, work
from tests.support import bearer, make_jwt

FIELDS = {"id", "type", "status", "started_at", "finished_at", "links"}
URL = "/api/v1/temporal-workflows"


def listed(client: TestClient[Any], query: str = "") -> dict[str, Any]:
    response = client.get(f"{URL}{query}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def ids(body: dict[str, Any]) -> list[str]:
    return [item["id"] for item in body["items"]]


def setup(client: TestClient[Any], clock: ManualClock) -> dict[str, Any]:
    """A workflow run, then an agent job's firing, then a workflow job's firing, then a skipped firing."""
    agent = create_agent(client, "bg-agent")
    _, queue_id = setup_queue(client, "bg-queue")
    workflow = create_workflow(client, [step("only", agent["id"], "go")], "bg-flow")
    run = client.post(f"/api/v1/workflows/{workflow['id']}/runs", json={"worker_queue_id": queue_id, "input": {}})
    assert run.status_code == 201, run.text
    clock.advance(1)
    agent_job = create_job(client, "agent-job", target={"agent_id": agent["id"]}, worker_queue_id=queue_id,
                           overlap="skip")  # fmt: skip
    fired = client.post(f"/api/v1/jobs/{agent_job['id']}/trigger").json()
    clock.advance(1)
    flow_job = create_job(client, "flow-job", target={"workflow_id": workflow["id"]}, worker_queue_id=queue_id)
    flow_fired = client.post(f"/api/v1/jobs/{flow_job['id']}/trigger").json()
    clock.advance(1)
    skipped = client.post(f"/api/v1/jobs/{agent_job['id']}/trigger").json()
    assert skipped["status"] == "skipped"
    return {"workflow": workflow, "run": run.json(), "fired": fired, "flow_fired": flow_fired, "skipped": skipped,
            "agent_job": agent_job, "queue_id": queue_id}  # fmt: skip


def test_every_long_running_run_in_one_shape_newest_first(client: TestClient[Any], clock: ManualClock) -> None:
    made = setup(client, clock)
    body = listed(client)
    assert (body["total"], body["limit"], body["offset"]) == (5, 50, 0)
    flow_run_id = made["flow_fired"]["workflow_run_id"]  # the workflow job's run is listed too, at the same time
    expected = [made["skipped"]["id"], made["fired"]["id"], made["run"]["id"]]
    assert [i for i in ids(body) if i not in (made["flow_fired"]["id"], flow_run_id)] == expected
    assert set(ids(body)[1:3]) == {made["flow_fired"]["id"], flow_run_id}
    assert all(set(item) == FIELDS for item in body["items"])
    by_id = {item["id"]: item for item in body["items"]}
    skipped, flow_fired, fired, run = (by_id[made[key]["id"]] for key in ("skipped", "flow_fired", "fired", "run"))
    assert by_id[flow_run_id]["type"] == "workflow_run"
    assert (run["type"], run["status"], run["finished_at"]) == ("workflow_run", "running", None)
    assert run["links"] == {
        "self": f"{URL}/{run['id']}",
        "workflow_run": f"/api/v1/workflow-runs/{run['id']}",
        "workflow": f"/api/v1/workflows/{made['workflow']['id']}",
    }
    assert (fired["type"], fired["status"]) == ("job_run", "pending")  # its execution is queued
    assert fired["links"]["execution"] == f"/api/v1/executions/{made['fired']['execution_id']}"
    assert fired["links"]["job"] == f"/api/v1/jobs/{made['agent_job']['id']}"
    assert (flow_fired["status"], flow_fired["links"]["workflow_run"]) == (
        "running",
        f"/api/v1/workflow-runs/{made['flow_fired']['workflow_run_id']}",
    )
    assert (skipped["status"], skipped["finished_at"]) == ("skipped", skipped["started_at"])
    assert client.get(f"{URL}/{fired['id']}").json() == fired
    assert client.get(f"{URL}/{run['id']}").json() == run
    window = listed(client, "?limit=2&offset=3")
    assert (window["total"], ids(window)) == (5, expected[1:3])


def test_filters_by_type_and_by_status(client: TestClient[Any], clock: ManualClock) -> None:
    made = setup(client, clock)
    flow_run_id = made["flow_fired"]["workflow_run_id"]
    assert ids(listed(client, "?type=workflow_run")) == [flow_run_id, made["run"]["id"]]
    jobs = listed(client, "?type=job_run")
    assert (jobs["total"], len(jobs["items"])) == (3, 3)
    assert ids(listed(client, "?status=skipped")) == [made["skipped"]["id"]]
    assert ids(listed(client, "?status=pending")) == [made["fired"]["id"]]
    running = ids(listed(client, "?status=running"))
    assert (set(running[:2]), running[2:]) == ({made["flow_fired"]["id"], flow_run_id}, [made["run"]["id"]])
    assert ids(listed(client, "?status=running&type=job_run")) == [made["flow_fired"]["id"]]
    assert listed(client, "?status=succeeded")["total"] == 0
    while work(client, made["queue_id"]) is not None:  # every queued execution completes
        pass
    assert set(ids(listed(client, "?status=succeeded"))) == {
        made["run"]["id"], made["fired"]["id"], made["flow_fired"]["id"], flow_run_id
    }  # fmt: skip
    finished = client.get(f"{URL}/{made['fired']['id']}").json()
    assert finished["finished_at"] is not None
    assert_validation(client.get(f"{URL}?status=done"), ["query", "status"])
    assert_validation(client.get(f"{URL}?type=plan"), ["query", "type"])
    assert_validation(client.get(f"{URL}?limit=0"), ["query", "limit"])


def test_cancel_each_kind_and_409_once_finished(client: TestClient[Any], clock: ManualClock) -> None:
    made = setup(client, clock)
    for key in ("run", "fired", "flow_fired"):
        response = client.post(f"{URL}/{made[key]['id']}/cancel")
        assert response.status_code == 200, response.text
        assert response.json()["status"] == "cancelled"
        again = client.post(f"{URL}/{made[key]['id']}/cancel")
        assert again.status_code == 409
        assert again.json()["error"]["code"] == "CONFLICT"
    assert client.get(f"/api/v1/workflow-runs/{made['run']['id']}").json()["status"] == "cancelled"
    assert client.get(f"/api/v1/executions/{made['fired']['execution_id']}").json()["status"] == "cancelled"
    flow_run = client.get(f"/api/v1/workflow-runs/{made['flow_fired']['workflow_run_id']}").json()
    assert flow_run["status"] == "cancelled"
    assert client.post(f"{URL}/{made['skipped']['id']}/cancel").status_code == 409


def test_unknown_ids_roles_and_other_organizations(
    client: TestClient[Any], clock: ManualClock, other_org: dict[str, str]
) -> None:
    made = setup(client, clock)
    nobody = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"{URL}/{nobody}").status_code == 404
    assert client.post(f"{URL}/{nobody}/cancel").status_code == 404
    assert client.get(URL, headers=other_org).json()["total"] == 0
    for key in ("run", "fired"):
        assert client.get(f"{URL}/{made[key]['id']}", headers=other_org).status_code == 404
        assert client.post(f"{URL}/{made[key]['id']}/cancel", headers=other_org).status_code == 404
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(URL, headers=viewer).json()["total"] == 5
    assert client.get(f"{URL}/{made['run']['id']}", headers=viewer).status_code == 200
    assert client.post(f"{URL}/{made['run']['id']}/cancel", headers=viewer).status_code == 403
    assert client.get(f"{URL}/{made['run']['id']}").json()["status"] == "running"
