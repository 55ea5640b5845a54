"""The fix edit (README, "Fixes from chat: Open PR", step 3): only added lines, the rest byte for byte, or a reason.

Every changed case runs twice, as written and as a Windows file (BOM, CRLF): the
diff must hold only ``+`` lines, every other document must be unchanged, the new
text must read back (with PyYAML, not the module's own reader) as the intended
ignoreDifferences and syncOptions, and a second run must find nothing to add.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bot.fixes.edit import EditResult, add_ignore_rules, drop_field, rules_yaml
from bot.fixes.yamltext import scalar

DATA = Path(__file__).parent / "data" / "fix_edit"
RESPECT = "RespectIgnoreDifferences=true"
HPA = {
    "group": "apps",
    "kind": "Deployment",
    "name": "web",
    "namespace": "storefront",
    "jsonPointers": ["/spec/replicas"],
}


def fixture(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def windows(text: str) -> str:
    return "\ufeff" + text.replace("\n", "\r\n")


VARIANTS = {"lf": lambda t: t, "crlf-bom": windows}


def documents(text: str) -> list[str]:
    return re.split(r"(?m)^---[^\n]*\n", text)


class _Reader(yaml.SafeLoader):
    """PyYAML's safe reader, taking a custom tag's value as it stands (``!vault path`` -> ``"path"``)."""


_Reader.add_multi_constructor("!", lambda loader, _suffix, node: loader.construct_scalar(node))


def read_doc(text: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    found = [
        d
        for d in yaml.load_all(text, Loader=_Reader)  # a SafeLoader subclass
        if isinstance(d, dict)
        and d.get("kind") == kind
        and d["metadata"]["name"] == name
        and namespace in (None, d["metadata"].get("namespace"))
    ]
    assert len(found) == 1
    return found[0]


def added_lines(result: EditResult) -> list[str]:
    """The diff's ``+`` lines; fails on any ``-`` line."""
    body = [line for line in result.diff.splitlines() if not line.startswith(("---", "+++", "@@"))]
    assert not [line for line in body if line.startswith("-")], result.diff
    return [line[1:] for line in body if line.startswith("+")]


def assert_only_added(old: str, new: str) -> None:
    """Every old line, terminator included, is in the new text in order: a subsequence, independent of difflib."""
    new_lines = iter(new.splitlines(keepends=True))
    for line in old.splitlines(keepends=True):
        assert any(candidate == line for candidate in new_lines), f"line lost or changed: {line!r}"


def assert_changed(old: str, result: EditResult, target_doc: int) -> str:
    assert result.status == "changed", result.reason
    assert result.text is not None and result.reason is None
    new = result.text
    assert_only_added(old, new)
    assert len(new.splitlines()) == len(old.splitlines()) + len(added_lines(result))
    before, after = documents(old), documents(new)
    assert len(before) == len(after)
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if i != target_doc:
            assert a == b, f"document {i} changed"
    if old.startswith("\ufeff"):
        assert new.startswith("\ufeff") and new.count("\ufeff") == 1
    if "\r\n" in old:
        assert new.count("\n") == new.count("\r\n"), "a line lost its CR"
    return new


HPA_TWO = {**HPA, "jsonPointers": ["/spec/replicas", "/spec/template/spec/containers/0/resources"]}
PAYMENTS = {
    "group": "apps",
    "kind": "Deployment",
    "name": "api",
    "namespace": "payments",
    "jsonPointers": ["/spec/replicas"],
}
INJECTOR = {
    "group": "admissionregistration.k8s.io",
    "kind": "MutatingWebhookConfiguration",
    "name": "search-injector",
    "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle", ".webhooks[]?.namespaceSelector"],
}
SEARCH = {"kind": "Service", "name": "search", "namespace": "search", "jsonPointers": ["/spec/clusterIP"]}
ADMISSION = {
    "group": "admissionregistration.k8s.io",
    "kind": "ValidatingWebhookConfiguration",
    "name": "metrics-admission",
    "jqPathExpressions": [".webhooks[]?.failurePolicy"],
}
CHECKOUT = [HPA, {"kind": "Service", "name": "checkout", "jsonPointers": ["/spec/clusterIPs"]}]
CHECKOUT_OPTIONS = ["CreateNamespace=true", RESPECT]
CHECKOUT_AFTER = [{"kind": "Service", "name": "checkout", "jsonPointers": ["/spec/clusterIP", "/spec/clusterIPs"]}, HPA]


