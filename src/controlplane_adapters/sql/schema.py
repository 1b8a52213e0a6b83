"""The whole schema: every area's tables, registered on the one `metadata` (columns.py).

Alembic's env.py, the tests and `create_all` read `metadata` from here, where it is complete: an area's table
joins it when its module is imported, and `areas.py` imports every area (its line names the area's tables)."""

from __future__ import annotations

from controlplane_adapters.areas import TABLES
from controlplane_adapters.sql.columns import metadata

__all__ = ["TABLES", "metadata"]
