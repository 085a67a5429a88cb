"""Rates and time shares as pure code with a fake clock (Flink's MeterView and TimerGauge rules)."""

from __future__ import annotations

from flott.runtime.metrics.metrics import UPDATE_INTERVAL_SECONDS, MeterView, TaskTimeViews


class Source:
    """A counter a task thread would advance: ``rate`` events per second of fake time."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.count = 0

    def advance(self, seconds: float) -> None:
        self.count += int(self.rate * seconds)


def test_a_meter_shows_the_true_rate_from_its_first_update_and_a_60s_window_after() -> None:
    src = Source(2000)
    now = 100.0
    meter = MeterView(60, now, lambda: src.count)
    assert meter.time_span_in_seconds == 60
    assert meter.get_rate() == 0.0
    for _ in range(12):  # the first minute: history still filling
        src.advance(UPDATE_INTERVAL_SECONDS)
        now += UPDATE_INTERVAL_SECONDS
        meter.update(now)
        assert meter.get_rate() == 2000.0
    src.rate = 500  # the source slows down: the window slides, Flink's rule (newest - oldest) / 60
    rates = []
    for _ in range(12):
        src.advance(UPDATE_INTERVAL_SECONDS)
        now += UPDATE_INTERVAL_SECONDS
        meter.update(now)
        rates.append(meter.get_rate())
    assert rates[0] == (2000 * 55 + 500 * 5) / 60
    assert rates == sorted(rates, reverse=True)
    assert rates[-1] == 500.0, "a full minute at the new rate"


def test_span_rounds_down_to_the_update_interval_and_never_below_it() -> None:
    assert MeterView(62, 0.0).time_span_in_seconds == 60
    assert MeterView(3, 0.0).time_span_in_seconds == UPDATE_INTERVAL_SECONDS


def test_an_update_right_after_creation_derives_no_rate_from_a_sliver_of_time() -> None:
    meter = MeterView(60, 0.0)
    meter.mark_event(1000)
    meter.update(0.2)
    assert meter.get_rate() == 0.0
    meter.update(5.0)
    assert meter.get_rate() == 200.0


def test_time_shares_are_ms_per_second_of_the_last_interval_and_sum_to_at_most_1000() -> None:
    acc = {"busy": 0, "idle": 0, "bp": 0}
    views = TaskTimeViews(lambda: (acc["busy"], acc["idle"], acc["bp"]), 0.0)
    acc.update(busy=2_000_000_000, idle=2_500_000_000, bp=500_000_000)  # 5 s: 40 % / 50 % / 10 %
    views.update(5.0)
    assert (views.busy, views.idle, views.back_pressured) == (400.0, 500.0, 100.0)
    # A batch that straddled the update: its busy time lands in one interval with the idle time.
    acc["busy"] += 4_000_000_000
    acc["idle"] += 2_000_000_000
    views.update(10.0)
    assert views.idle == 400.0
    assert views.busy == 600.0, "capped at what idle and back-pressured time leave"
    assert views.busy + views.idle + views.back_pressured <= 1000.0
    views.update(10.0)  # no time passed: nothing changes
    assert views.idle == 400.0
