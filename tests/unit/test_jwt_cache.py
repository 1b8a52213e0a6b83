"""Verified JWTs are remembered, but never past their expiry."""

from __future__ import annotations

import asyncio
import time

import pytest

from controlplane_adapters.auth import JwtVerifier
from controlplane_adapters.settings.model import AuthSettings
from controlplane_domain.errors import Unauthenticated
from tests.support import JWT_SECRET, make_jwt


async def test_a_remembered_token_is_refused_once_it_expires() -> None:
    verifier = JwtVerifier(AuthSettings(jwt_secret=JWT_SECRET, jwt_leeway_seconds=0))
    token = make_jwt("acme", sub="dashboard", expires_in=2)
    first = await verifier.verify(token)
    assert (first.organization_id, first.subject) == ("acme", "dashboard")
    assert await verifier.verify(token) == first
    deadline = time.monotonic() + 10
    while True:  # poll until the token's expiry passes: from then on it is refused, remembered or not
        try:
            await verifier.verify(token)
        except Unauthenticated:
            break
        assert time.monotonic() < deadline, "an expired token was still accepted"
        await asyncio.sleep(0.05)
    with pytest.raises(Unauthenticated):
        await verifier.verify(token)


async def test_a_token_signed_otherwise_is_refused_even_with_a_twin_remembered() -> None:
    verifier = JwtVerifier(AuthSettings(jwt_secret=JWT_SECRET))
    good = make_jwt("acme")
    await verifier.verify(good)
    forged = make_jwt("acme", secret="another-secret-that-is-long-enough-for-hs256-signatures!!")
    with pytest.raises(Unauthenticated):
        await verifier.verify(forged)
