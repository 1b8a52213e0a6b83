"""Policies: Rego modules evaluated before the guarded actions, and the log of their decisions."""
