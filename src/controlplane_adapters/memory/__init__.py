"""In-memory adapters: real, transactional implementations of every port (for embedders and tests)."""

from controlplane_adapters.memory.store import MemoryStore, MemoryUnitOfWork

__all__ = ["MemoryStore", "MemoryUnitOfWork"]
