"""The worker's command line: `controlplane worker` (a subcommand of the service's CLI) and `controlplane-worker`
(the same flags, on its own)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from controlplane_worker.config import WorkerConfig, check_worker_config, parse_env_header

HELP = "run the reference worker against a queue"


class UsageError(ValueError):
    """A flag is missing or out of its range: the command exits 2 and says which."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ.get
    parser.add_argument("--api-url", default=env("CONTROLPLANE_API_URL"), help="control plane base URL")
    parser.add_argument(
        "--api-key",
        default=env("CONTROLPLANE_API_KEY"),
        help="a worker key (`api-keys create --role worker`) or the service key: no other key may lease",
    )
    parser.add_argument("--queue-id", default=env("CONTROLPLANE_QUEUE_ID"), help="worker queue to lease from")
    parser.add_argument("--worker-id", default=env("CONTROLPLANE_WORKER_ID"), help="default: host-pid-random")
    parser.add_argument("--environment", default=env("CONTROLPLANE_ENVIRONMENT", "default"))
    parser.add_argument("--llm-base-url", default=env("OPENAI_BASE_URL", "https://api.openai.com/v1"))
    parser.add_argument("--llm-api-key", default=env("OPENAI_API_KEY"))
    parser.add_argument("--default-model", default=env("CONTROLPLANE_DEFAULT_MODEL", "gpt-4o-mini"))
    parser.add_argument("--wait-seconds", type=float, default=20.0, help="long-poll wait per lease request (0-60)")
    parser.add_argument(
        "--llm-timeout-seconds",
        type=float,
        default=env("CONTROLPLANE_LLM_TIMEOUT_SECONDS", "120"),  # (argparse applies `type` to a text default)
        help="the longest a model may take over one answer, start to end",
    )
    parser.add_argument(
        "--llm-header",
        action="append",
        default=[],
        metavar="NAME=VARIABLE",
        help="send header NAME on each model call with VARIABLE of the run's environment, when it has it (repeat)",
    )


def add_command(commands: Any) -> None:
    """`worker` among a CLI's subcommands; it runs `run`."""
    worker = commands.add_parser("worker", help=HELP)
    add_arguments(worker)
    worker.set_defaults(run=run)


def config_of(args: argparse.Namespace) -> WorkerConfig:
    """The worker's settings from its flags; UsageError naming the flag that is missing or wrong."""
    missing = [name for name in ("api_url", "api_key", "queue_id") if not getattr(args, name)]
    if missing:
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise UsageError(
            f"the worker needs {flags} (or CONTROLPLANE_API_URL, CONTROLPLANE_API_KEY, CONTROLPLANE_QUEUE_ID)"
        )
    config = WorkerConfig(
        api_url=args.api_url,
        api_key=args.api_key,
        queue_id=args.queue_id,
        environment=args.environment,
        llm_base_url=args.llm_base_url,
        llm_api_key=args.llm_api_key,
        default_model=args.default_model,
        wait_seconds=args.wait_seconds,
        llm_timeout_seconds=args.llm_timeout_seconds,
    )
    try:
        config.llm_env_headers = dict(parse_env_header(text) for text in args.llm_header)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.worker_id:
        config.worker_id = args.worker_id
    try:
        check_worker_config(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return config


def run(args: argparse.Namespace) -> int:
    # (the worker and its HTTP client load when it runs: `controlplane serve`, which registers this subcommand,
    # never holds them: docs/benchmarks.md, "Idle memory")
    from controlplane_worker.worker import run_worker

    return run_worker(config_of(args))


def main(argv: list[str] | None = None) -> int:
    """`controlplane-worker`: the worker alone (it needs the client, not the server)."""
    parser = argparse.ArgumentParser(prog="controlplane-worker", description=HELP)
    add_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except UsageError as exc:
        print(f"controlplane-worker: configuration error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
