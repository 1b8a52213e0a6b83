"""The server's secrets out of its environment once read (settings/environment.py; issue #31): which variables go,
which stay, and the credentials libraries would have read from it later, kept in the settings instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_adapters.settings.environment import secret_values, withdraw_secrets
from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError
from tests.support import SECRETS_KEY

KEEP = {"PATH": "/usr/bin:/bin", "HOME": "/home/cp", "CONTROLPLANE_PORT": "9000", "CONTROLPLANE_LOG_FORMAT": "json"}


def test_every_secret_variable_goes_and_the_rest_stays() -> None:
    env = {
        **KEEP,
        "SERVICE_API_KEY": "service-key-1234",
        "SERVICE_JWT_SECRET": "jwt-secret-1234567890",
        "CONTROLPLANE_SECRETS_KEY": SECRETS_KEY,
        "CONTROLPLANE_SECRETS_NEW_KEY": SECRETS_KEY,
        "CONTROLPLANE_METRICS_TOKEN": "metrics-token-1234",
        "CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://cp:db-password-123@db/cp",
        "CONTROLPLANE_REDIS_URL": "redis://:redis-password-123@cache:6379/0",
        "CONTROLPLANE_STORAGE_BACKEND": "s3",
        "CONTROLPLANE_STORAGE_S3_BUCKET": "files",
        "CONTROLPLANE_STORAGE_S3_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "CONTROLPLANE_STORAGE_S3_SECRET_ACCESS_KEY": "s3-secret-1234",
        "A_COPY": "the key: service-key-1234",
    }
    settings = withdraw_secrets(load_settings(env), env)
    assert env == {**KEEP, "CONTROLPLANE_STORAGE_BACKEND": "s3", "CONTROLPLANE_STORAGE_S3_BUCKET": "files"}
    assert (settings.service_api_key, settings.port, settings.storage.s3_secret_access_key) == (
        "service-key-1234", 9000, "s3-secret-1234",
    )  # fmt: skip
    assert {"db-password-123", "redis-password-123", "AKIAEXAMPLE"} <= set(secret_values(settings))


def test_a_yaml_reference_names_a_variable_of_its_own_which_goes(tmp_path: Path) -> None:
    config = tmp_path / "controlplane.yaml"
    config.write_text("server:\n  auth:\n    jwt_secret: ${MY_JWT}\n    api_key: env:MY_KEY\n", encoding="utf-8")
    env = {**KEEP, "MY_JWT": "jwt-from-a-reference", "MY_KEY": "key-from-a-reference"}
    settings = withdraw_secrets(load_settings(env, str(config)), env)
    assert env == KEEP
    assert (settings.auth.jwt_secret, settings.service_api_key) == ("jwt-from-a-reference", "key-from-a-reference")


def test_libpq_and_boto3_credentials_move_into_the_settings() -> None:
    env = {
        **KEEP,
        "CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://cp@db:5432/cp",
        "PGPASSWORD": "from-pgpassword",
        "CONTROLPLANE_STORAGE_BACKEND": "s3",
        "CONTROLPLANE_STORAGE_S3_BUCKET": "files",
        "AWS_ACCESS_KEY_ID": "AKIAFROMENV",
        "AWS_SECRET_ACCESS_KEY": "aws-secret-from-env",
        "AWS_SESSION_TOKEN": "aws-token-from-env",
    }
    settings = withdraw_secrets(load_settings(env), env)
    assert env == {**KEEP, "CONTROLPLANE_STORAGE_BACKEND": "s3", "CONTROLPLANE_STORAGE_S3_BUCKET": "files"}
    assert settings.database_url == "postgresql+asyncpg://cp:from-pgpassword@db:5432/cp"
    storage = settings.storage
    assert (storage.s3_access_key_id, storage.s3_secret_access_key, storage.s3_session_token) == (
        "AKIAFROMENV", "aws-secret-from-env", "aws-token-from-env",
    )  # fmt: skip


def test_given_credentials_win_and_unused_ones_still_go() -> None:
    env = {
        "CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://cp:in-the-url@db/cp",
        "PGPASSWORD": "other-password",
        "AWS_ACCESS_KEY_ID": "AKIAUNUSED",
        "AWS_SECRET_ACCESS_KEY": "unused-secret",
    }
    settings = withdraw_secrets(load_settings(env), env)  # (the local backend: boto3 is not used)
    assert env == {}
    assert settings.database_url == "postgresql+asyncpg://cp:in-the-url@db/cp"
    assert settings.storage.s3_access_key_id is None


def test_the_key_file_text_is_a_secret_and_short_secrets_match_whole_values_only(tmp_path: Path) -> None:
    key_file = tmp_path / "secrets.key"
    key_file.write_text(SECRETS_KEY + "\n", encoding="ascii")
    env = {
        **KEEP,
        "CONTROLPLANE_SECRETS_KEY_FILE": str(key_file),
        "SERVICE_API_KEY": "bin",  # (too short to look for inside other values: PATH stays)
        "ANOTHER": SECRETS_KEY,
        "EXACT": "bin",
    }
    settings = withdraw_secrets(load_settings(env), env)
    assert SECRETS_KEY in secret_values(settings)
    assert env == {**KEEP, "CONTROLPLANE_SECRETS_KEY_FILE": str(key_file)}


def test_a_refused_url_is_quoted_without_its_password() -> None:
    for env in (
        {"CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://cp:hunter2-secret@db:54x2/cp"},
        {"CONTROLPLANE_REDIS_URL": "http://:hunter2-secret@cache:6379"},
    ):
        with pytest.raises(ConfigError) as refused:
            load_settings(env)
        assert "hunter2-secret" not in str(refused.value)
        assert ":***@" in str(refused.value)


def test_the_otlp_exporters_headers_go_and_the_exporter_still_gets_them() -> None:
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    env = {**KEEP, **endpoint, "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20otlp-token-123,x-team=ops"}
    settings = withdraw_secrets(load_settings(env), env)
    assert env == {**KEEP, **endpoint}
    assert settings.tracing
    assert dict(settings.otlp_headers) == {"authorization": "Bearer otlp-token-123", "x-team": "ops"}
    assert "Bearer otlp-token-123" in secret_values(settings)
    assert "otlp-token-123" not in repr(settings)
    traces = {**KEEP, **endpoint, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=traces-only-token"}
    traces_settings = withdraw_secrets(load_settings(traces), traces)
    assert dict(traces_settings.otlp_headers) == {"authorization": "traces-only-token"}
    assert traces == {**KEEP, **endpoint}
