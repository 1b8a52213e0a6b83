"""The compiled policies each node caches per organization: an organization without policies is decided without a
read, and a change on this node or another reaches the next guarded action (the bus: Postgres NOTIFY)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_adapters.policies.rego import RegoPolicyEngine
from controlplane_domain.policies.cache import CHANGED, PolicyCache
from controlplane_domain.policies.entity import Action, Enforcement, Policy
from tests.conftest import build_test_app, database_url
from tests.http.test_agents import create_agent
from tests.http.test_executions import setup_queue
from tests.http.test_policies import FORBIDDEN_WORD, create_policy, execute_status
from tests.support import SERVICE_KEY, bearer, wait_until


@pytest.mark.postgres
def test_a_policy_changed_on_another_node_decides_this_ones_next_execute(
    tmp_path: Path, clock: ManualClock, request: pytest.FixtureRequest
) -> None:
    url = database_url("postgres", tmp_path, request)
    with (
        TestClient(build_test_app("postgres", tmp_path, clock, url)) as here,
        TestClient(build_test_app("postgres", tmp_path, clock, url)) as there,
    ):
        for node in (here, there):
            node.headers.update(bearer(SERVICE_KEY))
        _, queue = setup_queue(here)
        agent = create_agent(here)["id"]
        for _ in range(2):  # the second is decided knowing the organization has no policy
            assert execute_status(here, agent, queue, "password").status_code == 201
        policy = create_policy(there, "prompts", FORBIDDEN_WORD, ["execute"])
        wait_until(lambda: execute_status(here, agent, queue, "password").status_code == 403)
        patched = there.patch(f"/api/v1/policies/{policy['id']}", json={"enforcement": "audit"})
        assert patched.status_code == 200
        wait_until(lambda: execute_status(here, agent, queue, "password").status_code == 201)
        there.patch(f"/api/v1/policies/{policy['id']}", json={"enforcement": "enforce"})
        wait_until(lambda: execute_status(here, agent, queue, "password").status_code == 403)
        assert there.delete(f"/api/v1/policies/{policy['id']}").status_code == 204
        wait_until(lambda: execute_status(here, agent, queue, "password").status_code == 201)
        # each node's decisions reach the shared log (this node's are written before it answers)
        wait_until(lambda: there.get("/api/v1/policy-decisions").json()["total"] >= 3)


def _policy(policy_id: str, rego: str = FORBIDDEN_WORD) -> Policy:
    now = ManualClock().now()
    return Policy(
        id=policy_id, organization_id="org", name=policy_id, description=None, rego=rego, enabled=True,
        enforcement=Enforcement.ENFORCE, actions=(Action.EXECUTE,), created_at=now, updated_at=now,
    )  # fmt: skip


class CountingEngine(RegoPolicyEngine):
    def __init__(self) -> None:
        self.prepared = 0

    def prepare(self, policies: Any) -> Any:
        self.prepared += 1
        return super().prepare(policies)


async def test_a_read_in_flight_across_a_change_is_used_once_not_remembered() -> None:
    bus = LocalEventBus()
    engine = CountingEngine()
    cache = PolicyCache(engine, bus)
    generation = cache.generation
    await bus.publish(CHANGED)  # a policy changed while the read was in flight
    guards = cache.learned("org", generation, [_policy("a")])
    assert set(guards) == {Action.EXECUTE}
    assert cache.known("org") is None
    cache.learned("org", cache.generation, [])
    assert cache.known("org") == {}  # known to have no policy: decided without a read
    await bus.publish(CHANGED)
    assert cache.known("org") is None


async def test_compiled_policies_outlive_another_organizations_change() -> None:
    bus = LocalEventBus()
    engine = CountingEngine()
    cache = PolicyCache(engine, bus)
    first = cache.learned("org", cache.generation, [_policy("a")])
    await bus.publish(CHANGED)  # another organization's policy changed: this one is read again, not compiled
    again = cache.learned("org", cache.generation, [_policy("a")])
    assert again[Action.EXECUTE].prepared is first[Action.EXECUTE].prepared
    assert engine.prepared == 1
    changed = cache.learned("org", cache.generation, [_policy("a", FORBIDDEN_WORD.replace("exploit", "leak"))])
    assert changed[Action.EXECUTE].prepared is not first[Action.EXECUTE].prepared
    assert engine.prepared == 2
