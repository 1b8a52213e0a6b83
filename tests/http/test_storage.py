"""Storage over HTTP on every store: upload and download, ETag and 304, ranges (206, 416), HEAD, paths, lists."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from litestar.testing import TestClient

from tests.support import BEFORE_THE_STORE, DEFAULT_ORG, bearer, make_jwt

FILES = "/api/v1/storage/files"
VIEWER = bearer(make_jwt(DEFAULT_ORG, sub="viewer", roles=["viewer"]))


def upload(client: TestClient[Any], path: str, body: bytes, content_type: str | None = None, **headers: str) -> Any:
    more = {**headers, **({"content-type": content_type} if content_type is not None else {})}
    return client.put(f"{FILES}/{path}", content=body, headers=more)


def stored(client: TestClient[Any], path: str, body: bytes, content_type: str = "text/plain") -> dict[str, Any]:
    response = upload(client, path, body, content_type)
    assert response.status_code in (200, 201), response.text
    result: dict[str, Any] = response.json()
    return result


def test_a_file_goes_up_and_comes_back_with_its_media_type_and_hash(client: TestClient[Any]) -> None:
    body = "naïve café\n".encode()
    created = upload(client, "docs/notes.txt", body, "text/plain; charset=utf-8")
    assert created.status_code == 201, created.text
    digest = hashlib.sha256(body).hexdigest()
    file = created.json()
    assert {key: file[key] for key in ("path", "size", "content_type", "sha256")} == {
        "path": "docs/notes.txt", "size": len(body), "content_type": "text/plain; charset=utf-8", "sha256": digest,
    }  # fmt: skip
    assert file["created_at"] == file["updated_at"]
    assert created.headers["etag"] == f'"{digest}"'
    downloaded = client.get(f"{FILES}/docs/notes.txt")
    assert downloaded.status_code == 200
    assert downloaded.content == body
    assert downloaded.headers["content-type"] == "text/plain; charset=utf-8"
    assert downloaded.headers["content-length"] == str(len(body))
    assert downloaded.headers["etag"] == f'"{digest}"'
    assert downloaded.headers["accept-ranges"] == "bytes"


def test_a_second_upload_replaces_the_file_and_answers_200(client: TestClient[Any]) -> None:
    first = stored(client, "a.bin", b"first version")
    replaced = upload(client, "a.bin", b"second", "application/x-thing")
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["created_at"] == first["created_at"]
    assert (replaced.json()["size"], replaced.json()["content_type"]) == (6, "application/x-thing")
    assert client.get(f"{FILES}/a.bin").content == b"second"
    usage = client.get("/api/v1/storage/usage").json()
    assert (usage["files"], usage["bytes_used"]) == (1, 6)


def test_any_media_type_and_bodies_past_the_json_limit_are_taken(client: TestClient[Any]) -> None:
    """The 1 MiB cap and the 415 of JSON routes do not apply to files; no Content-Type is application/octet-stream."""
    big = bytes(range(256)) * 12_288  # 3 MiB
    assert upload(client, "big.bin", big).json()["content_type"] == "application/octet-stream"
    assert client.get(f"{FILES}/big.bin").content == big
    for media_type in ("multipart/form-data; boundary=x", "image/png", "application/json"):
        assert upload(client, "typed", b"{}", media_type).json()["content_type"] == media_type


def test_an_empty_file(client: TestClient[Any]) -> None:
    assert stored(client, "empty", b"")["sha256"] == hashlib.sha256(b"").hexdigest()
    assert client.get(f"{FILES}/empty").content == b""
    assert client.get(f"{FILES}/empty", headers={"range": "bytes=0-"}).status_code == 416


def test_head_answers_the_headers_without_the_body(client: TestClient[Any]) -> None:
    file = stored(client, "h.txt", b"0123456789", "text/csv")
    head = client.head(f"{FILES}/h.txt")
    assert head.status_code == 200
    assert head.content == b""
    assert (head.headers["content-length"], head.headers["content-type"]) == ("10", "text/csv")
    assert head.headers["etag"] == f'"{file["sha256"]}"'
    assert client.head(f"{FILES}/h.txt", headers={"range": "bytes=2-3"}).headers["content-range"] == "bytes 2-3/10"
    assert client.head(f"{FILES}/missing").status_code == 404


def test_if_none_match_answers_304_for_this_version_only(client: TestClient[Any]) -> None:
    tag = f'"{stored(client, "c.txt", b"cached")["sha256"]}"'
    for header in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        response = client.get(f"{FILES}/c.txt", headers={"if-none-match": header})
        assert (response.status_code, response.content, response.headers["etag"]) == (304, b"", tag), header
    assert client.head(f"{FILES}/c.txt", headers={"if-none-match": tag}).status_code == 304
    stale = client.get(f"{FILES}/c.txt", headers={"if-none-match": '"other"'})
    assert (stale.status_code, stale.content) == (200, b"cached")
    stored(client, "c.txt", b"changed")
    assert client.get(f"{FILES}/c.txt", headers={"if-none-match": tag}).content == b"changed"


@pytest.mark.parametrize(
    ("header", "content", "content_range"),
    [
        ("bytes=0-3", b"0123", "bytes 0-3/10"),
        ("bytes=7-", b"789", "bytes 7-9/10"),
        ("bytes=-4", b"6789", "bytes 6-9/10"),
        ("bytes=-40", b"0123456789", "bytes 0-9/10"),
        ("bytes=8-100", b"89", "bytes 8-9/10"),
        ("bytes=9-9", b"9", "bytes 9-9/10"),
    ],
)
def test_a_range_answers_206_with_its_bytes(
    client: TestClient[Any], header: str, content: bytes, content_range: str
) -> None:
    stored(client, "r.txt", b"0123456789")
    response = client.get(f"{FILES}/r.txt", headers={"range": header})
    assert response.status_code == 206, response.text
    assert (response.content, response.headers["content-range"]) == (content, content_range)
    assert response.headers["content-length"] == str(len(content))


@pytest.mark.parametrize("header", ["bytes=10-", "bytes=10-20", "bytes=-0"])
def test_a_range_past_the_end_is_416(client: TestClient[Any], header: str) -> None:
    stored(client, "r.txt", b"0123456789")
    response = client.get(f"{FILES}/r.txt", headers={"range": header})
    assert response.status_code == 416
    assert response.headers["content-range"] == "bytes */10"
    assert response.json()["error"]["code"] == "RANGE_NOT_SATISFIABLE"


@pytest.mark.parametrize("header", ["bytes=0-1,4-5", "items=0-1", "bytes=5-2", "bytes=x-", "bytes=-"])
def test_ranges_this_server_does_not_serve_answer_the_whole_file(client: TestClient[Any], header: str) -> None:
    stored(client, "r.txt", b"0123456789")
    response = client.get(f"{FILES}/r.txt", headers={"range": header})
    assert (response.status_code, response.content) == (200, b"0123456789")


def test_if_range_applies_the_range_to_its_version_only(client: TestClient[Any]) -> None:
    tag = f'"{stored(client, "r.txt", b"0123456789")["sha256"]}"'
    same = client.get(f"{FILES}/r.txt", headers={"range": "bytes=0-1", "if-range": tag})
    assert (same.status_code, same.content) == (206, b"01")
    other = client.get(f"{FILES}/r.txt", headers={"range": "bytes=0-1", "if-range": '"old"'})
    assert (other.status_code, other.content) == (200, b"0123456789")


@pytest.mark.parametrize(
    "raw",
    ["a/%2E%2E/b", "%2E%2E", "a/%00b", "a//b", "a/", "%2Fetc/passwd", "a%5Cb", "a%01b", "%FF%FE", "x" * 1025,
     "/".join(["s"] * 600), "y" * 256],
)  # fmt: skip
@BEFORE_THE_STORE
def test_paths_the_rules_refuse_are_422_and_nothing_is_stored(client: TestClient[Any], raw: str) -> None:
    for method in ("PUT", "GET", "DELETE"):
        response = client.request(method, f"{FILES}/{raw}", content=b"x" if method == "PUT" else None)
        assert response.status_code == 422, (method, raw, response.text)
        assert response.json()["detail"][0]["loc"] == ["path", "path"]
    assert client.get("/api/v1/storage/usage").json()["files"] == 0


def test_paths_are_normalised(client: TestClient[Any]) -> None:
    """`.` segments go, and Unicode is kept composed (NFC): the same name spelled two ways is one file."""
    assert stored(client, "a/%2E/b.txt", b"1")["path"] == "a/b.txt"
    composed = stored(client, "caf%C3%A9", b"composed")  # é
    decomposed = upload(client, "cafe%CC%81", b"decomposed")  # e + combining acute
    assert (decomposed.status_code, decomposed.json()["path"]) == (200, composed["path"])
    assert client.get(f"{FILES}/caf%C3%A9").content == b"decomposed"


def test_delete_removes_the_file(client: TestClient[Any]) -> None:
    stored(client, "gone.txt", b"bye")
    assert client.delete(f"{FILES}/gone.txt").status_code == 204
    assert client.get(f"{FILES}/gone.txt").status_code == 404
    assert client.delete(f"{FILES}/gone.txt").status_code == 404
    assert client.get("/api/v1/storage/usage").json() | {"quota_bytes": 0} == {
        "files": 0, "bytes_used": 0, "quota_bytes": 0
    }  # fmt: skip


def test_the_list_is_in_path_order_paged_and_filtered_by_prefix(client: TestClient[Any]) -> None:
    for path in ("b.txt", "a/2.txt", "a/1.txt", "ab.txt"):
        stored(client, path, path.encode())
    listed = client.get(FILES).json()
    assert [item["path"] for item in listed["items"]] == ["a/1.txt", "a/2.txt", "ab.txt", "b.txt"]
    assert listed["total"] == 4
    page = client.get(FILES, params={"prefix": "a", "limit": 2, "offset": 1}).json()
    assert ([item["path"] for item in page["items"]], page["total"]) == (["a/2.txt", "ab.txt"], 3)
    assert client.get(FILES, params={"prefix": "a/"}).json()["total"] == 2
    assert client.get(FILES, params={"limit": 0}).status_code == 422


def test_a_viewer_reads_but_does_not_write(client: TestClient[Any]) -> None:
    stored(client, "shared.txt", b"read me")
    assert client.get(f"{FILES}/shared.txt", headers=VIEWER).content == b"read me"
    assert client.get(FILES, headers=VIEWER).json()["total"] == 1
    assert upload(client, "shared.txt", b"overwrite", **VIEWER).status_code == 403
    assert client.delete(f"{FILES}/shared.txt", headers=VIEWER).status_code == 403
    assert client.get(f"{FILES}/shared.txt").content == b"read me"


def test_the_document_describes_the_storage_routes(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    item = document["paths"]["/api/v1/storage/files/{path}"]
    assert {item[method]["operationId"] for method in ("put", "get", "head", "delete")} == {
        "putFile", "getFile", "headFile", "deleteFile"
    }  # fmt: skip
    assert all(item[method]["tags"] == ["storage"] for method in ("put", "get", "head", "delete"))
    assert "application/octet-stream" in item["put"]["requestBody"]["content"]
    assert {"200", "201", "413"} <= set(item["put"]["responses"])
    assert {"200", "206", "304", "404", "416"} <= set(item["get"]["responses"])
    assert document["paths"]["/api/v1/storage/usage"]["get"]["operationId"] == "getStorageUsage"
    assert document["paths"]["/api/v1/storage/files"]["get"]["operationId"] == "listFiles"
