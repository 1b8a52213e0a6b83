"""Alembic environment: online with a connection handed over by the application, offline for --sql."""

from __future__ import annotations

from alembic import context

from controlplane_adapters.sql.schema import metadata

config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        context.configure(
            url=config.get_main_option("sqlalchemy.url"),
            target_metadata=metadata,
            literal_binds=True,
            render_as_batch=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
