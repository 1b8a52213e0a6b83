"""Wire real adapters from settings: the SQL store (migrated on start), the clock, ids and verifiers."""

from __future__ import annotations

import logging

from litestar import Litestar

from controlplane_adapters.auth import CredentialVerifier, ServiceKeyVerifier
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.settings import Settings
from controlplane_adapters.sql import migrate
from controlplane_adapters.sql.database import SqlHealthProbe, SqlUnitOfWork, create_engine
from controlplane_domain.ports import Ports
from controlplane_http.app import create_app

log = logging.getLogger("controlplane")


class SchemaOutOfDate(RuntimeError):
    """The database schema is older than this release and auto-migration is off."""


def build_app(settings: Settings) -> Litestar:
    """The production app: SQL store from `settings.database_url`, migrated on start unless told not to."""
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

    if not settings.auth.required:
        log.warning(
            "AUTHENTICATION IS OFF (SERVICE_AUTH_REQUIRED=false): anonymous requests act as admin of organization %r."
            " Never run like this outside development.",
            settings.default_organization,
        )
    ports = Ports(
        uow=lambda: SqlUnitOfWork(engine),
        clock=SystemClock(),
        ids=UuidGenerator(),
        worker_heartbeat_interval_seconds=settings.worker_heartbeat_interval_seconds,
    )
    verifier = CredentialVerifier(settings.auth, ServiceKeyVerifier(settings.service_api_key, settings.default_organization))
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
