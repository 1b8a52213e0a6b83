"""Adapters: memory and SQL implementations of the domain's ports, auth, clock, ids, configuration."""
