"""The audit context of an operator's command (no request: the local user, no address, a new id per run)."""

from __future__ import annotations

import os
import uuid

from controlplane_adapters.audit.ids import AUDIT_IDS
from controlplane_adapters.clock import SystemClock
from controlplane_domain.audit.context import AuditContext


def cli_audit_context(command: str) -> AuditContext:
    """Who ran `command` on this machine, as far as the environment says (`USER`), as kind `cli`."""
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    return AuditContext(
        actor_subject=f"cli:{user}"[:255],
        actor_kind="cli",
        actor_role="operator",
        user_agent=command,
        request_id=str(uuid.uuid4()),
        now=SystemClock().now,
        new_id=AUDIT_IDS.new_id,
    )
