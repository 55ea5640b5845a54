"""``bot.analysis.quantity`` reads quantities as the Kubernetes client's ``parse_quantity``, which it replaces."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes.utils.quantity import parse_quantity as client_parse_quantity

from bot.analysis.quantity import parse_quantity

_TEXT = st.text(alphabet="0123456789+-.eE_ nmukKMGTPEi", max_size=12) | st.sampled_from(
    ["", "NaN", "-Infinity", "inf", "1e999999999", "1Ei", "1ki", "1mi", "0.1m", " 2Gi", "1e-3k"]
)


def _outcome(parse: Callable[[Any], Decimal], value: object) -> str:
    try:
        return repr(parse(value))
    except ValueError:
        return "ValueError"


@settings(max_examples=2000, deadline=None)
@given(st.one_of(_TEXT, st.integers(), st.floats(), st.builds(lambda n, s: f"{n}{s}", st.integers(), _TEXT)))
def test_the_same_value_or_error_as_the_kubernetes_client(value: str | int | float) -> None:
    assert _outcome(parse_quantity, value) == _outcome(client_parse_quantity, value)


@pytest.mark.parametrize(
    ("text", "number"),
    [("1000m", "1"), ("2Gi", "2147483648"), ("2048Mi", "2147483648"), ("1.5k", "1500"), ("100n", "0.0000001")],
)
def test_common_quantities(text: str, number: str) -> None:
    assert parse_quantity(text) == Decimal(number)


@pytest.mark.parametrize("text", ["1ki", "1mi", "abc", "1Xi", "m"])
def test_what_is_not_a_quantity_raises_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(text)
