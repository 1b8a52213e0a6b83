"""Settings: defaults, the YAML file's spec keys, environment variables winning, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_adapters.settings import ConfigError, load_settings


def test_defaults() -> None:
    settings = load_settings(env={})
    assert settings.database_url == "sqlite+aiosqlite:///./controlplane.db"
    assert (settings.host, settings.port) == ("127.0.0.1", 8001)
    assert settings.default_organization == "default"
    assert settings.auth.required is True
    assert settings.auth.methods == {"api_key", "jwt"}
    assert settings.auth.api_key_header == "Authorization"
    assert settings.service_api_key is None
    assert settings.auth.jwt_secret is None


def test_yaml_keys_of_the_spec(tmp_path: Path) -> None:
    path = tmp_path / "controlplane.yaml"
    path.write_text(
        """
server:
  port: 9000
  auth:
    required: false
    methods: [jwt]
    api_key_header: X-API-Key
    jwt_secret: ${MY_SECRET}
database:
  url: postgresql+asyncpg://db/cp
"""
    )
    settings = load_settings(env={"MY_SECRET": "s3cret"}, config_file=str(path))
    assert settings.port == 9000
    assert settings.auth.required is False
    assert settings.auth.methods == {"jwt"}
    assert settings.auth.api_key_header == "X-API-Key"
    assert settings.auth.jwt_secret == "s3cret"
    assert settings.database_url == "postgresql+asyncpg://db/cp"


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("server:\n  auth:\n    required: false\n    jwt_secret: literal-secret\n")
    env = {
        "CONTROLPLANE_CONFIG": str(path),
        "SERVICE_AUTH_REQUIRED": "true",
        "SERVICE_API_KEY": "key",
        "SERVICE_DEFAULT_ORG": "acme",
        "CONTROLPLANE_DATABASE_URL": "sqlite+aiosqlite:///x.db",
    }
    settings = load_settings(env=env)
    assert settings.auth.required is True
    assert settings.auth.jwt_secret == "literal-secret"
    assert (settings.service_api_key, settings.default_organization) == ("key", "acme")
    assert settings.database_url == "sqlite+aiosqlite:///x.db"
    assert load_settings(env={**env, "SERVICE_JWT_SECRET": "from-env"}).auth.jwt_secret == "from-env"
    assert load_settings(env={**env, "CONTROLPLANE_HEARTBEAT_FLUSH_MS": "250"}).heartbeat_flush_ms == 250


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SERVICE_AUTH_REQUIRED": "maybe"}, "SERVICE_AUTH_REQUIRED"),
        ({"CONTROLPLANE_PORT": "http"}, "CONTROLPLANE_PORT"),
        ({"CONTROLPLANE_PORT": "70000"}, "CONTROLPLANE_PORT"),
        ({"CONTROLPLANE_AUTH_METHODS": "password"}, "CONTROLPLANE_AUTH_METHODS"),
        ({"SERVICE_DEFAULT_ORG": " "}, "SERVICE_DEFAULT_ORG"),
        ({"CONTROLPLANE_CONFIG": "/nonexistent/file.yaml"}, "cannot read configuration file"),
        ({"CONTROLPLANE_HEARTBEAT_FLUSH_MS": "5"}, "CONTROLPLANE_HEARTBEAT_FLUSH_MS"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env=env)
