"""The operator dashboard: static assets in the package, served at /dashboard (docs/operations.md)."""
