"""The background workflows' merge of every newest-first kind into one window, across the kinds' reading chunks
(MAX_LIMIT rows at a time): every window of the merged list is the slice of the whole list sorted newest first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane_domain.background.entity import BackgroundRun, BackgroundStatus, BackgroundType
from controlplane_domain.background.usecases import _merged_window, _stream
from controlplane_domain.paging import MAX_LIMIT, PageRequest

START = datetime(2026, 1, 1, tzinfo=UTC)


def item(kind: BackgroundType, index: int, second: int) -> BackgroundRun:
    return BackgroundRun(
        id=f"{kind.value}-{index:05d}", type=kind, status=BackgroundStatus.RUNNING,
        started_at=START + timedelta(seconds=second), finished_at=None,
    )  # fmt: skip


def reader(items: list[BackgroundRun]):  # type: ignore[no-untyped-def]
    ordered = sorted(items, key=lambda run: (run.started_at, run.id), reverse=True)

    async def read(window: PageRequest) -> tuple[list[BackgroundRun], int]:
        return ordered[window.offset : window.offset + window.limit], len(ordered)

    return read


@settings(max_examples=40, deadline=None)
@given(
    counts=st.tuples(*(st.integers(0, 2 * MAX_LIMIT + 30) for _ in BackgroundType)),
    spread=st.integers(1, 60),
    offset=st.integers(0, 4 * MAX_LIMIT + 60),
    limit=st.integers(1, MAX_LIMIT),
)
async def test_every_window_is_the_slice_of_the_whole_list(
    counts: tuple[int, ...], spread: int, offset: int, limit: int
) -> None:
    """Each kind's runs start at times drawn from `spread` seconds (ties broken by id), kinds interleaved."""
    items = [
        item(kind, index, (index * 7919 + position) % spread)
        for position, (kind, count) in enumerate(zip(BackgroundType, counts, strict=True))
        for index in range(count)
    ]
    page = PageRequest(limit=limit, offset=offset)
    streams = []
    for kind in BackgroundType:
        read = reader([run for run in items if run.type is kind])
        first, total = await read(PageRequest(limit=min(MAX_LIMIT, offset + limit)))
        streams.append(_stream(read, first, total))
    window = await _merged_window(streams, page)
    whole = sorted(items, key=lambda run: (run.started_at, run.id), reverse=True)
    assert [run.id for run in window] == [run.id for run in whole[offset : offset + limit]]
