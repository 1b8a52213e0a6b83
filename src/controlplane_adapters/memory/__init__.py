"""In-memory adapters: real, transactional implementations of every port (for embedders and tests).

`MemoryStore` and its unit of work are imported on first use (PEP 562): the store is made of every area's
repositories (`controlplane_adapters/areas.py`), whose memory modules are in this package, so importing the store
here, eagerly, would make `areas.py` impossible to import first."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryHealthProbe, MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryHealthProbe", "MemoryStore", "MemoryUnitOfWork"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from controlplane_adapters.memory import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
