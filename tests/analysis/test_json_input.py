"""JSON input read by orjson (the fast path) answers exactly what the json module answers: the same values, of the
same types, and a duplicate key refused naming it, wherever it stands and whatever the text holds besides (colons
in strings, a colon written as an escape, integers beyond 64 bits, NaN)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis import load_documents
from bot.analysis.loader import _fast_json
from bot.errors import BadInput


def same(a: Any, b: Any) -> bool:
    """Equal with types: ``True`` is not ``1``, ``1`` is not ``1.0``, NaN is NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


KEYS = st.text(alphabet=st.sampled_from('ab:"\\é/ \u2028'), max_size=4)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('xy:"\\{}[],\u00e9\U0001f600'), max_size=6)
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=12)  # fmt: skip


def obj_text(body: dict[str, Any], *, ensure_ascii: bool) -> str:
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": body}
    return json.dumps(doc, ensure_ascii=ensure_ascii)


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(KEYS, VALUES, max_size=4), ensure_ascii=st.booleans())
def test_any_json_object_reads_as_the_json_module_reads_it(body: dict[str, Any], ensure_ascii: bool) -> None:
    text = obj_text(body, ensure_ascii=ensure_ascii)
    [obj] = load_documents(text, "t.json")
    assert same(obj, json.loads(text))
    [read] = load_documents(text.encode(), "t.json")  # a file's bytes: parsed without being decoded first
    assert same(read, obj)


@settings(max_examples=300, deadline=None)
@given(body=st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), data=st.data())
def test_a_key_given_twice_is_refused_wherever_it_stands(body: dict[str, Any], data: st.DataObject) -> None:
    text = obj_text(body, ensure_ascii=data.draw(st.booleans()))
    key = json.dumps(data.draw(st.sampled_from(sorted(body))))
    at = text.index('"data": {') + len('"data": {')
    doubled = f"{text[:at]}{key}: {data.draw(VALUES.map(json.dumps))}, {text[at:]}"  # the same key, first
    with pytest.raises(BadInput, match="duplicate key"):
        load_documents(doubled, "t.json")
    with pytest.raises(BadInput, match="duplicate key"):
        load_documents(doubled.encode(), "t.json")


@pytest.mark.parametrize(
    "text",
    [
        # a duplicate beside a colon written as an escape: one colon more, one fewer; the counts alone would agree
        '{"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x\\u003ay", "b": "1", "b": "2"}}',
        '{"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x\\u003Ay", "b": "1", "b": "2"}}',
        # in an object inside a list, the value holding colons of its own
        '{"kind": "ConfigMap", "metadata": {"name": "c"}, "items": [{"k": "a:b:c", "k": "d"}]}',
        # beside an integer beyond 64 bits
        '{"kind": "ConfigMap", "metadata": {"name": "c", "name": "d"}, "n": 123456789012345678901234567890}',
    ],
)
def test_duplicates_the_colon_count_cannot_see_are_refused_all_the_same(text: str) -> None:
    for data in (text, text.encode()):
        with pytest.raises(BadInput, match="duplicate key"):
            load_documents(data, "t.json")


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ('{"n": 999999999999999999}', True),  # 18 digits: fits 64 bits, orjson reads it as an integer
        ('{"n": 18446744073709551616}', False),  # 19 digits or more: may not fit (orjson: a float)
        ('{"n": -9223372036854775809}', False),
        ('{"n": [1,\n  123456789012345678901]}', False),
        ('{"n":-123456789012345678901}', False),
        ('{"image": "web@sha256:ab12345678901234567890123cd"}', True),  # digits in a string, after a letter
        ('{"n": NaN}', False),  # the json module's extension; orjson refuses it
        ('{"s": "\\ud800"}', False),  # a lone surrogate
        ('{"s": "a\\u003ab"}', False),  # a colon as an escape
        ('{"s": "a\\u003cb\\u003e\\u0026"}', True),  # <, > and & as Go's JSON (kubectl's) writes them
        ('{"s": "a:b", "t": {"u": [1, 2.5, true, null]}}', True),
    ],
)
def test_what_orjson_would_read_differently_goes_to_the_json_module(text: str, fast: bool) -> None:
    assert (_fast_json(text) is not None) is fast
    assert (_fast_json(text.encode("utf-8", "surrogatepass")) is not None) is fast
    assert same(load_documents(text.replace("{", '{"kind": "C", "metadata": {"name": "c"}, ', 1), "t.json")[0],
                json.loads(text.replace("{", '{"kind": "C", "metadata": {"name": "c"}, ', 1)))  # fmt: skip