def case(name: str, app: str, namespace: str | None, rules: list[Any], options: list[str], *after: Any) -> Any:
    """A changed case: fixture, Application, rules, sync options, then index of its document, and
    the ignoreDifferences and syncOptions it must read back with."""
    return pytest.param(name, {"app_name": app, "app_namespace": namespace}, rules, options, *after, id=name[:-5])


CHANGED = [
    case(
        "comments.yaml",
        "storefront",
        "argocd",
        [HPA_TWO],
        [RESPECT],
        0,
        [HPA_TWO],
        ["CreateNamespace=true", "PruneLast=true", RESPECT],
    ),
    case("odd_documents.yaml", "ledger", None, [PAYMENTS], [RESPECT], 1, [PAYMENTS], [RESPECT]),
    case("multidoc.yaml", "payments-api", "argocd", [PAYMENTS], [RESPECT], 2, [PAYMENTS], [RESPECT]),
    case("anchors.yaml", "search", None, [INJECTOR, SEARCH], [], 0, [INJECTOR, SEARCH], None),
    case("no_sync_policy.yaml", "metrics", "argocd", [ADMISSION], [RESPECT], 0, [ADMISSION], [RESPECT]),
    case("seq_flush.yaml", "checkout", None, CHECKOUT, [RESPECT], 0, CHECKOUT_AFTER, CHECKOUT_OPTIONS),
    case(
        "seq_indented.yaml", "checkout", None, CHECKOUT, [RESPECT], 0, CHECKOUT_AFTER, ["CreateNamespace=true", RESPECT]
    ),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("name", "app", "rules", "options", "doc", "ignore", "sync"), CHANGED)
def test_changed_files_gain_lines_only(
    variant: str,
    name: str,
    app: dict[str, Any],
    rules: list[dict[str, Any]],
    options: list[str],
    doc: int,
    ignore: list[dict[str, Any]],
    sync: list[str] | None,
) -> None:
    old = VARIANTS[variant](fixture(name))
    result = add_ignore_rules(old, rules=rules, sync_options=options, **app)
    new = assert_changed(old, result, doc)
    spec = read_doc(new, "Application", app["app_name"], app["app_namespace"])["spec"]
    assert spec["ignoreDifferences"] == ignore
    assert (spec.get("syncPolicy") or {}).get("syncOptions") == sync
    old_spec = read_doc(old, "Application", app["app_name"], app["app_namespace"])["spec"]
    untouched = {k: v for k, v in spec.items() if k not in ("ignoreDifferences", "syncPolicy")}
    assert untouched == {k: v for k, v in old_spec.items() if k not in ("ignoreDifferences", "syncPolicy")}
    again = add_ignore_rules(new, rules=rules, sync_options=options, **app)
    assert again.status == "already-present" and again.text is None


def test_comments_stay_where_they_were() -> None:
    result = add_ignore_rules(
        fixture("comments.yaml"),
        app_name="storefront",
        app_namespace="argocd",
        rules=[{**HPA, "jsonPointers": ["/spec/template/spec/containers/0/resources"]}],
        sync_options=[RESPECT],
    )
    assert result.text is not None
    lines = result.text.splitlines()
    at = lines.index("        - /spec/template/spec/containers/0/resources")
    assert lines[at - 1 : at + 2] == [
        "        - /spec/replicas   # HPA",
        "        - /spec/template/spec/containers/0/resources",
        "      # more to come after the Istio migration",
    ]
    at = lines.index(f"      - {RESPECT}")
    assert lines[at + 1] == "    # - ServerSideApply=true   (not yet)"
    assert result.added_pointers == ("/spec/template/spec/containers/0/resources",)
    assert result.rules[0].merged and result.sync_options == (RESPECT,)
    assert result.summary == (
        "added to the existing rule for apps/Deployment storefront/web: "
        "/spec/template/spec/containers/0/resources (jsonPointers)",
        f"sync option {RESPECT} added to syncPolicy.syncOptions",
    )


