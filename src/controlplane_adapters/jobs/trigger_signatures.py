"""Standard Webhooks signatures (the `standardwebhooks` package): the domain's `WebhookSignatures`."""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

TOLERANCE = timedelta(minutes=5)


class _ClockedWebhook(Webhook):
    """The package's verification, its timestamp checked against the service's clock (the package reads the system
    clock; the service's is the `Clock` port, which tests move) with the same five minutes' tolerance."""

    def __init__(self, secret: str, now: datetime) -> None:
        super().__init__(secret)
        self._now = now

    def _Webhook__verify_timestamp(self, timestamp_header: str) -> datetime:  # noqa: N802 (the package's private name)
        try:
            timestamp = datetime.fromtimestamp(float(timestamp_header), tz=UTC)
        except (ValueError, OverflowError, OSError):
            raise WebhookVerificationError("Invalid Signature Headers") from None
        if timestamp < self._now - TOLERANCE:
            raise WebhookVerificationError("Message timestamp too old")
        if timestamp > self._now + TOLERANCE:
            raise WebhookVerificationError("Message timestamp too new")
        return timestamp


class StandardWebhooks:
    def new_secret(self) -> str:
        return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()

    def verify(self, secret: str, body: bytes, headers: Mapping[str, str], now: datetime) -> bool:
        try:
            _ClockedWebhook(secret, now).verify(body, dict(headers), json_parse=False)
        except (WebhookVerificationError, ValueError, binascii.Error, UnicodeDecodeError):
            return False
        return True


def sign(secret: str, webhook_id: str, timestamp: datetime, body: bytes) -> dict[str, str]:
    """The headers a sender (or a test) puts on a delivery of `body`."""
    signature = Webhook(secret).sign(webhook_id, timestamp, body.decode())
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(timestamp.timestamp())),
        "webhook-signature": signature,
    }
