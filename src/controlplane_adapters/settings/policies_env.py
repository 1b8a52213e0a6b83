"""The policy processes' settings from the environment (CONTROLPLANE_POLICY_*; no YAML keys)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from controlplane_adapters.settings.policies import PolicySettings
from controlplane_adapters.settings.values import parse_int

_INTEGERS = {
    "CONTROLPLANE_POLICY_PROCESSES": ("processes", 1, 64),
    "CONTROLPLANE_POLICY_EVALUATION_TIMEOUT_MS": ("evaluation_timeout_ms", 10, 60_000),
    "CONTROLPLANE_POLICY_COMPILE_TIMEOUT_MS": ("compile_timeout_ms", 100, 600_000),
    "CONTROLPLANE_POLICY_MEMORY_MB": ("memory_mb", 64, 65_536),
}


def policy_settings(env: Mapping[str, str], settings: PolicySettings | None = None) -> PolicySettings:
    """`settings` (the defaults) with the CONTROLPLANE_POLICY_* variables applied and checked."""
    settings = settings or PolicySettings()
    for name, (field, minimum, maximum) in _INTEGERS.items():
        if (value := env.get(name)) is not None:
            settings = replace(settings, **{field: parse_int(name, value, minimum=minimum, maximum=maximum)})
    return settings
