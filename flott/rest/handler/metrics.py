"""Flink's metric query conventions, shared by every ``…/metrics`` endpoint.

* ``GET …/metrics`` lists the available metric ids (``[{"id": …}]``);
  ``?get=a,b`` returns their values as strings (``[{"id": "a", "value": "…"}]``),
  silently skipping unknown ids.
* Aggregating endpoints (``/jobs/metrics``, ``/taskmanagers/metrics``,
  ``…/subtasks/metrics``) combine one value per component and return
  ``[{"id", "min", "max", "avg", "sum", "skew"}]``, restricted by ``?agg=``.

The bodies are bare JSON arrays on the wire (Flink's spec shows objects there;
its generated schema is wrong for these).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from flott.errors import RestRequestError
from flott.rest.handler.handler import HandlerRequest, QueryParam
from flott.rest.messages.common import AggregatedMetric, Metric

AGGREGATIONS = ("min", "max", "avg", "sum", "skew")

GET_PARAM = QueryParam("get", "Comma-separated list of metric ids to return.")
_ONE_AGG = "(" + "|".join("".join(f"[{c}{c.upper()}]" for c in a) for a in AGGREGATIONS) + ")"
AGG_PARAM = QueryParam(
    "agg",
    "Comma-separated aggregations: min, max, sum, avg, skew (default: all).",
    # What requested_aggregations accepts: comma-separated, any case, blanks around items and
    # empty items ignored (written out for ECMA-262 regexes, which have no inline flags).
    {"type": "string", "pattern": rf"^\s*{_ONE_AGG}?\s*(,\s*{_ONE_AGG}?\s*)*$"},
)


def format_value(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def numeric_metrics(metrics: dict[str, float | str]) -> dict[str, float]:
    """The metrics an aggregation can combine: numbers, and strings that parse as one (Flink skips
    the others, e.g. a distribution's or a string gauge's text)."""
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, str):
            try:
                out[name] = float(value)
            except ValueError:
                continue
        else:
            out[name] = value
    return out


def metric_collection(req: HandlerRequest, available: Mapping[str, float | str]) -> list[Metric]:
    wanted = req.query_list("get")
    if not wanted:
        return [Metric(id=name) for name in sorted(available)]
    return [
        Metric(id=name, value=v if isinstance(v, str) else format_value(v))
        for name in wanted
        if (v := available.get(name)) is not None
    ]


def requested_aggregations(req: HandlerRequest) -> list[str]:
    aggs = [a.lower() for a in req.query_list("agg")] or list(AGGREGATIONS)
    bad = [a for a in aggs if a not in AGGREGATIONS]
    if bad:
        raise RestRequestError(
            f"Bad request, could not parse parameters: agg must be among {', '.join(AGGREGATIONS)}, "
            f"got {bad}."
        )
    return aggs


def aggregated_metrics(
    req: HandlerRequest, components: Sequence[Mapping[str, float]]
) -> list[AggregatedMetric]:
    wanted = req.query_list("get")
    aggs = requested_aggregations(req)
    if not wanted:
        return [AggregatedMetric(id=name) for name in sorted({n for c in components for n in c})]
    out = []
    for name in wanted:
        values = [float(c[name]) for c in components if name in c]
        if not values:
            continue
        total = sum(values)
        avg = total / len(values)
        biggest = max(values)
        computed = {
            "min": min(values),
            "max": biggest,
            "avg": avg,
            "sum": total,
            "skew": (biggest - avg) / biggest * 100.0 if biggest else 0.0,
        }
        out.append(AggregatedMetric(id=name, **{a: computed[a] for a in aggs}))
    return out


_RANGE = r"[0-9]+(-[0-9]+)?"
_RANGE_ITEM = re.compile(rf"^{_RANGE}$")
SUBTASKS_PARAM = QueryParam(
    "subtasks",
    "Subtask indices, e.g. '1,3,5-9'.",
    # What parse_ranges accepts: ASCII digits (int() would also take '+1', '1_0' and other scripts).
    {"type": "string", "pattern": rf"^\s*({_RANGE})?\s*(,\s*({_RANGE})?\s*)*$"},
)


def parse_ranges(spec: str | None, upper: int) -> set[int] | None:
    """``"1,3,5-9"`` → {1, 3, 5, 6, 7, 8, 9} (bounded by ``upper``); None means all."""
    if not spec:
        return None
    out: set[int] = set()
    for item in (s.strip() for s in spec.split(",") if s.strip()):
        if not _RANGE_ITEM.match(item):
            raise RestRequestError(
                f"Bad request, could not parse parameters: subtasks must look like '1,3,5-9', got {spec!r}."
            )
        lo, _, hi = item.partition("-")
        out.update(range(int(lo), min(int(hi or lo), upper - 1) + 1))
    return out
