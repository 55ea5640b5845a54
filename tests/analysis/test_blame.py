"""``argo-why blame`` prints what kubectl-blame prints.

The reference is kubectl-blame's own test data, copied byte for byte into
tests/scenarios/corpus/kubectl-blame/, and its marshal_test.go expectation; the rest pins
down time formats, Lists, Secret masking and Go's YAML string quoting.
"""

from __future__ import annotations

import copy
import re
import string
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.analysis.blame import _human_duration, _yaml_string, blame, blame_many
from bot.errors import BadInput
from tests.paths import CORPUS

KUBECTL_BLAME = CORPUS / "kubectl-blame"
NOW = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)


def _corpus(name: str) -> Path:
    return KUBECTL_BLAME / name


def _entry(manager: str, fields: dict[str, Any], operation: str = "Update", time: str | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": manager}
    e["operation"] = operation
    if time is not None:
        e["time"] = time
    return e


def _config_map(*entries: dict[str, Any], **data: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "managedFields": list(entries)},
        "data": data,
    }


# --- kubectl-blame's own expectations ----------------------------------------------------------


@pytest.mark.parametrize("name", ["deploy.yaml", "list.yaml", "multi-manager-list-item.yaml"])
def test_corpus_output_is_byte_for_byte_kubectl_blames(name: str) -> None:
    source = _corpus(name)
    expected = _corpus(name + ".txt").read_text(encoding="utf-8")
    objs = [doc for doc in yaml.safe_load_all(source.read_text(encoding="utf-8")) if doc is not None]
    assert blame_many(objs, time_format="none") == expected


def test_single_document_of_the_corpus_through_blame() -> None:
    docs = list(yaml.safe_load_all(_corpus("deploy.yaml").read_text(encoding="utf-8")))
    expected = _corpus("deploy.yaml.txt").read_text(encoding="utf-8").split("---\n")
    assert [blame(d) for d in docs] == expected


def _set_json(*paths: tuple[str, ...]) -> dict[str, Any]:
    """FieldsV1 of a set of paths, as structured-merge-diff's ToJSON writes it (a path is a member)."""
    root: dict[str, Any] = {}
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
    # A member with children carries "."; a member without children is just {}.
    for path in paths:
        if any(len(p) > len(path) and p[: len(path)] == path for p in paths):
            node = root
            for element in path:
                node = node[element]
            node["."] = {}
    return root