@pytest.mark.parametrize("name", ["seq_flush.yaml", "seq_indented.yaml"])
def test_new_lines_follow_the_files_indentation(name: str) -> None:
    """The added lines, golden in NAME.added: dashes, item spacing and nesting as the file has them."""
    result = add_ignore_rules(
        fixture(name), app_name="checkout", app_namespace=None, rules=CHECKOUT, sync_options=[RESPECT]
    )
    assert "".join(line + "\n" for line in added_lines(result)) == fixture(name.replace(".yaml", ".added"))


def test_applicationset_edits_the_template_spec() -> None:
    for variant in VARIANTS.values():
        old = variant(fixture("applicationset.yaml"))
        rule = {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}
        result = add_ignore_rules(
            old, app_name="tenants", app_namespace="argocd", rules=[rule], sync_options=[RESPECT], applicationset=True
        )
        new = assert_changed(old, result, 0)
        doc = read_doc(new, "ApplicationSet", "tenants")
        assert doc["spec"]["template"]["spec"]["ignoreDifferences"] == [rule]
        assert doc["spec"]["template"]["spec"]["syncPolicy"] == {"automated": {"prune": True}, "syncOptions": [RESPECT]}
        assert doc["spec"]["syncPolicy"] == {"preserveResourcesOnDeletion": True}  # the ApplicationSet's own
        assert doc["spec"]["template"]["metadata"]["name"] == "tenant-{{.path.basename}}"
        # The edit follows the template's own style: sequences indented under their key.
        assert "          - RespectIgnoreDifferences=true" in added_lines(result)


def test_already_present_changes_nothing() -> None:
    result = add_ignore_rules(
        fixture("comments.yaml"),
        app_name="storefront",
        app_namespace="argocd",
        rules=[HPA],
        sync_options=["CreateNamespace=true"],
    )
    assert result.status == "already-present"
    assert result.text is None and result.diff == "" and result.rules == ()
    assert "already has every rule" in (result.reason or "")


def test_only_missing_values_are_added() -> None:
    rule = {**HPA, "jsonPointers": ["/spec/replicas", "/spec/template/spec/replicas"]}
    result = add_ignore_rules(
        fixture("comments.yaml"), app_name="storefront", app_namespace="argocd", rules=[rule, rule], sync_options=[]
    )
    assert added_lines(result) == ["        - /spec/template/spec/replicas"]
    assert result.rules[0].added == (("jsonPointers", "/spec/template/spec/replicas"),)


APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  project: default
{extra}"""


def app(extra: str) -> str:
    return APP.format(extra=extra)


@pytest.mark.parametrize(
    ("extra", "options", "added"),
    [
        pytest.param(
            "  syncPolicy:   # filled in later\n  destination:\n    namespace: shop\n",
            [RESPECT],
            ["    syncOptions:", f"    - {RESPECT}"],
            id="empty-syncPolicy-is-filled",
        ),
        pytest.param(
            "  ignoreDifferences:\n  syncPolicy:\n    syncOptions:\n    - CreateNamespace=true\n",
            ["CreateNamespace=true"],
            [
                "  - group: apps",
                "    kind: Deployment",
                "    name: web",
                "    namespace: storefront",
                "    jsonPointers:",
            ],
            id="empty-ignoreDifferences-is-filled",
        ),
        pytest.param(
            "  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    name: web\n    namespace: storefront\n"
            "    jqPathExpressions:\n    - .spec.template.spec.containers[].image\n",
            [],
            ["    jsonPointers:", "    - /spec/replicas"],
            id="entry-gains-a-list-key",
        ),
        pytest.param(
            "  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    name: web\n    namespace: storefront\n"
            "    jsonPointers: [/spec/replicas]\n",
            [RESPECT],
            ["  syncPolicy:", "    syncOptions:", f"    - {RESPECT}"],
            id="flow-list-elsewhere-is-left-alone",
        ),
        pytest.param(
            "  source:\n    helm:\n      values: |+\n        replicas: 1\n\n\n",
            [RESPECT],
            ["  ignoreDifferences:"],
            id="after-keep-chomped-block-and-its-blank-lines",
        ),
        pytest.param(
            "  info:\n  - name: note\n    value: a plain scalar\n      over two lines\n# about the next thing\n",
            [RESPECT],
            ["  ignoreDifferences:"],
            id="after-multi-line-plain-scalar",
        ),
        pytest.param(
            "  info:\n  - name: weight\n    value: !vault secret/shop#weight\n  - name: ratio\n    value: .nan\n",
            [RESPECT],
            ["  ignoreDifferences:"],
            id="custom-tag-and-nan-elsewhere",
        ),
    ],
)
def test_small_shapes(extra: str, options: list[str], added: list[str]) -> None:
    result = add_ignore_rules(app(extra), app_name="shop", app_namespace=None, rules=[HPA], sync_options=options)
    new = assert_changed(app(extra), result, 0)
    assert added_lines(result)[: len(added)] == added
    spec = read_doc(new, "Application", "shop")["spec"]
    assert HPA["jsonPointers"][0] in spec["ignoreDifferences"][0]["jsonPointers"]
    assert (spec.get("syncPolicy") or {}).get("syncOptions") == (options or None)


def test_core_kinds_get_no_group_and_values_are_quoted_when_needed() -> None:
    rule = {
        "kind": "ConfigMap",
        "name": "yes",
        "jqPathExpressions": ['.data["app.yaml"]', ".metadata.annotations | with_entries(select(.key: 1))"],
        "jsonPointers": ["/metadata/annotations/deployment.kubernetes.io~1revision", "/data/# note"],
    }
    result = add_ignore_rules(app(""), app_name="shop", app_namespace=None, rules=[rule], sync_options=[])
    new = assert_changed(app(""), result, 0)
    assert read_doc(new, "Application", "shop")["spec"]["ignoreDifferences"] == [rule]
    assert "  - kind: ConfigMap" in added_lines(result)
    assert "    name: 'yes'" in added_lines(result)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("/spec/replicas", "/spec/replicas"),
        ("RespectIgnoreDifferences=true", "RespectIgnoreDifferences=true"),
        ("on", "'on'"),
        ("y", "'y'"),
        ("0755", "'0755'"),
        ("a: b", "'a: b'"),
        ("it's", "it's"),
        ("'quoted", "'''quoted'"),
        (" padded", "' padded'"),
        ("line\nbreak", '"line\\nbreak"'),
        ("", "''"),
    ],
)
def test_scalars_read_back_the_same_everywhere(value: str, written: str) -> None:
    assert scalar(value) == written
    assert yaml.safe_load(f"k: {written}") == {"k": value}


def refused(label: str, text: str, reason: str, **kwargs: Any) -> Any:
    """A refusal case: the file, what the reason must say, arguments beyond the HPA rule for the app "shop"."""
    return pytest.param(text, kwargs, reason, id=label)


ENTRY = "  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    name: web\n    namespace: storefront\n"
SYNC = {"sync_options": [RESPECT]}
APPSET = {"applicationset": True}
REFUSED = [
    refused("helm-template", fixture("helm_template.yaml"), "Helm/Go template ({{ on line 1)"),
    refused("flow-spec", fixture("flow_spec.yaml"), "spec is written in flow style", app_name="cache"),
    refused(
        "flow-ignoreDifferences",
        app("  ignoreDifferences: [{group: apps, kind: Deployment, name: web, namespace: storefront}]\n"),
        "spec.ignoreDifferences is written in flow style ([...])",
    ),
    refused(
        "flow-entry",
        app("  ignoreDifferences:\n  - {group: apps, kind: Deployment, name: web, namespace: storefront}\n"),
        "the ignoreDifferences entry for Deployment web is written in flow style ({...})",
    ),
    refused(
        "flow-list-in-entry",
        app(ENTRY + "    jsonPointers: []\n"),
        "spec.ignoreDifferences[0].jsonPointers is written in flow style ([...])",
    ),
    refused(
        "flow-syncOptions",
        app("  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n"),
        "spec.syncPolicy.syncOptions is written in flow style",
        **SYNC,
    ),
    refused("flow-{}", app("  syncPolicy: {}\n"), "spec.syncPolicy is written in flow style", **SYNC),
    refused(
        "sync-option-clash",
        app("  syncPolicy:\n    syncOptions:\n    - RespectIgnoreDifferences=false\n"),
        "already has RespectIgnoreDifferences=false and the fix needs RespectIgnoreDifferences=true",
        **SYNC,
    ),
    refused("not-found", fixture("comments.yaml"), "no document of the file is the Application shop"),
    refused(
        "ambiguous",
        fixture("multidoc.yaml"),
        "several documents of the file could be the Application payments-api (documents 2, 3)",
        app_name="payments-api",
    ),
    refused("unparsable", app("  source: [unclosed\n"), "the file is not valid YAML"),
    refused("duplicate-key", app("  project: again\n"), "the file is not valid YAML: found duplicate key"),
    refused(
        "anchor-at-edit",
        app("  syncPolicy: &policy\n    automated: {}\n  info:\n  - name: policy\n    value: *policy\n"),
        "spec.syncPolicy carries the YAML anchor &policy",
        **SYNC,
    ),
    refused(
        "alias-at-edit",
        app("  syncPolicy: *policy\n").replace("  name: shop\n", "  name: shop\n  labels: &policy\n    automated: x\n"),
        "spec.syncPolicy is the YAML alias *policy",
        **SYNC,
    ),
    refused(
        "merge-key",
        app("  syncPolicy:\n    <<: {automated: {}}\n"),
        "spec.syncPolicy merges keys from elsewhere (<<:)",
        **SYNC,
    ),
    refused(
        "no-final-line-break",
        app("  syncPolicy:\n    syncOptions:\n    - CreateNamespace=true"),
        "the file does not end with a line break",
        **SYNC,
    ),
    refused("explicit-null", app("  syncPolicy: null\n"), "spec.syncPolicy is written as 'null'", **SYNC),
    refused("empty-item-last", app("  info:\n  -\n"), "an empty list item or value ends the place to edit"),
    refused("cr", app("").replace("default\n", "default\r  \n"), "carriage returns that do not end a line"),
    refused("line-separator", app("  info: [\u2028]\n"), "LINE SEPARATOR"),
    refused(
        "appset-template-outside-values",
        app("  template: # {{ .Values.x }}\n").replace("kind: Application", "kind: ApplicationSet"),
        "template syntax ({{) outside a YAML value at line 7",
        **APPSET,
    ),
    refused(
        "appset-rule-with-template",
        fixture("applicationset.yaml"),
        "a value of the rule contains {{",
        **APPSET,
        app_name="tenants",
        rules=[{"kind": "Deployment", "name": "{{.path.basename}}", "jsonPointers": ["/spec/replicas"]}],
    ),
]


@pytest.mark.parametrize(("text", "kwargs", "reason"), REFUSED)
def test_refused_with_a_reason(text: str, kwargs: dict[str, Any], reason: str) -> None:
    args: dict[str, Any] = {"app_name": "shop", "app_namespace": None, "rules": [HPA], "sync_options": [], **kwargs}
    result = add_ignore_rules(text, **args)
    assert result.status == "refused"
    assert reason in (result.reason or ""), result.reason
    assert result.text is None and result.diff == ""


def test_no_final_line_break_is_fine_away_from_the_end() -> None:
    old = fixture("seq_flush.yaml").rstrip("\n")
    rule = {"kind": "Service", "name": "checkout", "jsonPointers": ["/spec/clusterIPs"]}
    result = add_ignore_rules(old, app_name="checkout", app_namespace=None, rules=[rule], sync_options=[])
    assert added_lines(result) == ["    - /spec/clusterIPs"]
    assert result.text is not None and not result.text.endswith("\n")


def test_invalid_arguments_are_the_callers_bug() -> None:
    for rules in ([{"kind": "Deployment"}], [{"name": "web", "jsonPointers": ["/x"]}], [{"kind": "X", "foo": 1}]):
        with pytest.raises(ValueError):
            add_ignore_rules(app(""), app_name="shop", app_namespace=None, rules=rules, sync_options=[])
    with pytest.raises(ValueError):
        add_ignore_rules(
            app(""), app_name="shop", app_namespace=None, rules=[{**HPA, "jsonPointers": "/x"}], sync_options=[]
        )


def test_git_sees_added_lines_only(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        command = ["git", "-c", "core.autocrlf=false", "-c", "user.email=t@example.com", "-c", "user.name=t", *args]
        return subprocess.run(command, cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    expected: dict[str, int] = {}
    for param in CHANGED:
        name, app_args, rules, options = param.values[:4]
        for variant, convert in VARIANTS.items():
            old = convert(fixture(str(name)))
            result = add_ignore_rules(old, rules=rules, sync_options=options, **app_args)
            assert result.text is not None
            target = f"{variant}-{name}"
            (tmp_path / target).write_bytes(old.encode("utf-8"))
            expected[target] = len(added_lines(result))
            (tmp_path / f"{target}.new").write_bytes(result.text.encode("utf-8"))
    git("add", ".")
    git("commit", "-q", "-m", "before")
    for target in expected:
        (tmp_path / f"{target}.new").replace(tmp_path / target)
    numstat = {line.split("\t")[2]: line.split("\t")[:2] for line in git("diff", "--numstat").splitlines()}
    assert {t: numstat.get(t) for t in expected} == {t: [str(n), "0"] for t, n in expected.items()}


def test_rules_yaml_is_the_paste_snippet() -> None:
    snippet = rules_yaml([HPA, {"kind": "Service", "name": "api", "jsonPointers": ["/spec/clusterIP"]}], [RESPECT])
    assert snippet == (
        "ignoreDifferences:\n"
        "- group: apps\n  kind: Deployment\n  name: web\n  namespace: storefront\n  jsonPointers:\n  - /spec/replicas\n"
        "- kind: Service\n  name: api\n  jsonPointers:\n  - /spec/clusterIP\n"
        "syncPolicy:\n  syncOptions:\n  - RespectIgnoreDifferences=true\n"
    )
    assert rules_yaml([], []) == ""
    assert yaml.safe_load(rules_yaml([HPA], []))["ignoreDifferences"] == [HPA]


# --- drop_field ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_drop_field_removes_that_line_only(variant: str) -> None:
    old = VARIANTS[variant](fixture("deployment.yaml"))
    result = drop_field(old, kind="Deployment", name="web", namespace="storefront", pointer="/spec/replicas")
    assert result.status == "changed" and result.text is not None
    removed = [line for line in result.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert removed == ["-  replicas: 3   # min of the HPA"]
    assert not [line for line in result.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert_only_added(result.text, old)  # the old file is the new one plus that line
    assert "  # Scaled by the HPA below; this is only the initial size.\n" in result.text.replace("\r\n", "\n")
    new_doc = read_doc(result.text, "Deployment", "web")
    old_doc = read_doc(old, "Deployment", "web")
    del old_doc["spec"]["replicas"]
    assert new_doc == old_doc
    assert documents(old)[0] == documents(result.text)[0] and documents(old)[2] == documents(result.text)[2]
    assert result.removed == ("/spec/replicas",) and result.summary == ("/spec/replicas removed",)


@pytest.mark.parametrize(
    ("kind", "pointer", "reason"),
    [
        ("Deployment", "/spec/template/spec/containers/0/image", "spec.template.spec.containers of the"),
        ("Deployment", "/spec/selector", "/spec/selector has a multi-line value"),
        ("Deployment", "/metadata/labels", "/metadata/labels has a flow value"),
        ("Deployment", "/spec/paused", "the Deployment web has no /spec/paused"),
        ("Deployment", "/spec/selector/matchLabels/app", "is the only key of its mapping"),
        ("Deployment", "/spec/template/spec/containers/0/args", "is a list"),
        ("StatefulSet", "/spec/replicas", "no document of the file is the StatefulSet storefront/web"),
    ],
)
def test_drop_field_refusals(kind: str, pointer: str, reason: str) -> None:
    result = drop_field(fixture("deployment.yaml"), kind=kind, name="web", namespace="storefront", pointer=pointer)
    assert result.status == "refused" and reason in (result.reason or ""), result.reason
    assert result.text is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: {{ .Values.replicas }}\n  x: 1\n", "Helm/Go"),
        ("kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: &n 3\n  x: *n\n", "anchor or alias"),
        ("kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: |\n    3\n  x: 1\n", "multi-line value"),
        ("kind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 'a\n    b'\n  x: 1\n", "multi-line value"),
        ("kind: Deployment\nmetadata: {name: web}\n---\nkind: Deployment\nmetadata: {name: web}\n", "several"),
    ],
)
def test_drop_field_refuses_unsafe_shapes(text: str, reason: str) -> None:
    result = drop_field(text, kind="Deployment", name="web", namespace=None, pointer="/spec/replicas")
    assert result.status == "refused" and reason in (result.reason or ""), result.reason


# --- property: random existing rule sets --------------------------------------------------------------------

SCOPES = [("apps", "Deployment", "web", "shop"), ("", "Service", "web", ""), ("apps", "StatefulSet", "db", "shop")]
POINTERS = ["/spec/replicas", "/spec/clusterIP", "/metadata/labels/x", "/spec/template/spec/containers/0/image"]
OPTIONS = ["CreateNamespace=true", "PruneLast=true", RESPECT]


def _render_app(entries: list[tuple[int, list[str]]], options: list[str], dash: int, indent: int, notes: bool) -> str:
    """An Application written by hand in one of several styles, independent of the module's writer."""
    pad, key = " " * indent, " " * indent
    out = ["apiVersion: argoproj.io/v1alpha1", "kind: Application", "metadata:", f"{pad}name: shop", "spec:"]
    out.append(f"{key}project: default   # team project")
    if entries:
        out.append(f"{key}ignoreDifferences:")
        for scope_index, pointers in entries:
            group, kind, name, namespace = SCOPES[scope_index]
            item = " " * (indent + dash)
            fields = [f"group: {group}"] if group else []
            fields += [f"kind: {kind}", f"name: {name}"] + ([f"namespace: {namespace}"] if namespace else [])
            out.append(f"{item}- {fields[0]}")
            out += [f"{item}  {f}" for f in fields[1:]]
            out.append(f"{item}  jsonPointers:")
            out += [f"{item}  {' ' * dash}- {p}" + ("  # why" if notes else "") for p in pointers]
            if notes:
                out.append(f"{item}  # reviewed")
    if options:
        out += [f"{key}syncPolicy:", f"{key}{pad}syncOptions:"]
        out += [f"{key}{pad}{' ' * dash}- {o}" for o in options]
    return "\n".join(out) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries=st.lists(
        st.tuples(st.integers(0, 2), st.lists(st.sampled_from(POINTERS), min_size=1, max_size=3, unique=True)),
        max_size=3,
        unique_by=lambda e: e[0],
    ),
    existing_options=st.lists(st.sampled_from(OPTIONS), unique=True, max_size=2),
    wanted=st.lists(
        st.tuples(st.integers(0, 2), st.lists(st.sampled_from(POINTERS), min_size=1, max_size=2, unique=True)),
        min_size=1,
        max_size=3,
    ),
    want_option=st.booleans(),
    dash=st.sampled_from([0, 2]),
    indent=st.sampled_from([2, 4]),
    notes=st.booleans(),
    crlf=st.booleans(),
)
def test_property_random_rule_sets(
    entries: list[tuple[int, list[str]]],
    existing_options: list[str],
    wanted: list[tuple[int, list[str]]],
    want_option: bool,
    dash: int,
    indent: int,
    notes: bool,
    crlf: bool,
) -> None:
    old = _render_app(entries, existing_options, dash, indent, notes)
    old = windows(old) if crlf else old
    rules = [
        {k: v for k, v in zip(("group", "kind", "name", "namespace"), SCOPES[i], strict=True) if v}
        | {"jsonPointers": p}
        for i, p in wanted
    ]
    options = [RESPECT] if want_option else []
    result = add_ignore_rules(old, app_name="shop", app_namespace=None, rules=rules, sync_options=options)
    event(result.status)

    before = {(SCOPES[i], p) for i, ps in entries for p in ps}
    after_expected = before | {(SCOPES[i], p) for i, ps in wanted for p in ps}
    options_expected = existing_options + [o for o in options if o not in existing_options]
    if after_expected == before and options_expected == existing_options:
        assert result.status == "already-present"
        return
    new = assert_changed(old, result, 0)
    spec = read_doc(new, "Application", "shop")["spec"]
    scopes = [
        tuple(str(e.get(k) or "") for k in ("group", "kind", "name", "namespace")) for e in spec["ignoreDifferences"]
    ]
    assert len(scopes) == len(set(scopes)), "one entry per scope"
    assert {(s, p) for s, e in zip(scopes, spec["ignoreDifferences"], strict=True) for p in e["jsonPointers"]} == (
        after_expected
    )
    assert (spec.get("syncPolicy") or {}).get("syncOptions", []) == options_expected
    assert add_ignore_rules(new, app_name="shop", app_namespace=None, rules=rules, sync_options=options).status == (
        "already-present"
    )


