"""The process's memory budget on plain data: what each review is charged, the two lanes, the
order waiters are let in, refusals, the caller gone while waiting, and the default taken from the
cgroup's limit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from app.server.budget import (
    ADMISSION_FACTOR,
    ADMISSION_RESERVE,
    PACKED_FACTOR,
    RESIDENT,
    STREAMED_FACTOR,
    SUPERVISOR,
    Budget,
    BudgetRefused,
    CallerGone,
    Reservation,
    cgroup_limit,
    charge,
    default_budget,
    default_max_connections,
    request_timeout,
    workers_that_fit,
)

MiB = 1024 * 1024


def test_a_review_is_charged_what_answering_it_peaks_at() -> None:
    assert charge("admission", 1000, 256) == 1000 * ADMISSION_FACTOR
    assert charge("convert", 200, 256) == 200 * ADMISSION_FACTOR  # decoded whole
    assert charge("convert", 1000, 256) == 1000 * STREAMED_FACTOR  # one object at a time
    assert charge("convert", 64 * MiB, 256) == 112 * MiB  # its answer held compressed
    # The largest review a conversion may send fits the conversions' share of a 256Mi pod's budget.
    assert charge("convert", 64 * MiB, 256) <= default_budget(1, 256 * MiB) - ADMISSION_RESERVE
    assert charge("admission", 0, 256) > 0


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_reservations_wait_their_turn_in_order_of_arrival() -> None:
    async def scenario() -> list[str]:
        budget = Budget(100, admission_reserve=0)
        order: list[str] = []
        await budget.acquire("convert", 60, wait=5)

        async def take(name: str, amount: int) -> None:
            await budget.acquire("convert", amount, wait=5)
            order.append(name)

        first = asyncio.create_task(take("first", 60))
        await asyncio.sleep(0)
        second = asyncio.create_task(take("second", 10))  # fits now, but waits behind the first
        await asyncio.sleep(0.05)
        assert order == [] and budget.in_use == 60
        budget.release(60)
        await asyncio.gather(first, second)
        assert budget.in_use == 70
        return order

    assert run(scenario()) == ["first", "second"]


def test_conversions_always_leave_the_admission_reserve() -> None:
    async def scenario() -> None:
        budget = Budget(100, admission_reserve=30)
        await budget.acquire("convert", 70, wait=1)
        assert not budget.try_reserve("convert", 1)
        # Admission reviews are let in beside the conversions, up to the whole budget.
        await budget.acquire("admission", 30, wait=1)
        assert budget.in_use == 100

    run(scenario())


def test_an_admission_review_does_not_queue_behind_waiting_conversions() -> None:
    async def scenario() -> None:
        budget = Budget(100, admission_reserve=10)
        await budget.acquire("convert", 80, wait=1)
        waiting = asyncio.create_task(budget.acquire("convert", 50, wait=5))
        await asyncio.sleep(0.01)
        await asyncio.wait_for(budget.acquire("admission", 15, wait=5), 1)
        budget.release(80)
        budget.release(15)
        await waiting
        assert budget.in_use == 50

    run(scenario())


def test_a_waiting_admission_review_keeps_conversions_out() -> None:
    async def scenario() -> None:
        budget = Budget(100, admission_reserve=10)
        await budget.acquire("admission", 60, wait=1)
        admission = asyncio.create_task(budget.acquire("admission", 50, wait=5))
        await asyncio.sleep(0.01)
        # 30 would fit beside the 60 held, but not beside the 50 an admission review waits for.
        assert not budget.try_reserve("convert", 30)
        budget.release(60)
        await admission
        assert budget.in_use == 50

    run(scenario())


def refusals(code: str) -> float:
    return REGISTRY.get_sample_value("dynamo_webhook_memory_budget_refusals_total", {"code": code}) or 0.0


def in_use() -> float:
    return REGISTRY.get_sample_value("dynamo_webhook_memory_budget_bytes", {"state": "in_use"}) or 0.0


def test_past_its_wait_a_request_is_refused_503_holding_nothing() -> None:
    counted, held_before = refusals("503"), in_use()

    async def scenario() -> None:
        budget = Budget(100, admission_reserve=0)
        await budget.acquire("convert", 100, wait=1)
        with pytest.raises(BudgetRefused) as refused:
            await budget.acquire("convert", 10, wait=0.05, poll=0.01)
        assert refused.value.code == 503
        assert refused.value.message == (
            "the server's memory budget (0 MiB) stayed in use by other requests for 0.05 s; retry"
        )
        budget.release(100)
        assert budget.in_use == 0
        assert refusals("503") == counted + 1
        assert in_use() == held_before
        await budget.acquire("convert", 100, wait=0)  # nobody left queued

    run(scenario())


def test_what_could_never_fit_is_refused_413_at_once() -> None:
    async def scenario() -> None:
        budget = Budget(100 * MiB, admission_reserve=20 * MiB)
        with pytest.raises(BudgetRefused) as refused:
            await budget.acquire("convert", 90 * MiB, wait=5)
        assert refused.value.code == 413
        assert refused.value.message == (
            "answering it needs about 90 MiB of memory, more than this server's 80 MiB budget for such "
            "reviews (--memory-budget)"
        )
        await budget.acquire("admission", 90 * MiB, wait=0)

    run(scenario())


def test_a_caller_gone_while_waiting_holds_nothing_and_frees_its_turn() -> None:
    async def scenario() -> None:
        budget = Budget(100, admission_reserve=0)
        await budget.acquire("convert", 90, wait=1)
        gone = False
        waiter = asyncio.create_task(budget.acquire("convert", 50, wait=5, gone=lambda: gone, poll=0.01))
        behind = asyncio.create_task(budget.acquire("convert", 10, wait=5))
        await asyncio.sleep(0.03)
        gone = True
        with pytest.raises(CallerGone):
            await waiter
        await asyncio.wait_for(behind, 1)  # the one behind is let in as soon as the first leaves
        assert budget.in_use == 100

    run(scenario())


def test_a_cancelled_waiter_holds_nothing() -> None:
    async def scenario() -> None:
        budget = Budget(100, admission_reserve=0)
        await budget.acquire("convert", 100, wait=1)
        waiter = asyncio.create_task(budget.acquire("convert", 50, wait=5))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        budget.release(100)
        assert budget.in_use == 0

    run(scenario())


def test_memory_is_handed_back_when_the_budget_goes_idle_after_large_work() -> None:
    calls: list[int] = []

    async def scenario() -> None:
        budget = Budget(100 * MiB, on_idle=lambda: calls.append(1), idle_after=8 * MiB)
        await budget.acquire("convert", 1 * MiB, wait=0)
        budget.release(1 * MiB)
        assert calls == []  # small work: not worth a trim
        await budget.acquire("convert", 5 * MiB, wait=0)
        await budget.acquire("admission", 5 * MiB, wait=0)
        budget.release(5 * MiB)
        assert calls == []  # not idle yet
        budget.release(5 * MiB)
        assert calls == [1]

    run(scenario())


def test_an_undeclared_body_reserves_as_it_arrives_and_never_waits() -> None:
    async def scenario() -> None:
        budget = Budget(10 * MiB, admission_reserve=0)
        reservation = Reservation(budget, "convert", 1024)
        reservation.grow(100)
        assert budget.in_use == 100 * ADMISSION_FACTOR
        reservation.grow(MiB)  # streamed from here: charged less than the small body was
        assert budget.in_use == MiB * STREAMED_FACTOR
        other = Reservation(budget, "convert", 1024)
        with pytest.raises(BudgetRefused) as busy:
            other.grow(4 * MiB)
        assert busy.value.code == 503
        with pytest.raises(BudgetRefused) as never:
            reservation.grow(6 * MiB)
        assert never.value.code == 413
        reservation.release()
        other.release()
        assert budget.in_use == 0

    run(scenario())


def test_a_declared_length_is_reserved_whole_before_the_body() -> None:
    async def scenario() -> None:
        budget = Budget(100 * MiB, admission_reserve=0)
        reservation = Reservation(budget, "convert", 1024)
        await reservation.acquire(10 * MiB, wait=0, gone=None)
        assert budget.in_use == int(10 * MiB * PACKED_FACTOR)
        reservation.grow(10 * MiB)  # nothing more
        assert budget.in_use == int(10 * MiB * PACKED_FACTOR)
        reservation.release()
        reservation.release()  # once only
        assert budget.in_use == 0

    run(scenario())


@pytest.mark.parametrize(
    ("text", "limit"),
    [("max\n", None), ("268435456\n", 256 * MiB), ("9223372036854771712\n", None), ("junk", None)],
)
def test_the_cgroup_limit_is_read_from_v2_or_v1(tmp_path: Path, text: str, limit: int | None) -> None:
    path = tmp_path / "memory.max"
    path.write_text(text)
    assert cgroup_limit((tmp_path / "absent", path)) == limit


def test_no_cgroup_file_means_no_limit(tmp_path: Path) -> None:
    assert cgroup_limit((tmp_path / "a", tmp_path / "b")) is None


def test_the_default_budget_shares_the_limit_among_workers() -> None:
    assert default_budget(1, 256 * MiB) == 128 * MiB
    # Several workers share what their supervisor leaves.
    assert default_budget(2, 608 * MiB) == 128 * MiB
    assert default_budget(2, 512 * MiB) == 80 * MiB
    assert default_budget(4, 256 * MiB) == 32 * MiB  # the floor
    assert default_budget(1, None) == 512 * MiB


@pytest.mark.parametrize(
    "limit", [160 * MiB, 256 * MiB, 415 * MiB, 416 * MiB, 608 * MiB, 1024 * MiB, 4096 * MiB]
)
def test_the_workers_that_fit_keep_the_default_budget_true(limit: int) -> None:
    """As many workers as fit, each with at least the floor: the processes at rest and their budgets
    add up to no more than the limit; one more would not."""
    fit = workers_that_fit(limit)
    assert fit is not None and fit >= 1

    def needs(workers: int) -> int:
        held = workers * (RESIDENT + default_budget(workers, limit))
        return held if workers == 1 else SUPERVISOR + held

    assert needs(fit) <= limit
    assert needs(fit + 1) > limit
    assert workers_that_fit(None) is None


@pytest.mark.parametrize(
    ("query", "seconds"),
    [
        (b"timeout=10s", 10.0),
        (b"a=b&timeout=1m0s", 60.0),
        (b"timeout=1.5s", 1.5),
        (b"timeout=500ms", 0.5),
        (b"timeout=2h", 7200.0),
        (b"", None),
        (b"timeout=", None),
        (b"timeout=10", None),
        (b"timeout=10sx", None),
        (b"timeouts=10s", None),
    ],
)
def test_the_api_servers_timeout_is_read_from_the_url(query: bytes, seconds: float | None) -> None:
    assert request_timeout(query) == seconds


@pytest.mark.parametrize(
    ("workers", "limit", "budget", "connections"),
    [
        (1, None, default_budget(1, None), 1000),  # no limit
        (1, 256 * MiB, default_budget(1, 256 * MiB), 128),  # deploy/'s pod: 40 MiB beside the budget
        (2, 608 * MiB, default_budget(2, 608 * MiB), 128),  # each worker's share is the same
        (1, 256 * MiB, 96 * MiB, 230),  # a smaller budget leaves room for more
        (1, 128 * MiB, default_budget(1, 128 * MiB), 64),  # the fewest
        (1, 4096 * MiB, 512 * MiB, 1000),  # the most
    ],
)
def test_the_default_connection_limit_is_what_the_memory_leaves(
    workers: int, limit: int | None, budget: int, connections: int
) -> None:
    assert default_max_connections(workers, limit, budget) == connections