def test_marshal_test_go_expectation() -> None:
    """kubectl-blame's TestMarshaller_MarshalMetaObject: full times, set members, co-owners, no time."""
    uid = 'k:{"uid":"72594682-7b8d-4d52-bb84-8cab3cd2e16f"}'
    s1 = _set_json(
        ("f:metadata", "f:finalizers"),
        ("f:metadata", "f:finalizers", 'v:"service.kubernetes.io/load-balancer-cleanup"'),
        ("f:metadata", "f:labels"),
        ("f:metadata", "f:labels", "f:app"),
        ("f:metadata", "f:ownerReferences"),
        ("f:metadata", "f:ownerReferences", uid),
        ("f:ownerReferences", uid, "f:kind"),
        ("f:ownerReferences", uid, "f:apiVersion"),
        ("f:spec", "f:serviceAccountName"),
    )
    c1 = 'k:{"name":"c1"}'
    tcp = 'k:{"containerPort":53,"protocol":"TCP"}'
    udp = 'k:{"containerPort":53,"protocol":"UDP"}'
    s2 = _set_json(
        ("f:metadata", "f:finalizers", 'v:"service.kubernetes.io/foo"'),
        ("f:spec", "f:serviceAccountName"),
        ("f:spec", "f:containers", c1),
        ("f:spec", "f:containers", c1, "f:image"),
        ("f:spec", "f:containers", c1, "f:ports"),
        ("f:spec", "f:containers", c1, "f:ports", tcp),
        ("f:spec", "f:containers", c1, "f:ports", tcp, "f:containerPort"),
        ("f:spec", "f:containers", c1, "f:ports", tcp, "f:protocol"),
    )
    s3 = _set_json(
        ("f:spec", "f:containers", c1, "f:ports", udp),
        ("f:spec", "f:containers", c1, "f:ports", udp, "f:containerPort"),
        ("f:spec", "f:containers", c1, "f:ports", udp, "f:protocol"),
    )
    s4 = _set_json(("f:metadata", "f:labels", "f:s4"))
    when = "2020-11-23T16:52:45Z"
    pod = {
        "metadata": {
            "creationTimestamp": None,
            "managedFields": [
                _entry("m1", s1, time=when),
                _entry("m2", s2, time=when),
                _entry("m3", s3, time=when),
                _entry("m4", s4),
            ],
            "labels": {"app": "bar", "version": "v1", "s4": "v"},
            "finalizers": ["service.kubernetes.io/load-balancer-cleanup", "service.kubernetes.io/foo"],
            "ownerReferences": [
                {
                    "apiVersion": "",
                    "kind": "ReplicaSet",
                    "name": "bar-xxxx",
                    "uid": "72594682-7b8d-4d52-bb84-8cab3cd2e16f",
                }
            ],
        },
        "spec": {
            "serviceAccountName": "foo",
            "containers": [
                {
                    "name": "c1",
                    "image": "image:latest",
                    "ports": [
                        {"name": "tcp", "containerPort": 53, "protocol": "TCP"},
                        {"name": "udp", "containerPort": 53, "protocol": "UDP"},
                    ],
                    "resources": {},
                }
            ],
        },
        "status": {},
    }
    expected = """\
                                      metadata:
                                        creationTimestamp: null
m1 (Update 2020-11-23 16:52:45 +0000)   finalizers:
m1 (Update 2020-11-23 16:52:45 +0000)   - service.kubernetes.io/load-balancer-cleanup
m2 (Update 2020-11-23 16:52:45 +0000)   - service.kubernetes.io/foo
m1 (Update 2020-11-23 16:52:45 +0000)   labels:
m1 (Update 2020-11-23 16:52:45 +0000)     app: bar
m4 (Update                          )     s4: v
m1 (Update 2020-11-23 16:52:45 +0000)     version: v1
m1 (Update 2020-11-23 16:52:45 +0000)   ownerReferences:
m1 (Update 2020-11-23 16:52:45 +0000)   - apiVersion: ""
m1 (Update 2020-11-23 16:52:45 +0000)     kind: ReplicaSet
m1 (Update 2020-11-23 16:52:45 +0000)     name: bar-xxxx
m1 (Update 2020-11-23 16:52:45 +0000)     uid: 72594682-7b8d-4d52-bb84-8cab3cd2e16f
                                      spec:
                                        containers:
m2 (Update 2020-11-23 16:52:45 +0000)   - image: image:latest
m2 (Update 2020-11-23 16:52:45 +0000)     name: c1
m2 (Update 2020-11-23 16:52:45 +0000)     ports:
m2 (Update 2020-11-23 16:52:45 +0000)     - containerPort: 53
m2 (Update 2020-11-23 16:52:45 +0000)       name: tcp
m2 (Update 2020-11-23 16:52:45 +0000)       protocol: TCP
m3 (Update 2020-11-23 16:52:45 +0000)     - containerPort: 53
m3 (Update 2020-11-23 16:52:45 +0000)       name: udp
m3 (Update 2020-11-23 16:52:45 +0000)       protocol: UDP
m2 (Update 2020-11-23 16:52:45 +0000)     resources: {}
m1 (Update 2020-11-23 16:52:45 +0000) /
m2 (Update 2020-11-23 16:52:45 +0000)   serviceAccountName: foo
                                      status: {}
"""
    assert blame(pod, time_format="full", now=NOW) == expected


# --- time formats ------------------------------------------------------------------------------


def _two_managers() -> dict[str, Any]:
    return _config_map(
        _entry("kubectl", {"f:data": {"f:a": {}}}, "Apply", "2024-01-01T11:54:30Z"),
        _entry("argocd-controller", {"f:data": {"f:b": {}}}, "Update", "2023-12-29T12:00:00Z"),
        a="1",
        b="two",
    )


def test_relative_times_are_right_aligned_ages() -> None:
    assert blame(_two_managers(), time_format="relative", now=NOW) == (
        "                                 apiVersion: v1\n"
        "                                 data:\n"
        'kubectl           (Apply  5m30s)   a: "1"\n'
        "argocd-controller (Update    3d)   b: two\n"
        "                                 kind: ConfigMap\n"
        "                                 metadata:\n"
        "                                   name: cm\n"
    )