def test_committing_a_live_value_changes_its_one_line_keeps_quotes_and_comment_and_checks_gits_value() -> None:
    from bot.fixes.setfield import set_field

    text = (
        "# the worker\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\n  namespace: ns\nspec:\n"
        "  template:\n    spec:\n      containers:\n        - name: worker\n"
        "          image: 'reg/worker:4.31.0'  # release\n        - name: side\n          image: reg/side:1\n"
    )
    at = "/spec/template/spec/containers/0/image"
    r = set_field(text, kind="Deployment", name="w", namespace="ns", pointer=at, git="reg/worker:4.31.0",
                  live="reg/worker:4.31.1-hotfix.1")  # fmt: skip
    assert r.status == "changed" and r.text is not None
    assert r.text == text.replace("'reg/worker:4.31.0'", "'reg/worker:4.31.1-hotfix.1'")
    # the file's item at the live index holds another value: the file is not the one the analysis saw
    other = set_field(text, kind="Deployment", name="w", namespace="ns", pointer=at.replace("/0/", "/1/"),
                      git="reg/worker:4.31.0", live="x")  # fmt: skip
    assert other.status == "refused" and "not the value Git had" in (other.reason or "")
    templated = set_field(text + "# {{ .Values.x }}\n", kind="Deployment", name="w", namespace="ns", pointer=at,
                          git="reg/worker:4.31.0", live="x")  # fmt: skip
    assert templated.status == "refused"
