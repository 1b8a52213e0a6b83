"""A local S3 server (moto's, from PyPI) for the S3 storage backend's tests, and buckets of one test each."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def moto_server() -> Iterator[str]:
    """Start moto's threaded server on a free loopback port; its endpoint URL until the session ends."""
    from moto.server import ThreadedMotoServer  # (only the sessions that use S3 pay its import)

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def new_bucket(endpoint: str) -> str:
    """A fresh, empty bucket on the server."""
    name = f"test-{uuid.uuid4().hex[:20]}"
    boto3.client("s3", endpoint_url=endpoint, region_name=REGION, **CREDENTIALS).create_bucket(Bucket=name)
    return name