def test_full_times_are_shown_in_the_zone_of_now() -> None:
    plus2 = NOW.astimezone(timezone(timedelta(hours=2)))
    out = blame(_two_managers(), time_format="full", now=plus2)
    assert out.splitlines()[2] == 'kubectl           (Apply  2024-01-01 13:54:30 +0200)   a: "1"'
    assert out.splitlines()[3] == "argocd-controller (Update 2023-12-29 14:00:00 +0200)   b: two"


def test_full_times_without_now_use_the_local_zone_and_keep_the_width() -> None:
    lines = blame(_two_managers(), time_format="full").splitlines()
    assert re.fullmatch(r'kubectl {11}\(Apply  \d{4}-\d\d-\d\d \d\d:\d\d:30 [+-]\d{4}\)   a: "1"', lines[2])


def test_none_shows_no_times() -> None:
    out = blame(_two_managers(), now=NOW)
    assert out.splitlines()[2] == 'kubectl           Apply    a: "1"'


@pytest.mark.parametrize(
    ("age", "text"),
    [
        (timedelta(seconds=-3), "<invalid>"),
        (timedelta(seconds=-1), "0s"),
        (timedelta(0), "0s"),
        (timedelta(seconds=1), "1s"),
        (timedelta(seconds=70), "70s"),
        (timedelta(seconds=190), "3m10s"),
        (timedelta(minutes=5), "5m"),
        (timedelta(minutes=70), "70m"),
        (timedelta(hours=3, minutes=30), "3h30m"),
        (timedelta(hours=47), "47h"),
        (timedelta(hours=49), "2d1h"),
        (timedelta(hours=8 * 24 + 2), "8d"),
        (timedelta(days=367), "367d"),
        (timedelta(hours=365 * 2 * 24 + 25), "2y1d"),
        (timedelta(hours=365 * 8 * 24 + 2), "8y"),
    ],
)
def test_ages_read_as_kubectl_prints_them(age: timedelta, text: str) -> None:
    assert _human_duration(age) == text


def test_an_entry_without_time_keeps_the_columns() -> None:
    obj = _config_map(
        _entry("a", {"f:data": {"f:x": {}}}, time="2024-01-01T11:00:00Z"),
        _entry("bb", {"f:data": {"f:z": {}}}),
        x="1",
        z="2",
    )
    lines = blame(obj, time_format="relative", now=NOW).splitlines()
    assert lines[2] == 'a  (Update 60m)   x: "1"'
    assert lines[3] == 'bb (Update    )   z: "2"'


def test_unknown_time_format_is_bad_input() -> None:
    with pytest.raises(BadInput, match="unknown time format"):
        blame(_two_managers(), time_format="iso")


# --- Lists and several documents ---------------------------------------------------------------


def test_a_list_prints_each_item_as_its_own_document() -> None:
    first, second = _two_managers(), _two_managers()
    second["metadata"]["name"] = "other"
    listed = {"apiVersion": "v1", "kind": "List", "items": [first, second]}
    out = blame_many([listed], time_format="relative", now=NOW)
    each = [blame(item, time_format="relative", now=NOW) for item in (first, second)]
    assert out == "---\n".join(each)
    assert out.count("---\n") == 1
    assert "name: other" in out
    assert blame_many([first, second], now=NOW) == blame_many([listed], now=NOW)


def test_no_objects_print_nothing() -> None:
    assert blame_many([]) == ""


# --- Secrets -----------------------------------------------------------------------------------


def test_secret_values_are_never_printed() -> None:
    last_applied = (
        '{"apiVersion":"v1","data":{"password":"aHVudGVyMg=="},"kind":"Secret","stringData":{"token":"s3cr3t-t0ken"}}\n'
    )
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {
            "name": "db",
            "namespace": "shop",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied, "team": "payments"},
            "managedFields": [
                _entry(
                    "kubectl-client-side-apply",
                    {
                        "f:data": {".": {}, "f:password": {}},
                        "f:metadata": {
                            "f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}
                        },
                        "f:stringData": {"f:token": {}},
                        "f:type": {},
                    },
                )
            ],
        },
        "data": {"password": "aHVudGVyMg=="},
        "stringData": {"token": "s3cr3t-t0ken"},
    }
    before = copy.deepcopy(secret)
    out = blame(secret)
    for secret_value in ("aHVudGVyMg==", "hunter2", "s3cr3t-t0ken"):
        assert secret_value not in out
    lines = out.splitlines()
    assert "kubectl-client-side-apply Update     kubectl.kubernetes.io/last-applied-configuration: <redacted>" in lines
    assert "kubectl-client-side-apply Update   password: <redacted>" in lines
    assert "kubectl-client-side-apply Update   token: <redacted>" in lines
    assert "kubectl-client-side-apply Update     team: payments" in lines  # other annotations stay
    assert secret == before  # the caller's object is untouched


