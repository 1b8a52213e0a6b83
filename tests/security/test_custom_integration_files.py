"""A custom integration's files: modes are permission bits only (no setuid, setgid or sticky bit), paths are
normalised absolute paths (no empty, '.' or '..' segment, no '%', no control character); anything else is 422
naming the file's field, on create and on PATCH. The OpenAPI document states both rules, and a file stored before
them reaches a worker's lease without its special bits."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from litestar.testing import TestClient

from controlplane_domain.integrations.entity import IntegrationFile
from tests.http.test_agents import assert_validation
from tests.http.test_custom_integrations import PATH, create_custom
from tests.http.test_integrations import resolve

SPECIAL_MODES: list[int | str] = [
    "4755", "2755", "1777", "7777", "04755", "0o4755", "6644", 0o4755, 0o2755, 0o1777, 0o7777, 0o1000,
]  # fmt: skip
BAD_PATHS = [
    "//etc/passwd", "/a//b", "/a/", "/a/./b", "/./a", "/a/.", "/a/../b", "/..", "/a/%2e%2e/b", "/%2F", "/a%00",
    "/a%", "/a\nb", "/a\tb", "/a\x7fb", "/a\x1b[31m",
]  # fmt: skip
GOOD_PATHS = ["/a", "/home/agent/.npmrc", "/a/..b/c..", "/a/.b", "/a b/ü", "/...", "/a/b-c_d.e"]


def test_setuid_setgid_and_sticky_modes_are_422(client: TestClient[Any]) -> None:
    for mode in SPECIAL_MODES:
        response = client.post(PATH, json={"name": "m", "files": [{"path": "/x", "content": "", "mode": mode}]})
        assert_validation(response, ["body", "files", 0, "mode"])
        assert "setuid" in response.json()["error"]["message"], response.text
    kept = create_custom(client, files=[{"path": "/x", "content": "", "mode": "0777"}])
    patched = client.patch(f"{PATH}/{kept['id']}", json={"files": [{"path": "/x", "content": "", "mode": 0o4777}]})
    assert_validation(patched, ["body", "files", 0, "mode"])
    assert client.get(f"{PATH}/{kept['id']}").json()["files"][0]["mode"] == "0777"


def test_paths_must_be_normalised_absolute_paths(client: TestClient[Any]) -> None:
    for index, path in enumerate(BAD_PATHS):
        files = [{"path": "/ok", "content": ""}, {"path": path, "content": ""}]
        assert_validation(client.post(PATH, json={"name": f"p{index}", "files": files}), ["body", "files", 1, "path"])
    body = create_custom(client, files=[{"path": path, "content": ""} for path in GOOD_PATHS])
    assert [file["path"] for file in body["files"]] == GOOD_PATHS
    patched = client.patch(f"{PATH}/{body['id']}", json={"files": [{"path": "/a/../etc/shadow", "content": ""}]})
    assert_validation(patched, ["body", "files", 0, "path"])
    assert len(client.get(f"{PATH}/{body['id']}").json()["files"]) == len(GOOD_PATHS)


def test_the_openapi_document_states_both_rules(client: TestClient[Any]) -> None:
    schema = client.get("/api/openapi.json").json()["components"]["schemas"]["FileIn"]["properties"]
    pattern = re.compile(schema["path"]["pattern"])
    assert all(pattern.search(path) for path in GOOD_PATHS)
    assert not any(pattern.search(path) for path in BAD_PATHS)
    assert schema["path"]["maxLength"] == 4096
    integer, text = schema["mode"]["oneOf"]
    assert (integer["type"], integer["minimum"], integer["maximum"]) == ("integer", 0, 0o777)
    mode = re.compile(text["pattern"])
    assert all(mode.search(good) for good in ("0644", "755", "0o600", "0", "0777"))
    assert not any(mode.search(str(bad)) for bad in SPECIAL_MODES if isinstance(bad, str))


async def _store_files(client: TestClient[Any], integration_id: str, files: list[IntegrationFile]) -> None:
    """Write files straight to the store, as a row written before the rule would hold them."""
    ports = client.app.state["ports"]
    async with ports.uow() as uow:
        stored = await uow.custom_integrations.get("default", integration_id, for_update=True)
        await uow.custom_integrations.update(replace(stored, files=files))
        await uow.commit()


def test_a_file_stored_with_special_bits_reaches_a_lease_without_them(client: TestClient[Any]) -> None:
    tools = create_custom(client, files=[{"path": "/bin/tool", "content": "#!/bin/sh", "mode": "0755"}])
    old = [IntegrationFile("/bin/tool", "#!/bin/sh", 0o4755), IntegrationFile("/tmp/box", "", 0o1777)]
    client.blocking_portal.call(_store_files, client, tools["id"], old)
    resolved = resolve(client, [], [tools["id"]])
    assert [(file.path, file.mode) for file in resolved.files] == [("/bin/tool", 0o755), ("/tmp/box", 0o777)]
