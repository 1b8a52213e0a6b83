"""Settings: defaults, the YAML file's spec keys, environment variables winning, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import ConfigError


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


def test_the_webhook_senders_deadline_and_slots() -> None:
    default = load_settings(env={})
    assert (default.webhooks_timeout_seconds, default.webhooks_concurrency) == (10.0, 16)
    assert default.webhooks_organization_concurrency == 4
    env = {"CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS": "3", "CONTROLPLANE_WEBHOOKS_CONCURRENCY": "40",
           "CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY": "8"}  # fmt: skip
    settings = load_settings(env=env)
    assert (settings.webhooks_timeout_seconds, settings.webhooks_concurrency) == (3.0, 40)
    assert settings.webhooks_organization_concurrency == 8


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
        ({"CONTROLPLANE_LEASE_TIMEOUT_SECONDS": "99999999999999999999"}, "CONTROLPLANE_LEASE_TIMEOUT_SECONDS"),
        ({"CONTROLPLANE_DATABASE_URL": "mysql://db/cp"}, "CONTROLPLANE_DATABASE_URL must use one of the drivers"),
        ({"CONTROLPLANE_DATABASE_URL": "postgresql://db/cp"}, "CONTROLPLANE_DATABASE_URL must use one of the drivers"),
        ({"CONTROLPLANE_DATABASE_URL": "sqlite:///x.db"}, "CONTROLPLANE_DATABASE_URL must use one of the drivers"),
        ({"CONTROLPLANE_DATABASE_URL": "not-a-url"}, "CONTROLPLANE_DATABASE_URL must be a database URL"),
        ({"CONTROLPLANE_DATABASE_URL": ""}, "CONTROLPLANE_DATABASE_URL must be a database URL"),
        ({"CONTROLPLANE_DATABASE_URL": "postgresql+asyncpg://u@h:54x2/db"}, "must be a database URL"),
        ({"CONTROLPLANE_DATABASE_URL": "sqlite+aiosqlite://"}, "CONTROLPLANE_DATABASE_URL must name a SQLite file"),
        ({"CONTROLPLANE_DATABASE_URL": "sqlite+aiosqlite:///:memory:"}, "must name a SQLite file"),
        ({"CONTROLPLANE_REDIS_URL": "http://cache:6379"}, "CONTROLPLANE_REDIS_URL must start with redis://"),
        ({"CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS": "31"}, "CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS must be between"),
        ({"CONTROLPLANE_WEBHOOKS_CONCURRENCY": "1"}, "CONTROLPLANE_WEBHOOKS_CONCURRENCY must be between"),
        ({"CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY": "16"}, "must be less than CONTROLPLANE_WEBHOOKS_CONC"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env=env)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("databse:\n  url: postgresql+asyncpg://db/cp\n", "unknown key 'databse'"),
        ("server:\n  auth:\n    method: [jwt]\n", "unknown key 'server.auth.method'"),
        ("database: postgresql+asyncpg://db/cp\n", "database must be a mapping"),
        ("server: 5\n", "server must be a mapping"),
        ("server:\n  auth: [jwt]\n", "server.auth must be a mapping"),
        ("server:\n  auth:\n    methods: 5\n", "server.auth.methods must list"),
        ("database:\n  url: [1]\n", "database.url must be a single value"),
        ("database:\n  url: mysql://db/cp\n", "database.url must use one of the drivers"),
        ("redis:\n  url: http://cache\n", "redis.url must start with redis://"),
        ("server:\n  rate_limit_per_minute: 100000000000000000000000\n", "server.rate_limit_per_minute"),
        ("server:\n  max_body_bytes: 10000000000000\n", "server.max_body_bytes"),
    ],
)
def test_bad_files_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_settings(env={}, config_file=str(path))


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"server:\n  host: \xff\xfe\n")
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        load_settings(env={}, config_file=str(path))


def test_empty_sections_and_every_known_key_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        """
server:
  host: 0.0.0.0
  port: 8002
  default_organization: acme
  rate_limit_per_minute: 50
  worker_rate_limit_per_minute: 500
  max_body_bytes: 2048
  auth:
    required: true
    methods: api_key
    api_key_header: X-Key
    jwt_secret: s
    api_key: k
    jwt_audience: a
    jwt_issuer: i
