"""Logs: one format for every logger (readable text, or JSON lines), the request id on each line, no secret in any.

The request id lives in the ASGI scope (`scope["state"]["request_id"]`, set by the HTTP layer's outermost
middleware) and, for log lines, in `REQUEST_ID`, a context variable set for the request's task. Both formats
scrub what looks like a credential (a bearer token, an API key, a JWT, a webhook secret) and the configured
secrets themselves (`logging_config(secrets=...)`) from the whole line, exception text included.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from controlplane_adapters.settings.model import LOG_FORMATS

REQUEST_ID: ContextVar[str | None] = ContextVar("controlplane_request_id", default=None)
REDACTED = "[REDACTED]"
_CREDENTIALS = re.compile(
    r"(?i)(bearer\s+)[^\s'\",]+"  # an Authorization header's value
    r"|cpk_[A-Za-z0-9_-]+"  # API keys
    r"|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"  # JWTs
    r"|whsec_[A-Za-z0-9+/=]+"  # Standard Webhooks secrets
)
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"
# uvicorn's access log record: its arguments, named
_ACCESS_FIELDS = ("client", "method", "path", "http_version", "status")


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with credentials and the given secret values replaced by `[REDACTED]`."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return _CREDENTIALS.sub(lambda match: (match.group(1) or "") + REDACTED, text)


class _Scrubbing(logging.Formatter):
    def __init__(self, fmt: str | None = None, datefmt: str | None = None, secrets: Iterable[str] = ()) -> None:
        super().__init__(fmt, datefmt)
        # the longest first, so that a secret containing another is replaced whole
        self.secrets = tuple(sorted({secret for secret in secrets if secret and len(secret) >= 4}, key=len)[::-1])


class TextFormatter(_Scrubbing):
    """`time LEVEL logger [request id]: message` (`-` outside requests)."""

    def __init__(self, fmt: str | None = None, datefmt: str | None = None, secrets: Iterable[str] = ()) -> None:
        super().__init__(fmt or TEXT_FORMAT, datefmt, secrets)

    def format(self, record: logging.LogRecord) -> str:
        record.request_id = REQUEST_ID.get() or "-"
        return scrub(super().format(record), self.secrets)


class JsonFormatter(_Scrubbing):
    """One JSON object a line: time, level, logger, message, request_id (null outside requests), and exception
    (its traceback) when there is one; uvicorn's access lines also carry method, path and status."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": REQUEST_ID.get(),
        }
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            line.update(zip(_ACCESS_FIELDS, record.args, strict=True))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        return scrub(json.dumps(line, default=str), self.secrets)


def logging_config(log_format: str = "text", level: str = "info", secrets: Iterable[str] = ()) -> dict[str, Any]:
    """A `logging.config.dictConfig` for the root logger and uvicorn's: one handler (stderr), one formatter.

    Passed to uvicorn as its `log_config`, so that each server process of `serve --workers N` applies it too."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, got {log_format!r}")
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    root_level = "DEBUG" if level.lower() in ("debug", "trace") else "INFO"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"controlplane": {"()": f"{formatter.__module__}.{formatter.__name__}", "secrets": [*secrets]}},
        "handlers": {
            "controlplane": {
                "class": "logging.StreamHandler",
                "formatter": "controlplane",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"handlers": ["controlplane"], "level": root_level},
        "loggers": {
            name: {"handlers": [], "propagate": True} for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
