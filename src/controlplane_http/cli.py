"""The `controlplane` command: serve, migrate, worker, api-keys, secrets."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import logging
import logging.config
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from importlib import metadata
from pathlib import Path
from typing import Any

from controlplane_adapters.operations.logs import logging_config
from controlplane_adapters.settings.environment import secret_values, withdraw_secrets
from controlplane_adapters.settings.loading import load_settings
from controlplane_adapters.settings.model import MEMORY_URL, ConfigError, Settings, StartupFailed
from controlplane_domain.errors import DomainError
from controlplane_http import API_VERSION
from controlplane_http.secrets.cli import add_commands as add_secrets_commands
from controlplane_worker.cli import UsageError as WorkerUsageError
from controlplane_worker.cli import add_command as add_worker_command

CORKED_HTTP = "controlplane_http.protocol:CorkedHttpProtocol"
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's multiprocess mode (operations/metrics.py)
WORKER_HEALTHCHECK_SECONDS = 30
LOG_LEVELS = ["critical", "error", "warning", "info", "debug", "trace"]


# A first start with nothing that could authenticate a request says how to make a credential, in one line.
NO_CREDENTIAL = (
    "controlplane: no credential is configured, so every API request will be refused (401): start with"
    " SERVICE_API_KEY=<a long random value> (for example SERVICE_API_KEY=$(python3 -c 'import secrets;"
    " print(secrets.token_urlsafe(32))') make serve), or issue a key with"
    " `controlplane api-keys create --org default --name admin`"
)


def _serve(args: argparse.Namespace) -> int:
    if args.log_level not in LOG_LEVELS:  # (argparse checks the flag, not a default from the environment)
        raise ConfigError(f"CONTROLPLANE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {args.log_level!r}")
    settings = load_settings(config_file=args.config)  # (before the server's imports: a bad setting says so at once)
    # its secrets out of the environment, before any code that could read it runs (settings/environment.py)
    settings = withdraw_secrets(settings, os.environ)

    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from controlplane_http.bootstrap import build_app
    from controlplane_http.protocol import CleanStopServer
    from controlplane_http.schema import check_store

    log_config = logging_config(settings.log_format, args.log_level, secrets_of(settings))
    logging.config.dictConfig(log_config)
    stored_keys = asyncio.run(check_store(settings))  # an unusable store stops here, before any process starts
    if settings.auth.required and not (settings.service_api_key or settings.auth.jwt_secret or stored_keys):
        sys.stderr.write(NO_CREDENTIAL + "\n")
    host = args.host or settings.host
    port = args.port or settings.port
    settings = replace(settings, host=host, port=port)  # (the public URL's default is the address bound)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": args.log_level,
        "access_log": args.access_log,
        "timeout_graceful_shutdown": args.graceful_seconds,  # open streams and long polls do not block a stop
        # a response's headers and body leave in one system call and one TCP segment (protocol.py)
        "http": "httptools" if args.uncorked else CORKED_HTTP,
        # no WebSocket route (streams are server-sent events): an upgrade request is answered as plain HTTP, and
        # uvicorn does not load a WebSocket library at start
        "ws": "none",
        "log_config": log_config,  # every logger in one format (each server process applies it too)
        # the socket's peer is the client: uvicorn's X-Forwarded-For handling (which trusts loopback by default)
        # is off; the app believes the header from `trusted_proxies` only (controlplane_http/clients.py)
        "proxy_headers": False,
    }
    if args.workers > 1:
        if not settings.database_url.startswith("postgresql"):
            raise ConfigError(
                "--workers above 1 needs Postgres: on SQLite (or memory) wake-ups, streams and rate counters "
                "live in one process"
            )
        with metrics_directory():  # the server processes' metrics, summed by whichever answers a scrape
            _serve_processes(settings, args.workers, options)
        return 0  # (uvicorn's supervisor stops its server processes on SIGTERM or SIGINT, then returns)
    # uvicorn.run's single-process path, on a server whose stop by signal exits 0 (uvicorn's raises the signal again)
    app = build_app(settings, freeze_after_start=True, stop_on_signals=True)
    server = CleanStopServer(uvicorn.Config(app, **options))
    with contextlib.suppress(KeyboardInterrupt):  # a Ctrl-C before the server took over the signals
        server.run()
    return 0 if server.started else STARTUP_FAILURE


def _serve_processes(settings: Settings, workers: int, options: dict[str, Any]) -> None:
    """uvicorn.run's `workers` path, each server process handed the settings (secrets included) in its start-up
    pickle, over the pipe multiprocessing's spawn reads them from, rather than left in the environment for it to
    read again: the environment the processes inherit no longer holds them (nor then anything they start)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from controlplane_http.asgi import create

    config = uvicorn.Config(
        functools.partial(create, settings),
        factory=True,
        workers=workers,
        # a process still importing on a busy host is not a dead one (uvicorn's 5 s restarted them in a loop)
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
        **options,
    )
    sock = config.bind_socket()
    with contextlib.suppress(KeyboardInterrupt):
        Multiprocess(config, sockets=[sock]).run()


def secrets_of(settings: Settings) -> list[str]:
    """The configured secrets, which no log line may show."""
    return secret_values(settings)


@contextlib.contextmanager
def metrics_directory() -> Iterator[None]:
    """prometheus-client's multiprocess mode for the server processes about to start: a fresh directory of metrics
    files (`PROMETHEUS_MULTIPROC_DIR`) for this start, removed after. One given in the environment is used, its
    files from an earlier start deleted first (counters would otherwise go on from their old values)."""
    given = os.environ.get(MULTIPROCESS_ENV)
    if given:
        for stale in Path(given).glob("*.db"):
            stale.unlink()
        yield
        return
    directory = tempfile.mkdtemp(prefix="controlplane-metrics-")
    os.environ[MULTIPROCESS_ENV] = directory
    try:
        yield
    finally:
        os.environ.pop(MULTIPROCESS_ENV, None)
        shutil.rmtree(directory, ignore_errors=True)