def test_a_secret_inside_a_list_is_masked_too() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "managedFields": [_entry("m", {"f:data": {"f:k": {}}})]},
        "data": {"k": "dG9wLXNlY3JldA=="},
    }
    out = blame_many([{"kind": "List", "items": [_two_managers(), secret]}])
    assert "dG9wLXNlY3JldA==" not in out
    assert "m Update   k: <redacted>" in out.splitlines()


def test_a_configmap_keeps_its_values() -> None:
    assert 'a: "1"' in blame(_two_managers())


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("managed", [None, [], "x"])
def test_an_object_without_managed_fields_is_bad_input(managed: Any) -> None:
    obj = _config_map(a="1")
    if managed is None:
        del obj["metadata"]["managedFields"]
    else:
        obj["metadata"]["managedFields"] = managed
    with pytest.raises(BadInput, match=r"ConfigMap cm: \.metadata\.managedFields is empty.*--show-managed-fields"):
        blame(obj)


def test_a_document_that_is_not_an_object_is_bad_input() -> None:
    with pytest.raises(BadInput):
        blame_many([["not", "an", "object"]])  # type: ignore[list-item]  # the wrong input is the point


# --- ownership display -------------------------------------------------------------------------


def test_co_owned_fields_list_every_owner() -> None:
    obj = _config_map(
        _entry("alpha", {"f:data": {"f:a": {}}}),
        _entry("beta", {"f:data": {"f:a": {}}}),
        a="x",
    )
    assert blame(obj).splitlines()[2:4] == ["alpha Update /", "beta  Update   a: x"]


def test_a_line_without_owner_shows_its_nearest_owned_ancestor() -> None:
    obj = _config_map(_entry("owner", {"f:data": {}}), a="x")
    assert blame(obj).splitlines()[1:3] == ["owner Update data:", "owner Update   a: x"]


def test_key_spelling_does_not_matter() -> None:
    ports = [{"containerPort": 80, "protocol": "TCP", "name": "http"}]
    obj = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "managedFields": [
                _entry("one", {"f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {"f:name": {}}}}),
                _entry("two", {"f:ports": {'k:{"protocol":"TCP","containerPort":80}': {".": {}}}}),
            ],
        },
        "ports": ports,
    }
    lines = blame(obj).splitlines()
    assert lines[-4:] == [
        "           ports:",
        "two Update - containerPort: 80",
        "one Update   name: http",
        "two Update   protocol: TCP",
    ]


def test_index_and_set_members() -> None:
    obj = {
        "kind": "Thing",
        "metadata": {
            "name": "t",
            "managedFields": [
                _entry("idx", {"f:items": {"i:1": {}}}),
                _entry("set", {"f:tags": {'v:"b"': {}}}),
            ],
        },
        "items": [{"k": 0}, {"k": 1}],
        "tags": ["a", "b"],
    }
    lines = blame(obj).splitlines()
    assert lines[0:3] == ["           items:", "           - k: 0", "idx Update - k: 1"]
    assert lines[-2:] == ["           - a", "set Update - b"]


def test_the_input_object_is_not_modified() -> None:
    obj = _two_managers()
    before = copy.deepcopy(obj)
    blame(obj, time_format="full", now=NOW)
    assert obj == before


