"""Runners: the fleet seen by host, the organization's workers grouped by the runner or host they report."""