def _migrate(args: argparse.Namespace) -> int:
    from controlplane_adapters.sql import migrate
    from controlplane_adapters.sql.engine import create_engine
    from controlplane_http.schema import prepare_schema

    settings = load_settings(config_file=args.config)
    if settings.database_url == MEMORY_URL:
        raise ConfigError("CONTROLPLANE_DATABASE_URL is memory://: there is no schema to migrate")
    if args.sql:
        sys.stdout.write(migrate.offline_sql(settings.database_url.replace("+aiosqlite", "").replace("+asyncpg", "")))
        return 0

    async def run() -> str | None:
        engine = create_engine(settings.database_url)
        try:
            await prepare_schema(engine, auto_migrate=True)
            return await migrate.current_revision(engine)
        finally:
            await engine.dispose()

    revision = asyncio.run(run())
    print(f"database is at revision {revision}")
    return 0


def _create_api_key(args: argparse.Namespace) -> int:
    from datetime import datetime

    from controlplane_adapters.auth import Sha256SecretHasher
    from controlplane_adapters.clock import SystemClock, UuidGenerator
    from controlplane_adapters.sql.engine import create_engine
    from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
    from controlplane_domain.api_keys.usecases import CreateApiKey, create_api_key
    from controlplane_domain.ports import Ports
    from controlplane_domain.principal import Principal, Role
    from controlplane_http.schema import prepare_schema

    settings = load_settings(config_file=args.config)
    if settings.database_url == MEMORY_URL:
        raise ConfigError("CONTROLPLANE_DATABASE_URL is memory://: a key issued there would be gone at once")
    expires_at = datetime.fromisoformat(args.expires_at) if args.expires_at else None
    if expires_at is not None and expires_at.tzinfo is None:
        raise ConfigError("--expires-at needs a timezone, e.g. 2027-01-01T00:00:00+00:00")

    async def run() -> str:
        engine = create_engine(settings.database_url)
        try:
            await prepare_schema(engine, auto_migrate=settings.auto_migrate)  # as `serve` would
            ports = Ports(uow=lambda: SqlUnitOfWork(engine), clock=SystemClock(), ids=UuidGenerator())
            operator = Principal(args.org, "cli", Role.ADMIN, "cli", "cli", operator=True)
            command = CreateApiKey(
                name=args.name,
                role=Role(args.role),
                expires_at=expires_at,
                environment_ids=tuple(args.environment_id),
                queue_ids=tuple(args.queue_id),
            )
            issued = await create_api_key(ports, Sha256SecretHasher(), operator, command)
            return issued.plaintext
        finally:
            await engine.dispose()

    print(asyncio.run(run()))
    return 0


def version() -> str:
    """What `controlplane --version` prints: the installed package's version and the API's."""
    try:
        installed = metadata.version("agent-control-plane")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        installed = "unknown"
    return f"controlplane {installed} (API {API_VERSION})"


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="controlplane", description="Agent Control Plane")
    root.add_argument("--version", action="version", version=version())
    root.add_argument("--config", default=None, help="YAML configuration file (or CONTROLPLANE_CONFIG)")
    commands = root.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, help="port (default 8001)")
    serve.add_argument(
        "--log-level",
        default=os.environ.get("CONTROLPLANE_LOG_LEVEL", "info").lower(),
        choices=LOG_LEVELS,
        help="uvicorn's log level (or CONTROLPLANE_LOG_LEVEL)",
    )
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.add_argument("--workers", type=int, default=1, help="server processes (Postgres only; default 1)")
    serve.add_argument("--graceful-seconds", type=int, default=10, help="how long a stop waits for open requests")
    serve.add_argument("--uncorked", action="store_true", help="uvicorn's own HTTP protocol: a write per message")
    serve.set_defaults(run=_serve)
    migrate = commands.add_parser("migrate", help="upgrade the database schema to the newest revision")
    migrate.add_argument("--sql", action="store_true", help="print the SQL instead of running it")
    migrate.set_defaults(run=_migrate)
    add_worker_command(commands)
    keys = commands.add_parser("api-keys", help="manage API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="issue a key and print it (shown only this once)")
    create.add_argument("--org", required=True, help="organization id")
    create.add_argument("--name", required=True, help="a name to recognise the key by")
    create.add_argument(
        "--role",
        default="admin",
        choices=["viewer", "member", "admin", "worker"],
        help="worker: the worker protocol only (what `controlplane worker` needs); default admin",
    )
    for flag, what in (("--environment-id", "environment"), ("--queue-id", "worker queue")):
        create.add_argument(
            flag,
            action="append",
            default=[],
            help=f"a worker key only: bind it to this {what} (repeat); unbound, it works on any queue of the org",
        )
    create.add_argument("--expires-at", default=None, help="ISO 8601 date-time with timezone")
    create.set_defaults(run=_create_api_key)
    add_secrets_commands(commands)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    log_format = os.environ.get("CONTROLPLANE_LOG_FORMAT", "text").strip().lower()  # (checked with the settings)
    logging.config.dictConfig(logging_config(log_format if log_format == "json" else "text"))
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    try:
        code: int = args.run(args)
    except (ConfigError, DomainError, WorkerUsageError) as exc:
        print(f"controlplane: configuration error: {exc}", file=sys.stderr)
        return 2
    except StartupFailed as exc:
        print(f"controlplane: cannot start: {exc}", file=sys.stderr)
        return 3
    return code


if __name__ == "__main__":
    sys.exit(main())
