"""Storage's rules without a server: paths, media types, and the settings (where the bytes go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError, Settings
from controlplane_adapters.settings.storage import StorageSettings
from controlplane_adapters.storage.local import LocalBlobStore
from controlplane_adapters.storage.s3 import S3BlobStore
from controlplane_adapters.storage.wiring import build_storage, local_directory
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.storage.entity import blob_key, check_content_type, normalise_path


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("a/b.txt", "a/b.txt"),
        ("./a/./b", "a/b"),
        ("cafe\u0301", "caf\u00e9"),
        ("a b/ü", "a b/ü"),
        ("..a/b..", "..a/b.."),
    ],
)
def test_paths_are_normalised(raw: str, normal: str) -> None:
    assert normalise_path(raw) == normal


@pytest.mark.parametrize(
    "raw", ["", ".", "./", "..", "a/../b", "/a", "a//b", "a/", "a\x00b", "a\nb", "a\\b", "\x7f", "x" * 256, "é" * 513]
)
def test_paths_the_rules_refuse(raw: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        normalise_path(raw)
    assert (refused.value.field, refused.value.location) == ("path", "path")


def test_media_types() -> None:
    assert check_content_type(None) == check_content_type("  ") == "application/octet-stream"
    assert check_content_type("text/plain; charset=utf-8") == "text/plain; charset=utf-8"
    for bad in ("text", "text/", "a/b/c", "text/plain\x00", "x/" + "y" * 300):
        with pytest.raises(ValidationFailed):
            check_content_type(bad)


def test_blob_keys_are_fresh_and_opaque() -> None:
    assert blob_key("0F8D2A1C-1111-4222-8333-444455556666") == "0f/0f8d2a1c111142228333444455556666"


def test_storage_settings_from_the_environment() -> None:
    settings = load_settings({
        "CONTROLPLANE_STORAGE_BACKEND": "S3", "CONTROLPLANE_STORAGE_S3_BUCKET": "files",
        "CONTROLPLANE_STORAGE_S3_ENDPOINT_URL": "http://127.0.0.1:9000", "CONTROLPLANE_STORAGE_S3_PREFIX": "/cp/",
        "CONTROLPLANE_STORAGE_QUOTA_BYTES": "0", "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY": "hidden",
        "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": "id",
    })  # fmt: skip
    storage = settings.storage
    assert (storage.backend, storage.s3_bucket, storage.s3_prefix, storage.quota_bytes) == ("s3", "files", "cp/", 0)
    assert "hidden" not in repr(settings)
    assert isinstance(build_storage(settings)[0].blobs, S3BlobStore)
    assert load_settings({}).storage == StorageSettings()


@pytest.mark.parametrize(
    "env",
    [{"CONTROLPLANE_STORAGE_BACKEND": "ftp"}, {"CONTROLPLANE_STORAGE_BACKEND": "s3"},
     {"CONTROLPLANE_STORAGE_QUOTA_BYTES": "-1"}, {"CONTROLPLANE_STORAGE_QUOTA_BYTES": "lots"},
     {"CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": "id without its secret"}],
)  # fmt: skip
def test_storage_settings_that_stop_the_start(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="CONTROLPLANE_STORAGE"):
        load_settings(env)


def test_where_the_local_backend_keeps_files(tmp_path: Path) -> None:
    beside = local_directory(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'cp.db'}"))
    assert beside == (tmp_path / "cp.db.storage", False)
    named = Settings(database_url="memory://", storage=StorageSettings(directory=str(tmp_path / "files")))
    assert local_directory(named) == (tmp_path / "files", False)
    directory, temporary = local_directory(Settings(database_url="memory://"))
    assert temporary
    assert not directory.exists()
    storage, shutdown = build_storage(Settings(database_url="memory://"))
    assert isinstance(storage.blobs, LocalBlobStore)
    assert len(shutdown) == 1
