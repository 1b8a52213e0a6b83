"""Storage: a viewer's upload is 403 on every path (a file there or not, a path the rules refuse or not), and every
download says `X-Content-Type-Options: nosniff`, with `Content-Disposition: attachment` for every media type but a
short list a browser shows inert (text/plain, application/json, raster images): an uploaded page, SVG or script is
saved by a browser, never rendered in the service's origin."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.http.test_storage import FILES, VIEWER, stored, upload
from tests.support import bearer, make_jwt

MEMBER = bearer(make_jwt("default", sub="member", roles=["member"]))
ATTACHED = [
    "text/html", "text/html; charset=utf-8", "TEXT/HTML", "image/svg+xml", "application/xml", "text/xml",
    "application/xhtml+xml", "text/javascript", "application/javascript", "application/pdf", "text/css",
    "application/octet-stream", "multipart/x-mixed-replace", "application/x-shockwave-flash", "text/plain2",
    "application/vnd.custom+json", "text/vtt",
]  # fmt: skip
INLINE = ["text/plain", "text/plain; charset=utf-8", "application/json", "image/png", "image/jpeg", "IMAGE/GIF"]


def test_a_viewers_put_is_403_whether_or_not_the_path_holds_a_file(client: TestClient[Any]) -> None:
    stored(client, "there.txt", b"kept")
    for path in ("there.txt", "new.txt", "deep/new/file.bin", "a/../b", "a//b"):
        response = upload(client, path, b"viewer's bytes", "text/plain", **VIEWER)
        assert response.status_code == 403, (path, response.text)
        assert response.json()["error"]["code"] == "FORBIDDEN"
    assert client.delete(f"{FILES}/there.txt", headers=VIEWER).status_code == 403
    assert client.delete(f"{FILES}/new.txt", headers=VIEWER).status_code == 404  # (as for anyone: nothing there)
    assert client.get(f"{FILES}/there.txt").content == b"kept"
    assert client.get(f"{FILES}/new.txt").status_code == 404
    assert [item["path"] for item in client.get(FILES).json()["items"]] == ["there.txt"]
    assert upload(client, "new.txt", b"member's", "text/plain", **MEMBER).status_code == 201


def test_another_organizations_file_is_not_reached_by_a_put(client: TestClient[Any]) -> None:
    """A path names a file of the caller's own organization: the same path elsewhere is another file."""
    stored(client, "theirs.txt", b"default's")
    other = bearer(make_jwt("org-other", sub="member", roles=["member"]))
    assert upload(client, "theirs.txt", b"other's", "text/plain", **other).status_code == 201
    assert client.get(f"{FILES}/theirs.txt").content == b"default's"


def test_downloads_are_nosniff_and_attachments_unless_inert(client: TestClient[Any]) -> None:
    for index, content_type in enumerate([*ATTACHED, *INLINE]):
        stored(client, f"dir/f{index}.x", b"<script>alert(1)</script>", content_type)
        for method in ("GET", "HEAD"):
            response = client.request(method, f"{FILES}/dir/f{index}.x")
            assert response.status_code == 200
            assert response.headers["x-content-type-options"] == "nosniff"
            kind = "inline" if content_type in INLINE else "attachment"
            assert response.headers["content-disposition"] == f"{kind}; filename*=UTF-8''f{index}.x", content_type
            assert response.headers["content-security-policy"] == "default-src 'none'; sandbox"
    ranged = client.get(f"{FILES}/dir/f0.x", headers={"range": "bytes=0-3"})
    assert (ranged.status_code, ranged.headers["content-disposition"]) == (206, "attachment; filename*=UTF-8''f0.x")
    assert ranged.headers["x-content-type-options"] == "nosniff"
    viewer = client.get(f"{FILES}/dir/f0.x", headers=VIEWER)
    assert viewer.headers["content-disposition"].startswith("attachment;")


def test_the_file_name_cannot_break_the_header(client: TestClient[Any]) -> None:
    path = "a/we%22ird;name,%250D%250Aset-cookie:x=1%20caf%C3%A9.html"  # (we"ird;name,%0D%0Aset-cookie:... café)
    assert stored(client, path, b"<p>", "text/html")["path"] == 'a/we"ird;name,%0D%0Aset-cookie:x=1 café.html'
    response = client.get(f"{FILES}/{path}")
    assert response.status_code == 200, response.text
    assert response.headers["content-disposition"] == (
        "attachment; filename*=UTF-8''we%22ird%3Bname%2C%250D%250Aset-cookie%3Ax%3D1%20caf%C3%A9.html"
    )
    assert "set-cookie" not in response.headers


def test_the_document_names_the_download_headers(client: TestClient[Any]) -> None:
    document = client.get("/api/openapi.json").json()
    headers = document["paths"]["/api/v1/storage/files/{path}"]["get"]["responses"]["200"]["headers"]
    assert {"x-content-type-options", "content-disposition", "content-security-policy"} <= set(headers)
