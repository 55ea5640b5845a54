"""Property tests: self-diffs are empty, pointers round-trip, proposed rules hide their finding and no more."""

from __future__ import annotations

import copy
import re
from typing import Any

import jq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.analysis import explain
from bot.analysis.diff import diff_objects
from bot.analysis.pointer import covers, escape, join, split
from tests.builders import deployment, entry, live_of

keys = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=12)
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8)
trees = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(keys, c, max_size=4), max_leaves=20)


@given(tokens=st.lists(keys, max_size=6))
def test_pointer_round_trip(tokens: list[str]) -> None:
    assert split(join(tokens)) == tuple(tokens)
    assert all("/" not in escape(t) for t in tokens)


@given(pointer=st.lists(keys, max_size=6).map(lambda ts: "".join("/" + escape(t) for t in ts)))
def test_pointer_split_join_identity(pointer: str) -> None:
    assert join(split(pointer)) == pointer


@given(spec=trees, kind=st.sampled_from(["Deployment", "Widget", "Service", "ClusterRole"]))
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
def test_an_object_diffed_against_itself_has_no_findings(spec: Any, kind: str) -> None:
    api = {
        "Deployment": "apps/v1",
        "Widget": "example.com/v1",
        "Service": "v1",
        "ClusterRole": "rbac.authorization.k8s.io/v1",
    }[kind]
    obj = {
        "apiVersion": api,
        "kind": kind,
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": spec,
        "rules": spec,
    }
    assert diff_objects(obj, copy.deepcopy(obj)) == []
    assert explain([obj], [copy.deepcopy(obj)], app="x").findings == []


CONTROLLERS = ["acme-operator", "kube-controller-manager", "istio-sidecar-injector", "vault-agent"]

MUTATIONS: dict[str, tuple[list[Any], dict[str, Any]]] = {
    "replicas": (["spec", "replicas"], {"f:spec": {"f:replicas": {}}}),
    "app-image": (["spec", "template", "spec", "containers", "app", "image"],
                  {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:image": {}}}}}}}),
    "proxy-image": (["spec", "template", "spec", "containers", "proxy", "image"],
                    {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"proxy"}': {"f:image": {}}}}}}}),
    "proxy-args": (["spec", "template", "spec", "containers", "proxy", "args"],
                   {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"proxy"}': {"f:args": {}}}}}}}),
    "env": (["spec", "template", "spec", "containers", "app", "env", "MODE", "value"],
            {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:env": {
                'k:{"name":"MODE"}': {"f:value": {}}}}}}}}}),
    "port-name": (["spec", "template", "spec", "containers", "app", "ports", 8080, "name"],
                  {"f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"app"}': {"f:ports": {
                      'k:{"containerPort":8080,"protocol":"TCP"}': {"f:name": {}}}}}}}}}),
    "label": (["metadata", "labels", "app.kubernetes.io/name"],
              {"f:metadata": {"f:labels": {"f:app.kubernetes.io/name": {}}}}),
}  # fmt: skip


def _set(obj: dict[str, Any], where: list[Any], value: Any) -> None:
    cur: Any = obj
    for tok in where[:-1]:
        if isinstance(cur, list):
            cur = next(x for x in cur if tok in (x.get("name"), x.get("containerPort")))
        else:
            cur = cur[tok]
    if isinstance(cur, list):
        next(x for x in cur if where[-1] in (x.get("name"), x.get("containerPort")))["value"] = value
    else:
        cur[where[-1]] = value


def _hidden(rule: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    """The checker's reading of a rule, independent of bot.analysis.verify: pointers and jq paths."""
    out = list(rule.get("jsonPointers") or [])
    for expr in rule.get("jqPathExpressions") or []:
        for p in jq.compile(f"[path({expr})]").input_value(obj).first():
            out.append(join(p))
    return out


@given(
    picks=st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=3, unique=True),
    manager=st.sampled_from(CONTROLLERS),
    reverse=st.booleans(),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_proposed_rule_hides_its_finding_and_nothing_outside_hides(
    picks: list[str], manager: str, reverse: bool
) -> None:
    desired = deployment()
    extra = []
    live = live_of(desired)
    if reverse:  # list order must not matter for keyed lists
        live["spec"]["template"]["spec"]["containers"].reverse()
    for name in picks:
        where, fields = MUTATIONS[name]
        _set(live, where, ["--other"] if name == "proxy-args" else 9 if name == "replicas" else "changed")
        extra.append(entry(manager, fields))
    live["metadata"]["managedFields"].extend(extra)
    report = explain([desired], [live], app="shop")
    assert len(report.findings) >= len(picks)
    for f in report.findings:
        assert f.cause in ("operator", "autoscaler"), f
        rule = f.fix.rule
        assert rule is not None and f.fix.verified
        assert "managedFieldsManagers" not in rule
        assert not any(re.search(r"\[\d+\]", e) for e in rule.get("jqPathExpressions", []))  # never by index
        hidden_live = _hidden(rule, live)
        assert any(covers(h, f.pointer) for h in hidden_live), (rule, f.pointer)
        assert all(any(covers(h, p) for h in f.fix.hides) for p in hidden_live), (hidden_live, f.fix.hides)
        # with the rule applied to both sides, the finding is gone and nothing outside `hides` changed
        before = {d.pointer for d in diff_objects(desired, live)}
        after = {d.pointer for d in diff_objects(_drop(desired, rule), _drop(live, rule))}
        assert f.pointer not in after
        assert all(any(covers(h, p) for h in f.fix.hides) for p in before - after)


def _drop(obj: dict[str, Any], rule: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    paths = [split(p) for p in _hidden(rule, obj)]
    for path in sorted(paths, key=lambda p: [(0, int(t)) if t.isdigit() else (1, t) for t in p], reverse=True):
        cur: Any = out
        for tok in path[:-1]:
            cur = cur[int(tok)] if isinstance(cur, list) else cur.get(tok, {})
        if isinstance(cur, list):
            del cur[int(path[-1])]
        elif isinstance(cur, dict):
            cur.pop(path[-1], None)
    return out
