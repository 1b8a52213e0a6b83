"""File storage settings from the environment (CONTROLPLANE_STORAGE_*; no YAML keys)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from controlplane_adapters.settings.model import ConfigError
from controlplane_adapters.settings.storage import BACKENDS, MAX_QUOTA_BYTES, StorageSettings
from controlplane_adapters.settings.values import parse_int

_S3_TEXT = {
    "CONTROLPLANE_STORAGE_S3_BUCKET": "s3_bucket",
    "CONTROLPLANE_STORAGE_S3_ENDPOINT_URL": "s3_endpoint_url",
    "CONTROLPLANE_STORAGE_S3_REGION": "s3_region",
    "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": "s3_access_key_id",
    "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY": "s3_secret_access_key",
}


def storage_settings(env: Mapping[str, str], settings: StorageSettings | None = None) -> StorageSettings:
    """`settings` (the defaults) with the CONTROLPLANE_STORAGE_* variables applied and checked."""
    settings = settings or StorageSettings()
    if value := env.get("CONTROLPLANE_STORAGE_BACKEND"):
        if value.strip().lower() not in BACKENDS:
            raise ConfigError(f"CONTROLPLANE_STORAGE_BACKEND must be one of {', '.join(BACKENDS)}, got {value!r}")
        settings = replace(settings, backend=value.strip().lower())
    if value := env.get("CONTROLPLANE_STORAGE_DIR"):
        settings = replace(settings, directory=value)
    if (value := env.get("CONTROLPLANE_STORAGE_QUOTA_BYTES")) is not None:
        quota = parse_int("CONTROLPLANE_STORAGE_QUOTA_BYTES", value, minimum=0, maximum=MAX_QUOTA_BYTES)
        settings = replace(settings, quota_bytes=quota)
    given: dict[str, str] = {attribute: env[name] for name, attribute in _S3_TEXT.items() if env.get(name)}
    settings = replace(settings, **given)  # type: ignore[arg-type]  # (every one of them a text field)
    if (value := env.get("CONTROLPLANE_STORAGE_S3_PREFIX")) is not None:
        prefix = value.strip("/")
        settings = replace(settings, s3_prefix=f"{prefix}/" if prefix else "")
    if (settings.s3_access_key_id is None) != (settings.s3_secret_access_key is None):
        raise ConfigError(
            "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID and CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY go together"
            " (neither: boto3's usual credentials)"
        )
    if settings.backend == "s3" and not settings.s3_bucket:
        raise ConfigError("CONTROLPLANE_STORAGE_BACKEND=s3 needs CONTROLPLANE_STORAGE_S3_BUCKET")
    return settings
