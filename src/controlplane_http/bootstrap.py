"""Wire real adapters from settings: the SQL store (migrated on start), the clock, ids and verifiers."""

from __future__ import annotations

import logging

from litestar import Litestar

from controlplane_adapters.auth import CredentialVerifier, ServiceKeyVerifier
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.memory import MemoryHealthProbe, MemoryStore
from controlplane_adapters.settings import Settings
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.database import SqlHealthProbe, SqlUnitOfWork, create_engine
from controlplane_domain.ports import Clock, Ports
from controlplane_http.app import create_app

log = logging.getLogger("controlplane")


class SchemaOutOfDate(RuntimeError):
    """The database schema is older than this release and auto-migration is off."""


MEMORY_URL = "memory://"


def build_app(settings: Settings, *, clock: Clock | None = None) -> Litestar:
    """The app on the store `settings.database_url` names: SQL (migrated on start unless told not to) or `memory://`."""
    if not settings.auth.required:
        log.warning(
            "AUTHENTICATION IS OFF (SERVICE_AUTH_REQUIRED=false): anonymous requests act as admin of organization %r."
            " Never run like this outside development.",
            settings.default_organization,
        )
    verifier = CredentialVerifier(
        settings.auth, ServiceKeyVerifier(settings.service_api_key, settings.default_organization)
    )
    if settings.database_url == MEMORY_URL:
        store = MemoryStore()
        return create_app(
            ports=Ports(
                uow=store.unit_of_work,
                clock=clock or SystemClock(),
                ids=UuidGenerator(),
                worker_heartbeat_interval_seconds=settings.worker_heartbeat_interval_seconds,
            ),
            verifier=verifier,
            health_probe=MemoryHealthProbe(),
            auth=settings.auth,
            default_organization=settings.default_organization,
            backend="memory",
        )
    engine = create_engine(settings.database_url)
    backend = engine.url.get_backend_name()

    async def prepare_database() -> None:
        if settings.auto_migrate:
            await migrate.upgrade(engine)
            return
        current, head = await migrate.current_revision(engine), migrate.head_revision()
        if current != head:
            raise SchemaOutOfDate(
                f"database schema is at revision {current or 'none'}, this release needs {head}; "
                "run `controlplane migrate` or unset CONTROLPLANE_AUTO_MIGRATE=false"
            )

    async def close_database() -> None:
        await engine.dispose()

    ports = Ports(
        uow=lambda: SqlUnitOfWork(engine),
        clock=clock or SystemClock(),
        ids=UuidGenerator(),
        worker_heartbeat_interval_seconds=settings.worker_heartbeat_interval_seconds,
    )
    return create_app(
        ports=ports,
        verifier=verifier,
        health_probe=SqlHealthProbe(engine),
        auth=settings.auth,
        default_organization=settings.default_organization,
        backend=backend,
        on_startup=[prepare_database],
        on_shutdown=[close_database],
    )
