"""The settings the service runs with, their defaults, and the errors a configuration can end in."""

from __future__ import annotations

from dataclasses import dataclass, field

from controlplane_adapters.settings.policies import PolicySettings
from controlplane_adapters.settings.storage import StorageSettings

AUTH_METHODS = frozenset({"api_key", "jwt"})
LOG_FORMATS = ("text", "json")
MEMORY_URL = "memory://"


class ConfigError(ValueError):
    """A setting has a value the service cannot start with."""


class StartupFailed(RuntimeError):
    """The store cannot be used: unreachable, or its schema is not one this release can run on."""


@dataclass(frozen=True, slots=True)
class AuthSettings:
    required: bool = True
    methods: frozenset[str] = AUTH_METHODS
    api_key_header: str = "Authorization"
    jwt_secret: str | None = None
    jwt_algorithm: str = "HS256"
    jwt_audience: str | None = None
    jwt_issuer: str | None = None
    jwt_leeway_seconds: int = 30


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = "sqlite+aiosqlite:///./controlplane.db"
    host: str = "127.0.0.1"
    port: int = 8001
    service_api_key: str | None = None
    default_organization: str = "default"
    auto_migrate: bool = True
    worker_heartbeat_interval_seconds: int = 30
    rate_limit_per_minute: int = 100
    worker_rate_limit_per_minute: int = 1200
    service_rate_limit_per_minute: int = 100_000
    """CONTROLPLANE_SERVICE_RATE_LIMIT_PER_MINUTE (`server.service_rate_limit_per_minute`): the service key's
    (SERVICE_API_KEY's) own requests a minute, for its API calls and, apart, its worker-protocol calls. The
    operator's key is never held to a tenant tier (its organization's or the standard figures)."""
    redis_url: str | None = None
    redis_namespace: str = "controlplane"
    redis_timeout_ms: int = 250
    """CONTROLPLANE_REDIS_TIMEOUT_MS (`redis.timeout_ms`): how long the rate limiter waits for Redis (to connect, and
    to answer) before it admits the request and leaves Redis alone for a pause (controlplane_adapters/ratelimit.py)."""
    max_body_bytes: int = 1024 * 1024
    trusted_proxies: tuple[str, ...] = ()
    """CONTROLPLANE_TRUSTED_PROXIES (`server.trusted_proxies`): the addresses or CIDR blocks of the reverse proxies
    whose `X-Forwarded-For` names the client (for the audit log and the rate limiter); empty: none, the socket's
    peer is the client."""
    lease_timeout_seconds: int = 60
    max_attempts: int = 3
    sse_keepalive_seconds: float = 15.0
    heartbeat_flush_ms: int = 500
    database_pool_size: int = 20
    database_statement_timeout_ms: int = 5000
    """CONTROLPLANE_DATABASE_STATEMENT_TIMEOUT_MS (`database.statement_timeout_ms`): a request's database statement
    running longer is stopped, and the request answers 503 STATEMENT_TIMEOUT (0: no limit)."""
    database_generic_plans: bool = True
    """CONTROLPLANE_DATABASE_GENERIC_PLANS (`database.generic_plans`), Postgres: every prepared statement runs its
    generic plan (`plan_cache_mode = force_generic_plan`), planned once a connection rather than on every run;
    false: Postgres's own choice (docs/configuration.md)."""
    fast_lane: bool = True
    auth: AuthSettings = field(default_factory=AuthSettings)
    secrets_key: str | None = field(default=None, repr=False)
    """CONTROLPLANE_SECRETS_KEY: the base64 text of the 32-byte key sealing secret values."""
    secrets_key_file: str | None = None
    """CONTROLPLANE_SECRETS_KEY_FILE: a file holding that text (default on SQLite: `<database file>.secrets-key`)."""
    webhook_rate_limit_per_minute: int = 60
    """CONTROLPLANE_WEBHOOK_RATE_LIMIT_PER_MINUTE: deliveries a minute to one job's webhook."""
    scheduler_interval_ms: int = 1000
    """CONTROLPLANE_SCHEDULER_INTERVAL_MS: how often each node's job scheduler looks for due cron firings (and its
    step timeout sweep for workflow steps past their timeout)."""
    storage: StorageSettings = field(default_factory=StorageSettings)
    """CONTROLPLANE_STORAGE_*: where files' bytes go, and the default quota (settings/storage.py)."""
    metrics_token: str | None = field(default=None, repr=False)
    """CONTROLPLANE_METRICS_TOKEN: `GET /metrics` asks for it as a bearer token; unset, it answers loopback only."""
    log_format: str = "text"
    """CONTROLPLANE_LOG_FORMAT: `text` (readable lines) or `json` (one JSON object a line)."""
    tracing: bool = False
    """Traces exported over OTLP/HTTP: on when OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set."""
    otlp_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """OTEL_EXPORTER_OTLP_TRACES_HEADERS (or OTEL_EXPORTER_OTLP_HEADERS), when tracing: the headers each export
    sends, often a credential; read here once, given to the exporter, and withdrawn from the environment."""
    webhooks_allow_private: bool = False
    """CONTROLPLANE_WEBHOOKS_ALLOW_PRIVATE: webhooks may send to private, loopback, link-local and metadata addresses
    (and over http to loopback): development only."""
    webhooks_deliver: bool = True
    """CONTROLPLANE_WEBHOOKS_DELIVER: false, this node writes webhook events but delivers none (other nodes do)."""
    webhooks_timeout_seconds: float = 10.0
    """CONTROLPLANE_WEBHOOKS_TIMEOUT_SECONDS: each webhook send's total deadline (resolving, connecting, the request,
    the whole answer), 1 to 30."""
    webhooks_concurrency: int = 16
    """CONTROLPLANE_WEBHOOKS_CONCURRENCY: a node's send slots (webhook deliveries in flight at once)."""
    webhooks_organization_concurrency: int = 4
    """CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY: deliveries of one organization in flight at once, across
    nodes; less than CONTROLPLANE_WEBHOOKS_CONCURRENCY (docs/webhooks.md "Fairness")."""
    workflows_organization_concurrency: int = 4
    """CONTROLPLANE_WORKFLOWS_ORGANIZATION_CONCURRENCY: a node's units of work of one organization that advance
    workflow runs at a request (a run started, cancelled, fired by a job's trigger or webhook, a task plan run) at
    once; its others wait for a slot (docs/api-decisions.md "Bounds"). 1 to 1000."""
    policies: PolicySettings = field(default_factory=PolicySettings)
    """CONTROLPLANE_POLICY_*: the policy processes' number and limits (settings/policies.py)."""
    public_url: str | None = None
    """CONTROLPLANE_PUBLIC_URL (`server.public_url`): the service's address as callers reach it, the base of the
    URLs it hands out (a webhook job's `webhook_url`); unset, `http://<host>:<port>` (`public_base_url`)."""

    @property
    def public_base_url(self) -> str:
        """`public_url`, else the bound address (a wildcard host as 127.0.0.1), never the request's `Host`."""
        if self.public_url:
            return self.public_url
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)  # noqa: S104
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"
