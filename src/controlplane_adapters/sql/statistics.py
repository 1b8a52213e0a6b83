"""Planner statistics for young Postgres tables, which autovacuum reaches too late.

Autovacuum analyzes a table once its changes pass a tenth of its rows, but it looks only once a minute
(`autovacuum_naptime`). A table that grows from nothing within that minute is planned without statistics, and
then every index looks as cheap as any other: for an execution by id Postgres took the index on
(organization_id, worker_id, status) and filtered all the organization's executions down to one (hundreds of
buffers where the primary key reads three), twice per execution round trip, and prepared statements kept that plan.

`analyze_young_tables` analyzes each of the service's tables whose changes since its last statistics
(`n_mod_since_analyze`) outnumber its rows as last counted (`reltuples`, at least MIN_CHANGES): a table that has
at least doubled. Young tables double within seconds; an established one takes hours and autovacuum has long
analyzed it by then, so this costs nothing once the database has grown. ANALYZE reads a sample (30,000 rows at
most), takes a lock that blocks no reads or writes, and invalidates the plans it makes obsolete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from controlplane_domain.errors import Unavailable

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

MIN_CHANGES = 50  # autovacuum's own analyze threshold
INTERVAL_SECONDS = 2.0  # how often the service looks (the query reads two catalog views)

_YOUNG = sa.text(
    "SELECT s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid "
    "WHERE s.schemaname = current_schema() AND s.relname = ANY(:names) "
    "AND s.n_mod_since_analyze >= GREATEST(:least, c.reltuples) ORDER BY s.relname"
)


async def analyze_young_tables(engine: AsyncEngine, names: Sequence[str]) -> list[str]:
    """ANALYZE those of the tables `names` that at least doubled since their statistics; returns their names."""
    try:
        async with engine.connect() as connection:
            found = await connection.execute(_YOUNG, {"names": list(names), "least": MIN_CHANGES})
            young = [str(name) for name in found.scalars()]
            quote = connection.dialect.identifier_preparer.quote
            for name in young:
                await connection.execute(sa.text(f"ANALYZE {quote(name)}"))
            await connection.commit()
    except (OSError, DBAPIError, sa.exc.TimeoutError) as exc:
        raise Unavailable("the database is unavailable") from exc
    return young