# --- values and Go's YAML quoting --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "yaml_text"),
    [
        ("", '""'),
        ("plain", "plain"),
        ("1", '"1"'),
        ("1.5", '"1.5"'),
        ("0755", '"0755"'),
        ("0x1F", '"0x1F"'),
        ("1e3", '"1e3"'),
        ("+1", '"+1"'),
        ("1_000", '"1_000"'),
        ("yes", '"yes"'),
        ("on", '"on"'),
        ("y", '"y"'),
        ("True", '"True"'),
        ("null", '"null"'),
        ("~", '"~"'),
        (".inf", '".inf"'),
        ("2021-11-12T11:13:20Z", '"2021-11-12T11:13:20Z"'),
        ("2021-11-12", '"2021-11-12"'),
        ("2021-13-12", "2021-13-12"),
        ("1:30", '"1:30"'),
        ("25%", "25%"),
        ("500m", "500m"),
        ("a: b", "'a: b'"),
        ("key:", "'key:'"),
        ("- a", "'- a'"),
        ("-", "'-'"),
        ("-a", "-a"),
        ("*", "'*'"),
        ("it's", "it's"),
        ("'q'", "'''q'''"),
        (" lead", "' lead'"),
        ("trail ", "'trail '"),
        ("a #b", "'a #b'"),
        ("a#b", "a#b"),
        ("---", "'---'"),
        ("[x", "'[x'"),
        ("x]", "x]"),
        ("@", "'@'"),
        ('a"b', 'a"b'),
        ("http://x:80/y", "http://x:80/y"),
        ("a\tb", '"a\\tb"'),
        ("é", "é"),
        ("\U0001f600", '"\\U0001F600"'),
        ("\ufeffab", '"\\uFEFF\\x61\\x62"'),
        ("a\nb", "|-\n  a\n  b"),
        (" a\nb", "|2-\n   a\n  b"),
        ("a \nb", '"a \\nb"'),
    ],
)
def test_strings_are_quoted_as_go_yaml_v2_does(text: str, yaml_text: str) -> None:
    assert _yaml_string(text) == yaml_text


def test_long_strings_are_folded_at_80_columns_like_go_yaml() -> None:
    text = "word " * 20 + "end"
    assert _yaml_string(text) == "word " * 16 + "word\n  word word word end"
    assert yaml.safe_load(_yaml_string(text)) == text
    quoted = "note: " + text
    assert "\n  " in _yaml_string(quoted)
    assert yaml.safe_load(_yaml_string(quoted)) == quoted


@pytest.mark.parametrize(
    ("value", "line"),
    [
        (True, "v: true"),
        (None, "v: null"),
        (7, "v: 7"),
        (1.0, "v: 1"),
        (0.25, "v: 0.25"),
        (1e21, "v: 1000000000000000000000"),
        (1.5e-7, "v: 0.00000015"),
        ({}, "v: {}"),
        ([], "v: []"),
    ],
)
def test_scalars_print_as_go_formats_them(value: Any, line: str) -> None:
    obj = _config_map(_entry("m", {"f:data": {}}))
    obj["data"] = {"v": value}
    assert blame(obj).splitlines()[2] == "m Update   " + line


def test_multi_line_values_are_literal_blocks_with_the_blank_prefix() -> None:
    obj = _config_map(_entry("m", {"f:data": {"f:a": {}, "f:b": {}, "f:c": {}}}), a="x\ny\n", b="x\n\ny", c="x\n\n")
    assert blame(obj).splitlines()[1:] == [
        "         data:",
        "m Update   a: |",
        "             x",
        "             y",
        "m Update   b: |-",
        "             x",
        "",
        "             y",
        "m Update   c: |+",
        "             x",
        "",
        "         kind: ConfigMap",
        "         metadata:",
        "           name: cm",
    ]


SAFE_TEXT = st.text(alphabet=string.ascii_letters + string.digits + " -:#'\"!&*?,[]{}|>%@`./~\t", max_size=40)


@settings(max_examples=300, deadline=None)
@given(SAFE_TEXT)
def test_quoted_strings_read_back_as_the_same_string(text: str) -> None:
    assert yaml.safe_load(_yaml_string(text)) == text


KEYS = st.text(alphabet=string.ascii_lowercase + "-./", min_size=1, max_size=8)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), SAFE_TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.dictionaries(KEYS, inner, max_size=4),
        st.lists(st.one_of(SCALARS, st.dictionaries(KEYS, inner, max_size=3)), max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_without_the_prefixes_the_output_is_the_object_again(spec: dict[str, Any]) -> None:
    obj = {
        "kind": "Thing",
        "metadata": {"name": "t", "managedFields": [_entry("writer", {"f:spec": {}})]},
        "spec": spec,
    }
    out = blame(obj)
    width = len("writer Update ")
    lines = out.splitlines()
    assert all(line == "" or line[:width] in ("writer Update ", " " * width) for line in lines)
    assert yaml.safe_load("\n".join(line[width:] for line in lines)) == {
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": spec,
    }
