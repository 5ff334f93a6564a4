"""``collapse.metrics.observe_each``: a page's group sizes recorded as one ``observe`` each."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram

from collapse.metrics import observe_each

_BUCKETS = (1, 2, 3, 5, 10, 20, 50, 100, 500, 1000, 5000)


def _samples(registry: CollectorRegistry) -> dict[tuple[str, str], float]:
    return {
        (s.name, s.labels.get("le", "")): s.value
        for metric in registry.collect()
        for s in metric.samples
        if not s.name.endswith("_created")
    }


@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_observe_each_records_what_observe_records(amounts: list[int]) -> None:
    one, each = CollectorRegistry(), CollectorRegistry()
    by_one = Histogram("sizes", "sizes", buckets=_BUCKETS, registry=one)
    by_each = Histogram("sizes", "sizes", buckets=_BUCKETS, registry=each)
    for amount in amounts:
        by_one.observe(amount)
    observe_each(by_each, amounts)
    assert _samples(each) == _samples(one)
