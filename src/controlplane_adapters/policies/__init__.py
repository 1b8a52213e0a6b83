"""Policies: their stores (memory, SQL) and the Rego engine (regopy)."""
