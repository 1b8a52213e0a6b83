"""Custom integrations over HTTP, on every store: CRUD, env var names, secret names that must exist, files (paths,
modes, 1 MiB in all), setup commands, 409, 404 across organizations, 403 for viewers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from tests.conftest import build_test_app
from tests.http.test_agents import assert_validation
from tests.http.test_secrets import create_secret
from tests.support import SERVICE_KEY, bearer, make_jwt

FIELDS = {
    "id", "organization_id", "name", "description", "env_vars", "secret_names", "files", "setup_commands", "enabled",
    "created_at", "updated_at",
}  # fmt: skip
PATH = "/api/v1/custom-integrations"


def create_custom(client: TestClient[Any], name: str = "tools", **fields: Any) -> dict[str, Any]:
    response = client.post(PATH, json={"name": name, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_create_get_list_patch_delete(client: TestClient[Any], clock: ManualClock) -> None:
    create_secret(client, "NPM_TOKEN")
    body = create_custom(
        client, description="node tooling", env_vars={"NODE_ENV": "production"}, secret_names=["NPM_TOKEN"],
        files=[{"path": "/home/agent/.npmrc", "content": "always-auth=true\n", "mode": "600"}],
        setup_commands=["npm ci", "npm run build"],
    )  # fmt: skip
    assert set(body) == FIELDS
    assert body["files"] == [{"path": "/home/agent/.npmrc", "content": "always-auth=true\n", "mode": "0600"}]
    assert (body["secret_names"], body["setup_commands"], body["enabled"]) == (["NPM_TOKEN"], ["npm ci",
                                                                               "npm run build"], True)  # fmt: skip
    assert client.get(f"{PATH}/{body['id']}").json() == body
    clock.advance(1)
    minimal = create_custom(client, "minimal")
    assert (minimal["description"], minimal["env_vars"], minimal["files"]) == (None, {}, [])
    page = client.get(PATH, params={"limit": 1, "offset": 1}).json()
    assert (page["total"], [item["name"] for item in page["items"]]) == (2, ["minimal"])
    clock.advance(1)
    patched = client.patch(f"{PATH}/{body['id']}", json={"enabled": False, "files": []}).json()
    assert (patched["enabled"], patched["files"], patched["env_vars"]) == (False, [], {"NODE_ENV": "production"})
    assert patched["updated_at"] > body["updated_at"]
    assert client.get(f"{PATH}/{body['id']}").json() == patched
    assert client.delete(f"{PATH}/{body['id']}").status_code == 204
    assert client.get(f"{PATH}/{body['id']}").status_code == 404
    assert client.delete(f"{PATH}/{body['id']}").status_code == 404


def test_modes_are_octal_strings_or_integers(client: TestClient[Any]) -> None:
    given = [("644", "0644"), ("0755", "0755"), ("0o600", "0600"), (420, "0644"), (0, "0000"), (511, "0777")]
    files = [{"path": f"/f{index}", "content": "", "mode": mode} for index, (mode, _) in enumerate(given)]
    body = create_custom(client, files=files)
    assert [file["mode"] for file in body["files"]] == [shown for _, shown in given]
    assert create_custom(client, "default", files=[{"path": "/x", "content": "y"}])["files"][0]["mode"] == "0644"
    for bad in ("999", "rwx", "", "0o", 4096, 512, "1000", -1, True, "12345"):  # (special bits: tests/security)
        response = client.post(PATH, json={"name": "m", "files": [{"path": "/x", "content": "", "mode": bad}]})
        assert response.status_code == 422, (bad, response.text)
        assert response.json()["detail"][0]["loc"][:3] == ["body", "files", 0]


def test_paths_are_absolute_without_dot_dot_or_nul_and_given_once(client: TestClient[Any]) -> None:
    for bad in ("relative/path", "/etc/../passwd", "/..", "/", "//", "/" + "a" * 4096):
        response = client.post(PATH, json={"name": "p", "files": [{"path": bad, "content": ""}]})
        assert_validation(response, ["body", "files", 0, "path"])
    nul = client.post(PATH, json={"name": "p", "files": [{"path": "/a/\x00b", "content": ""}]})
    assert nul.status_code == 422  # (every body is: the app refuses NUL in any text; the domain checks it too)
    twice = [{"path": "/a", "content": "1"}, {"path": "/a", "content": "2"}]
    assert_validation(client.post(PATH, json={"name": "p", "files": twice}), ["body", "files", 1, "path"])
    fine = create_custom(client, files=[{"path": "/a/..b/c..", "content": ""}, {"path": "/a/.b", "content": ""}])
    assert [file["path"] for file in fine["files"]] == ["/a/..b/c..", "/a/.b"]  # ("/a/./b": tests/security)
    patched = client.patch(f"{PATH}/{fine['id']}", json={"files": [{"path": "x", "content": ""}]})
    assert_validation(patched, ["body", "files", 0, "path"])


def test_files_hold_at_most_one_mib_in_all(tmp_path: Path) -> None:
    app = build_test_app("memory", tmp_path, ManualClock(), max_body_bytes=4 * 1024 * 1024)
    with TestClient(app) as client:
        client.headers.update(bearer(SERVICE_KEY))
        half = "x" * (512 * 1024)
        exact = [{"path": "/a", "content": half}, {"path": "/b", "content": half}]
        assert create_custom(client, files=exact)["files"][1]["content"] == half
        over = [{"path": "/a", "content": half}, {"path": "/b", "content": half + "é"}]
        assert_validation(client.post(PATH, json={"name": "big", "files": over}), ["body", "files", 1, "content"])


def test_env_vars_secret_names_and_setup_commands_are_checked(client: TestClient[Any]) -> None:
    for name in ("1ABC", "with-dash", "has space", "", "é"):
        response = client.post(PATH, json={"name": "e", "env_vars": {name: "v"}})
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"][:2] == ["body", "env_vars"]
    assert create_custom(client, "ok", env_vars={"_a1": "", "B": "x"})["env_vars"] == {"_a1": "", "B": "x"}
    create_secret(client, "KNOWN")
    assert_validation(client.post(PATH, json={"name": "s", "secret_names": ["KNOWN", "UNKNOWN"]}),
                      ["body", "secret_names", 1])  # fmt: skip
    assert_validation(client.post(PATH, json={"name": "s", "secret_names": ["bad name"]}), ["body", "secret_names", 0])
    other = client.post("/api/v1/secrets", json={"name": "THEIRS", "value": "v"}, headers=bearer(make_jwt("org-o")))
    assert other.status_code == 201
    assert_validation(client.post(PATH, json={"name": "s", "secret_names": ["THEIRS"]}), ["body", "secret_names", 0])
    body = create_custom(client, "s", secret_names=["KNOWN", "KNOWN"])
    assert body["secret_names"] == ["KNOWN"]
    assert_validation(
        client.patch(f"{PATH}/{body['id']}", json={"secret_names": ["NOPE"]}), ["body", "secret_names", 0]
    )
    assert_validation(client.post(PATH, json={"name": "c", "setup_commands": ["ok", "  "]}),
                      ["body", "setup_commands", 1])  # fmt: skip
    assert client.post(PATH, json={"name": "c", "surprise": 1}).status_code == 422
    assert_validation(client.post(PATH, json={"description": "no name"}), ["body", "name"])


def test_names_are_unique_organizations_apart_and_viewers_read_only(client: TestClient[Any]) -> None:
    first = create_custom(client, "tools")
    clash = client.post(PATH, json={"name": "tools"})
    assert (clash.status_code, clash.json()["error"]["details"]["field"]) == (409, "name")
    second = create_custom(client, "other")
    assert client.patch(f"{PATH}/{second['id']}", json={"name": "tools"}).status_code == 409
    other_org = bearer(make_jwt("org-other"))
    for method in ("GET", "PATCH", "DELETE"):
        body = {"enabled": False} if method == "PATCH" else None
        response = client.request(method, f"{PATH}/{first['id']}", json=body, headers=other_org)
        assert response.status_code == 404, (method, response.text)
    assert client.post(PATH, json={"name": "tools"}, headers=other_org).status_code == 201
    viewer = bearer(make_jwt("default", roles=["viewer"]))
    assert client.get(PATH, headers=viewer).json()["total"] == 2
    assert client.get(f"{PATH}/{first['id']}", headers=viewer).json() == first
    for response in (
        client.post(PATH, json={"name": "v"}, headers=viewer),
        client.patch(f"{PATH}/{first['id']}", json={"enabled": False}, headers=viewer),
        client.delete(f"{PATH}/{first['id']}", headers=viewer),
    ):
        assert response.status_code == 403, response.text
    assert client.get(f"{PATH}/{first['id']}").json() == first