database:
  url: memory://
  auto_migrate: false
redis:
"""
    )
    settings = load_settings(env={}, config_file=str(path))
    assert (settings.host, settings.port, settings.default_organization) == ("0.0.0.0", 8002, "acme")  # noqa: S104
    assert (settings.rate_limit_per_minute, settings.worker_rate_limit_per_minute) == (50, 500)
    assert (settings.max_body_bytes, settings.database_url, settings.auto_migrate) == (2048, "memory://", False)
    assert settings.redis_url is None
    assert settings.auth.methods == {"api_key"}
    assert (settings.auth.api_key_header, settings.auth.jwt_audience, settings.auth.jwt_issuer) == ("X-Key", "a", "i")
    assert (settings.auth.jwt_secret, settings.service_api_key) == ("s", "k")


def test_the_statement_timeout_from_the_environment_or_the_file(tmp_path: Path) -> None:
    assert load_settings(env={}).database_statement_timeout_ms == 5000
    env = {"CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS": "250"}
    assert load_settings(env=env).database_statement_timeout_ms == 250
    assert load_settings(env={"CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS": "0"}).database_statement_timeout_ms == 0
    path = tmp_path / "config.yaml"
    path.write_text("database:\n  statement_timeout_ms: 1500\n")
    assert load_settings(env={}, config_file=str(path)).database_statement_timeout_ms == 1500
    for bad in ("-1", "soon", "3600001"):
        with pytest.raises(ConfigError, match="CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS"):
            load_settings(env={"CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS": bad})


def test_generic_plans_are_on_unless_the_environment_or_the_file_turns_them_off(tmp_path: Path) -> None:
    assert load_settings(env={}).database_generic_plans is True
    assert load_settings(env={"CONTROLPLANE_DATABASE_GENERIC_PLANS": "false"}).database_generic_plans is False
    path = tmp_path / "config.yaml"
    path.write_text("database:\n  generic_plans: false\n")
    assert load_settings(env={}, config_file=str(path)).database_generic_plans is False
    with pytest.raises(ConfigError, match="CONTROLPLANE_DATABASE_GENERIC_PLANS"):
        load_settings(env={"CONTROLPLANE_DATABASE_GENERIC_PLANS": "sometimes"})


def test_the_service_keys_figure_from_the_environment_or_the_file(tmp_path: Path) -> None:
    assert load_settings(env={}).service_rate_limit_per_minute == 100_000
    env = {"CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE": "5000"}
    assert load_settings(env=env).service_rate_limit_per_minute == 5000
    path = tmp_path / "config.yaml"
    path.write_text("server:\n  service_rate_limit_per_minute: 2500\n")
    assert load_settings(env={}, config_file=str(path)).service_rate_limit_per_minute == 2500
    assert load_settings(env=env, config_file=str(path)).service_rate_limit_per_minute == 5000
    for bad in ("0", "many", "1000001"):
        with pytest.raises(ConfigError, match="CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE"):
            load_settings(env={"CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE": bad})


def test_the_redis_timeout_from_the_environment_or_the_file(tmp_path: Path) -> None:
    assert load_settings(env={}).redis_timeout_ms == 250
    assert load_settings(env={"CONTROLPLANE_REDIS_TIMEOUT_MS": "2000"}).redis_timeout_ms == 2000
    path = tmp_path / "config.yaml"
    path.write_text("redis:\n  url: redis://cache:6379/0\n  timeout_ms: 500\n")
    assert load_settings(env={}, config_file=str(path)).redis_timeout_ms == 500
    for bad in ("0", "soon", "60001"):
        with pytest.raises(ConfigError, match="CONTROLPLANE_REDIS_TIMEOUT_MS"):
            load_settings(env={"CONTROLPLANE_REDIS_TIMEOUT_MS": bad})
