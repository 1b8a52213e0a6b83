"""In-memory adapters: real, transactional implementations of every port (for embedders and tests)."""

from controlplane_adapters.memory.store import MemoryHealthProbe, MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryHealthProbe", "MemoryStore", "MemoryUnitOfWork"]
