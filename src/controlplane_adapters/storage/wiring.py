"""The blob store the settings name, and what must run when the server stops."""

from __future__ import annotations

import logging
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from controlplane_adapters.secrets.keys import _sqlite_file
from controlplane_adapters.settings.model import MEMORY_URL, Settings
from controlplane_adapters.settings.storage import StorageSettings
from controlplane_adapters.storage.local import LocalBlobStore
from controlplane_domain.storage.ports import BlobStore, Storage

if TYPE_CHECKING:
    from controlplane_adapters.storage.s3 import S3BlobStore

log = logging.getLogger("controlplane.storage")

Hook = Callable[[], Awaitable[None]]
DIRECTORY_SUFFIX = ".storage"
SHARED_DEFAULT = "controlplane-storage"


def s3_store(settings: StorageSettings) -> S3BlobStore:
    """A client of the configured S3-compatible store (path-style addressing when an endpoint is given: what
    MinIO and most other servers expect); credentials from the settings, else boto3's usual chain. (boto3 is
    imported here: a server on the local backend does without its slow imports.)"""
    import boto3
    from botocore.config import Config

    from controlplane_adapters.storage.s3 import S3BlobStore

    client = boto3.session.Session().client(
        "s3",
        endpoint_url=settings.s3_endpoint_url,
        region_name=settings.s3_region,
        aws_access_key_id=settings.s3_access_key_id,
        aws_secret_access_key=settings.s3_secret_access_key,
        aws_session_token=settings.s3_session_token,
        config=Config(
            s3={"addressing_style": "path"} if settings.s3_endpoint_url else None,
            retries={"max_attempts": 3, "mode": "standard"},
            max_pool_connections=32,
        ),
    )
    assert settings.s3_bucket is not None  # (storage_settings refuses s3 without a bucket)
    return S3BlobStore(client, settings.s3_bucket, settings.s3_prefix)


def local_directory(settings: Settings) -> tuple[Path, bool]:
    """The local backend's directory, and whether it is a temporary one (removed at stop)."""
    if settings.storage.directory:
        return Path(settings.storage.directory), False
    if settings.database_url == MEMORY_URL:  # files would outlive the metadata that names them
        return Path(tempfile.gettempdir()) / f"controlplane-storage-{uuid.uuid4().hex}", True  # made on first use
    database = _sqlite_file(settings.database_url)
    if database is not None:
        return Path(database).resolve().with_name(Path(database).name + DIRECTORY_SUFFIX), False
    log.warning("file storage: no CONTROLPLANE_STORAGE_DIR, using ./%s (several nodes need S3)", SHARED_DEFAULT)
    return Path(SHARED_DEFAULT).resolve(), False


def build_storage(settings: Settings) -> tuple[Storage, list[Hook]]:
    """The storage port of the settings, and the hooks to run at stop."""
    blobs: BlobStore
    shutdown: list[Hook] = []
    if settings.storage.backend == "s3":
        blobs = s3_store(settings.storage)
    else:
        directory, temporary = local_directory(settings)
        blobs = LocalBlobStore(directory, durable=settings.storage.durable)
        if temporary:

            async def remove() -> None:
                shutil.rmtree(directory, ignore_errors=True)

            shutdown.append(remove)
    return Storage(blobs=blobs, default_quota_bytes=settings.storage.quota_bytes), shutdown
