"""The generic services (controlplane_domain/crud.py) on the memory store: what an area's use cases get from them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.memory.store import MemoryStore
from controlplane_domain import crud
from controlplane_domain.context_graph import usecases as graph
from controlplane_domain.errors import NotFound, ValidationFailed
from controlplane_domain.paging import PageRequest
from controlplane_domain.patching import UNSET
from controlplane_domain.ports import Ports
from controlplane_domain.projects import usecases as projects
from controlplane_domain.webhooks.usecases import WEBHOOKS

ORG = "org-crud"


def _ports() -> Ports:
    return Ports(
        uow=MemoryStore().unit_of_work, clock=ManualClock(datetime(2026, 1, 1, tzinfo=UTC)), ids=UuidGenerator()
    )


async def test_new_and_patched_convert_as_the_entity_holds_its_fields() -> None:
    ports = _ports()
    labels = ["a", "b"]
    node = await graph.create_node(ports, ORG, graph.CreateNode(labels=labels, properties={"k": 1}))  # type: ignore[arg-type]
    assert node.labels == ("a", "b")
    assert (node.id, node.organization_id, node.created_at) == (node.id, ORG, node.updated_at)
    properties = {"k": 2}
    updated = crud.patched(node, graph.UpdateNode(properties=properties), datetime(2026, 1, 2, tzinfo=UTC))
    assert updated.properties is properties  # an update keeps the very value given
    assert updated.labels == ("a", "b")
    assert updated.updated_at == datetime(2026, 1, 2, tzinfo=UTC)
    assert crud.patched(node, graph.UpdateNode(labels=UNSET), node.updated_at) == node


async def test_get_list_patch_and_delete_through_an_area() -> None:
    ports = _ports()
    project = await projects.create_project(ports, ORG, projects.CreateProject(name="p", key="PK"))
    assert (await projects.get_project(ports, ORG, project.project.id)).project == project.project
    with pytest.raises(NotFound):
        await projects.get_project(ports, "another", project.project.id)
    with pytest.raises(ValidationFailed):
        await projects.update_project(ports, ORG, project.project.id, projects.UpdateProject(key="lower"))
    page = await crud.list_page(projects.PROJECTS, ports, ORG, PageRequest(limit=10, offset=0))
    assert [p.id for p in page.items] == [project.project.id]
    await projects.delete_project(ports, ORG, project.project.id)
    with pytest.raises(NotFound):
        await projects.delete_project(ports, ORG, project.project.id)


async def test_an_id_that_cannot_be_an_objects_is_not_found_without_a_read() -> None:
    ports = _ports()
    with pytest.raises(NotFound):
        await crud.get(WEBHOOKS, ports, ORG, "not-a-uuid")
