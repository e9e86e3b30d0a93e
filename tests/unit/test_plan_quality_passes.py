"""The plan-quality benchmark's passes alternate their order over the configurations."""

from __future__ import annotations

import argparse

from tests.benchmarks.bench_plan_quality import Measured, pass_orders, rounds_text


def _items() -> list[Measured]:
    return [Measured("any", "grid", name, {}) for name in ("a", "b", "c")]


def _names(orders: list[list[Measured]]) -> list[str]:
    return ["".join(i.name for i in order) for order in orders]


def test_passes_alternate_forward_and_backward() -> None:
    items = _items()
    assert _names(pass_orders(items, 1, reverse=False)) == ["abc"]
    assert _names(pass_orders(items, 3, reverse=False)) == ["abc", "cba", "abc"]
    assert _names(pass_orders(items, 2, reverse=True)) == ["cba", "abc"]
    # Every pass measures the same objects, so their rounds add up per configuration.
    first, second = pass_orders(items, 2, reverse=False)
    assert {id(i) for i in first} == {id(i) for i in second}


def test_rounds_text_names_the_passes() -> None:
    args = argparse.Namespace(passes=1, rounds=3, seconds=20.0)
    assert rounds_text(args) == "3 rounds × 20 s"
    args.passes = 2
    assert rounds_text(args) == "2 passes (order alternating) × 3 rounds × 20 s"
