"""Settings from the YAML file (the spec's keys) and environment variables, which win."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from controlplane_adapters.secrets.cipher import parse_key
from controlplane_adapters.settings.model import LOG_FORMATS, ConfigError, Settings
from controlplane_adapters.settings.policies_env import policy_settings
from controlplane_adapters.settings.storage_env import storage_settings
from controlplane_adapters.settings.values import (
    database_url,
    parse_bool,
    parse_int,
    parse_methods,
    parse_networks,
    public_url,
    redis_url,
)
from controlplane_adapters.settings.yaml_file import (
    MAX_BODY_BYTES,
    MAX_LEASE_TIMEOUT_SECONDS,
    MAX_PORT,
    MAX_RATE_PER_MINUTE,
    MAX_REDIS_TIMEOUT_MS,
    MAX_STATEMENT_TIMEOUT_MS,
    from_file,
)
from controlplane_domain.principal import is_identity

OTLP_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def load_settings(env: Mapping[str, str] | None = None, config_file: str | None = None) -> Settings:
    """Defaults, then the YAML file (`--config` or CONTROLPLANE_CONFIG), then environment variables."""
    env = os.environ if env is None else env
    path = config_file or env.get("CONTROLPLANE_CONFIG")
    settings = from_file(Path(path), env) if path else Settings()
    auth = settings.auth
    if "SERVICE_API_KEY" in env:
        settings = replace(settings, service_api_key=env["SERVICE_API_KEY"] or None)
    if "CONTROLPLANE_TRUSTED_PROXIES" in env:
        proxies = parse_networks("CONTROLPLANE_TRUSTED_PROXIES", env["CONTROLPLANE_TRUSTED_PROXIES"])
        settings = replace(settings, trusted_proxies=proxies)
    if "SERVICE_DEFAULT_ORG" in env:
        settings = replace(settings, default_organization=env["SERVICE_DEFAULT_ORG"])
    if "SERVICE_JWT_SECRET" in env:
        auth = replace(auth, jwt_secret=env["SERVICE_JWT_SECRET"] or None)
    if "SERVICE_AUTH_REQUIRED" in env:
        auth = replace(auth, required=parse_bool("SERVICE_AUTH_REQUIRED", env["SERVICE_AUTH_REQUIRED"]))
    if "CONTROLPLANE_AUTH_METHODS" in env:
        auth = replace(auth, methods=parse_methods("CONTROLPLANE_AUTH_METHODS", env["CONTROLPLANE_AUTH_METHODS"]))
    if "CONTROLPLANE_API_KEY_HEADER" in env:
        auth = replace(auth, api_key_header=env["CONTROLPLANE_API_KEY_HEADER"])
    if "CONTROLPLANE_JWT_AUDIENCE" in env:
        auth = replace(auth, jwt_audience=env["CONTROLPLANE_JWT_AUDIENCE"] or None)
    if "CONTROLPLANE_JWT_ISSUER" in env:
        auth = replace(auth, jwt_issuer=env["CONTROLPLANE_JWT_ISSUER"] or None)
    if "CONTROLPLANE_JWT_LEEWAY_SECONDS" in env:
        leeway = parse_int("CONTROLPLANE_JWT_LEEWAY_SECONDS", env["CONTROLPLANE_JWT_LEEWAY_SECONDS"], minimum=0)
        auth = replace(auth, jwt_leeway_seconds=leeway)
    if "CONTROLPLANE_DATABASE_URL" in env:
        settings = replace(
            settings, database_url=database_url("CONTROLPLANE_DATABASE_URL", env["CONTROLPLANE_DATABASE_URL"])
        )
    if "CONTROLPLANE_AUTO_MIGRATE" in env:
        settings = replace(
            settings, auto_migrate=parse_bool("CONTROLPLANE_AUTO_MIGRATE", env["CONTROLPLANE_AUTO_MIGRATE"])
        )
    if "CONTROLPLANE_HOST" in env:
        settings = replace(settings, host=env["CONTROLPLANE_HOST"])
    if "CONTROLPLANE_PORT" in env:
        settings = replace(settings, port=parse_int("CONTROLPLANE_PORT", env["CONTROLPLANE_PORT"], maximum=MAX_PORT))
    if "CONTROLPLANE_WORKER_HEARTBEAT_INTERVAL_SECONDS" in env:
        interval = parse_int(
            "CONTROLPLANE_WORKER_HEARTBEAT_INTERVAL_SECONDS",
            env["CONTROLPLANE_WORKER_HEARTBEAT_INTERVAL_SECONDS"],
            maximum=3600,
        )
        settings = replace(settings, worker_heartbeat_interval_seconds=interval)
    if (value := env.get("CONTROLPLANE_RATE_LIMIT_PER_MINUTE")) is not None:
        rate = parse_int("CONTROLPLANE_RATE_LIMIT_PER_MINUTE", value, maximum=MAX_RATE_PER_MINUTE)
        settings = replace(settings, rate_limit_per_minute=rate)
    if (value := env.get("CONTROLPLANE_WORKER_RATE_LIMIT_PER_MINUTE")) is not None:
        rate = parse_int("CONTROLPLANE_WORKER_RATE_LIMIT_PER_MINUTE", value, maximum=MAX_RATE_PER_MINUTE)
        settings = replace(settings, worker_rate_limit_per_minute=rate)
    if (value := env.get("CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE")) is not None:
        rate = parse_int("CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE", value, maximum=MAX_RATE_PER_MINUTE)
        settings = replace(settings, service_rate_limit_per_minute=rate)
    if (value := env.get("CONTROLPLANE_MAX_BODY_BYTES")) is not None:
        settings = replace(
            settings, max_body_bytes=parse_int("CONTROLPLANE_MAX_BODY_BYTES", value, maximum=MAX_BODY_BYTES)
        )
    if (value := env.get("CONTROLPLANE_LEASE_TIMEOUT_SECONDS")) is not None:
        settings = replace(
            settings,
            lease_timeout_seconds=parse_int(
                "CONTROLPLANE_LEASE_TIMEOUT_SECONDS", value, maximum=MAX_LEASE_TIMEOUT_SECONDS
            ),
        )
    if (value := env.get("CONTROLPLANE_MAX_ATTEMPTS")) is not None:
        settings = replace(settings, max_attempts=parse_int("CONTROLPLANE_MAX_ATTEMPTS", value, maximum=100))
    if (value := env.get("CONTROLPLANE_SSE_KEEPALIVE_SECONDS")) is not None:
        keepalive = parse_int("CONTROLPLANE_SSE_KEEPALIVE_SECONDS", value, maximum=3600)
        settings = replace(settings, sse_keepalive_seconds=float(keepalive))
    if (value := env.get("CONTROLPLANE_HEARTBEAT_FLUSH_MS")) is not None:
        flush = parse_int("CONTROLPLANE_HEARTBEAT_FLUSH_MS", value, minimum=10, maximum=60_000)
        settings = replace(settings, heartbeat_flush_ms=flush)
    if (value := env.get("CONTROLPLANE_WEBHOOK_RATE_LIMIT_PER_MINUTE")) is not None:
        rate = parse_int("CONTROLPLANE_WEBHOOK_RATE_LIMIT_PER_MINUTE", value, maximum=MAX_RATE_PER_MINUTE)
        settings = replace(settings, webhook_rate_limit_per_minute=rate)
    if (value := env.get("CONTROLPLANE_SCHEDULER_INTERVAL_MS")) is not None:
        interval = parse_int("CONTROLPLANE_SCHEDULER_INTERVAL_MS", value, minimum=10, maximum=60_000)
        settings = replace(settings, scheduler_interval_ms=interval)
    if (value := env.get("CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE")) is not None:
        settings = replace(settings, webhooks_allow_private=parse_bool("CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE", value))
    if (value := env.get("CONTROLPLANE_WEBHOOKS_DELIVER")) is not None:
        settings = replace(settings, webhooks_deliver=parse_bool("CONTROLPLANE_WEBHOOKS_DELIVER", value))
    if (value := env.get("CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS")) is not None:
        timeout = parse_int("CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS", value, minimum=1, maximum=30)
        settings = replace(settings, webhooks_timeout_seconds=float(timeout))
    if (value := env.get("CONTROLPLANE_WEBHOOKS_CONCURRENCY")) is not None:
        slots = parse_int("CONTROLPLANE_WEBHOOKS_CONCURRENCY", value, minimum=2, maximum=1000)
        settings = replace(settings, webhooks_concurrency=slots)
    if (value := env.get("CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY")) is not None:
        cap = parse_int("CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY", value, minimum=1, maximum=1000)
        settings = replace(settings, webhooks_organization_concurrency=cap)
    if settings.webhooks_organization_concurrency >= settings.webhooks_concurrency:
        raise ConfigError(
            "CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY must be less than CONTROLPLANE_WEBHOOKS_CONCURRENCY "
            f"({settings.webhooks_organization_concurrency} >= {settings.webhooks_concurrency}): one organization "
            "must not be able to hold every send slot"
        )
    if (value := env.get("CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY")) is not None:
        cap = parse_int("CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY", value, minimum=1, maximum=1000)
        settings = replace(settings, workflows_organization_concurrency=cap)
    if (value := env.get("CONTROLPLANE_DATABASE_POOL_SIZE")) is not None:
        settings = replace(
            settings, database_pool_size=parse_int("CONTROLPLANE_DATABASE_POOL_SIZE", value, maximum=1000)
        )
    if (value := env.get("CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS")) is not None:
        limit = parse_int(
            "CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS", value, minimum=0, maximum=MAX_STATEMENT_TIMEOUT_MS
        )
        settings = replace(settings, database_statement_timeout_ms=limit)
    if (value := env.get("CONTROLPLANE_DATABASE_GENERIC_PLANS")) is not None:
        settings = replace(settings, database_generic_plans=parse_bool("CONTROLPLANE_DATABASE_GENERIC_PLANS", value))
    if (value := env.get("CONTROLPLANE_FAST_LANE")) is not None:
        settings = replace(settings, fast_lane=parse_bool("CONTROLPLANE_FAST_LANE", value))
    if "CONTROLPLANE_PUBLIC_URL" in env:
        settings = replace(settings, public_url=public_url("CONTROLPLANE_PUBLIC_URL", env["CONTROLPLANE_PUBLIC_URL"]))
    if "CONTROLPLANE_REDIS_NAMESPACE" in env:
        settings = replace(settings, redis_namespace=env["CONTROLPLANE_REDIS_NAMESPACE"] or "controlplane")
    if "CONTROLPLANE_REDIS_URL" in env:
        settings = replace(settings, redis_url=redis_url("CONTROLPLANE_REDIS_URL", env["CONTROLPLANE_REDIS_URL"]))
    if (value := env.get("CONTROLPLANE_REDIS_TIMEOUT_MS")) is not None:
        timeout = parse_int("CONTROLPLANE_REDIS_TIMEOUT_MS", value, minimum=1, maximum=MAX_REDIS_TIMEOUT_MS)
        settings = replace(settings, redis_timeout_ms=timeout)
    if env.get("CONTROLPLANE_SECRETS_KEY"):
        parse_key(env["CONTROLPLANE_SECRETS_KEY"], "CONTROLPLANE_SECRETS_KEY")  # a bad key stops the start here
        settings = replace(settings, secrets_key=env["CONTROLPLANE_SECRETS_KEY"])
    if env.get("CONTROLPLANE_SECRETS_KEY_FILE"):
        settings = replace(settings, secrets_key_file=env["CONTROLPLANE_SECRETS_KEY_FILE"])
    settings = replace(settings, storage=storage_settings(env, settings.storage))
    settings = replace(settings, policies=policy_settings(env, settings.policies))
    settings = _operations(settings, env)
    if not settings.default_organization.strip():
        raise ConfigError("SERVICE_DEFAULT_ORG must not be empty")
    if not is_identity(settings.default_organization):
        raise ConfigError(
            "SERVICE_DEFAULT_ORG must be 1 to 255 printable ASCII characters without spaces (an organization id)"
        )
    if not auth.api_key_header.strip():
        raise ConfigError("server.auth.api_key_header must not be empty")
    return replace(settings, auth=auth)


def _operations(settings: Settings, env: Mapping[str, str]) -> Settings:
    """The metrics token, the log format and whether to trace (the OpenTelemetry SDK reads its own OTEL_*)."""
    if env.get("CONTROLPLANE_METRICS_TOKEN"):
        settings = replace(settings, metrics_token=env["CONTROLPLANE_METRICS_TOKEN"])
    if (value := env.get("CONTROLPLANE_LOG_FORMAT")) is not None:
        log_format = value.strip().lower()
        if log_format not in LOG_FORMATS:
            raise ConfigError(f"CONTROLPLANE_LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, got {value!r}")
        settings = replace(settings, log_format=log_format)
    disabled = env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    tracing = not disabled and any(env.get(name) for name in OTLP_ENDPOINTS)
    headers: tuple[tuple[str, str], ...] = ()
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS")
    if tracing and raw:  # (the SDK's own parser, as its exporter would read them; loaded only when tracing)
        from opentelemetry.util.re import parse_env_headers

        headers = tuple(parse_env_headers(raw, liberal=True).items())
    return replace(settings, tracing=tracing, otlp_headers=headers)
