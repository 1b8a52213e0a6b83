"""Agent Control Plane domain: entities, rules, errors, ports and use cases (no framework, no adapter)."""
