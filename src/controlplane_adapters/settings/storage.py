"""File storage settings: the backend, its place, and the default quota (read by `storage_env.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field

BACKENDS = ("local", "s3")
DEFAULT_QUOTA_BYTES = 10 * 1024**3
MAX_QUOTA_BYTES = 2**63 - 1


@dataclass(frozen=True, slots=True)
class StorageSettings:
    backend: str = "local"
    """CONTROLPLANE_STORAGE_BACKEND: `local` (a directory) or `s3` (any S3-compatible store)."""
    directory: str | None = None
    """CONTROLPLANE_STORAGE_DIR: the local backend's directory (default: beside the SQLite file, `<file>.storage`;
    `./controlplane-storage` on Postgres; a temporary directory, removed at stop, on `memory://`)."""
    quota_bytes: int = DEFAULT_QUOTA_BYTES
    """CONTROLPLANE_STORAGE_QUOTA_BYTES: an organization's quota unless its settings give its own."""
    s3_bucket: str | None = None
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: str | None = field(default=None, repr=False)
    s3_session_token: str | None = field(default=None, repr=False)
    """boto3's AWS_SESSION_TOKEN, taken with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY out of the environment
    at start (settings/environment.py)."""
    s3_prefix: str = ""
    durable: bool = True
    """Whether the local backend syncs files to disk before a row names them (tests may turn it off)."""
