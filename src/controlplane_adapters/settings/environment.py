"""The server's secrets out of its own environment once its settings are read (issue #31).

Whatever the server runs (a policy's evaluation reading `opa.runtime().env`, a library, a child process) would
otherwise find the JWT secret, the API key, the secrets key, the database's password in `os.environ`. Once the
settings hold them, `withdraw_secrets` folds the credentials the server would have read from the environment
later (libpq's `PGPASSWORD`, boto3's `AWS_*`) into the settings, then removes from the environment every variable
that holds a secret: those named below, and any other whose value contains a configured secret (a YAML file's
`${NAME}` reference names variables of its choosing). The server's worker processes (`serve --workers N`) get
the settings through their start-up pipe (cli.py), never through the environment.
"""

from __future__ import annotations

import contextlib
from collections.abc import MutableMapping
from dataclasses import replace
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from controlplane_adapters.secrets.keys import key_file_path
from controlplane_adapters.settings.model import MEMORY_URL, Settings

# Variables holding a secret (or a URL that may carry one), removed whether or not the server used them.
SECRET_VARIABLES = (
    "SERVICE_API_KEY",
    "SERVICE_JWT_SECRET",
    "CONTROLPLANE_SECRETS_KEY",
    "CONTROLPLANE_SECRETS_NEW_KEY",
    "CONTROLPLANE_METRICS_TOKEN",
    "CONTROLPLANE_DATABASE_URL",
    "CONTROLPLANE_REDIS_URL",
    "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID",
    "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY",
    "PGPASSWORD",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "OTEL_EXPORTER_OTLP_HEADERS",  # (the exporter's credential, if any: in the settings, `otlp_headers`)
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
)
# A secret this short inside another variable's value could be a coincidence (the named variables go anyway).
MIN_CONTAINED = 8


def _password(url: str | None) -> str | None:
    if not url or url == MEMORY_URL:
        return None
    try:
        password = make_url(url).password
    except (ArgumentError, ValueError):
        return None
    return str(password) if password else None


def _key_file_text(settings: Settings) -> str | None:
    """The secrets key file's text, when one is named and readable (the SQLite default's is found by keys.py)."""
    path = key_file_path(settings)
    if path is None:
        return None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        return Path(path).read_text(encoding="ascii").strip() or None
    return None


def secret_values(settings: Settings) -> list[str]:
    """Every configured secret: no log line may show one, and no variable of the environment may keep one."""
    storage = settings.storage
    candidates = [
        settings.service_api_key,
        settings.auth.jwt_secret,
        settings.secrets_key,
        _key_file_text(settings),
        settings.metrics_token,
        _password(settings.database_url),
        _password(settings.redis_url),
        storage.s3_access_key_id,  # (not secret to AWS, but half of the pair; botocore's debug lines show it)
        storage.s3_secret_access_key,
        storage.s3_session_token,
        *(value for _, value in settings.otlp_headers),
    ]
    return [secret for secret in dict.fromkeys(candidates) if secret]


def _fold_credentials(settings: Settings, env: MutableMapping[str, str]) -> Settings:
    """The credentials libraries would read from the environment at connection time, into the settings."""
    password = env.get("PGPASSWORD")
    if password and settings.database_url.startswith("postgresql") and _password(settings.database_url) is None:
        url = make_url(settings.database_url).set(password=password)
        settings = replace(settings, database_url=url.render_as_string(hide_password=False))
    storage = settings.storage
    key_id, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if storage.backend == "s3" and storage.s3_access_key_id is None and key_id and secret:
        token = env.get("AWS_SESSION_TOKEN") or env.get("AWS_SECURITY_TOKEN") or None
        storage = replace(storage, s3_access_key_id=key_id, s3_secret_access_key=secret, s3_session_token=token)
        settings = replace(settings, storage=storage)
    return settings


def withdraw_secrets(settings: Settings, env: MutableMapping[str, str]) -> Settings:
    """`settings` with the environment's credentials folded in; `env` (the process's `os.environ`) without a
    variable that holds a secret. The names removed are not logged (they say nothing an operator needs)."""
    settings = _fold_credentials(settings, env)
    secrets = secret_values(settings)
    contained = [secret for secret in secrets if len(secret) >= MIN_CONTAINED]
    for name in list(env):
        value = env.get(name, "")
        if name in SECRET_VARIABLES or value in secrets or any(secret in value for secret in contained):
            del env[name]
    return settings
