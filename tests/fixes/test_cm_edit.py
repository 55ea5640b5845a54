"""The argocd-cm edit of a system-level PR, in both forms (a ConfigMap manifest, argo-helm values ``configs.cm``):
added lines only, merged into an existing key, never twice, refused in words when it cannot be done safely."""

from __future__ import annotations

import pytest

from bot.fixes.cmedit import add_system_rule

KEY = "resource.customizations.ignoreDifferences.apps_Deployment"
HPA = {"managedFieldsManagers": ["kube-controller-manager"]}

CONFIGMAP = """# Argo CD settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  url: https://argocd.example.com  # public
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers:
    - /spec/template/metadata/annotations
  timeout.reconciliation: 180s
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
"""

VALUES = """global:
  domain: argocd.example.com
configs:
  cm:
    # keep
    exec.enabled: false
    resource.customizations.ignoreDifferences.apps_Deployment: |
      managedFieldsManagers:
        - keda-operator
  params: {}
"""


def added(old: str, new: str) -> list[str]:
    rest = new.splitlines()
    for line in old.splitlines():
        rest.remove(line)
    return rest


def test_a_configmap_key_that_exists_gets_the_rule_merged_inside_its_block() -> None:
    r = add_system_rule(CONFIGMAP, form="configmap", key=KEY, rules=HPA)
    assert r.status == "changed" and r.text is not None
    assert added(CONFIGMAP, r.text) == ["    managedFieldsManagers:", "    - kube-controller-manager"]
    assert r.text.index("kube-controller-manager") < r.text.index("timeout.reconciliation")
    assert add_system_rule(r.text, form="configmap", key=KEY, rules=HPA).status == "already-present"


@pytest.mark.parametrize(("text", "lines"), [
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n",
     ["data:", f"  {KEY}: |", "    managedFieldsManagers:", "    - kube-controller-manager"]),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n",
     [f"  {KEY}: |", "    managedFieldsManagers:", "    - kube-controller-manager"]),
])  # fmt: skip
def test_a_configmap_without_the_key_or_without_data_gets_it(text: str, lines: list[str]) -> None:
    r = add_system_rule(text, form="configmap", key=KEY, rules=HPA)
    assert r.status == "changed" and r.text is not None and added(text, r.text) == lines


def test_helm_values_merge_into_the_list_they_have_with_their_own_indentation() -> None:
    r = add_system_rule(VALUES, form="helm", key=KEY, rules=HPA)
    assert r.status == "changed" and r.text is not None
    assert added(VALUES, r.text) == ["        - kube-controller-manager"]
    assert add_system_rule(r.text, form="helm", key=KEY, rules=HPA).status == "already-present"


@pytest.mark.parametrize(("text", "lines"), [
    ("global: {}\n", ["configs:", "  cm:", f"    {KEY}: |", "      managedFieldsManagers:",
                      "      - kube-controller-manager"]),
    ("configs:\n  params:\n    x: 1\n", ["  cm:", f"    {KEY}: |", "      managedFieldsManagers:",
                                          "      - kube-controller-manager"]),
])  # fmt: skip
def test_helm_values_without_configs_cm_get_it(text: str, lines: list[str]) -> None:
    r = add_system_rule(text, form="helm", key=KEY, rules=HPA)
    assert r.status == "changed" and r.text is not None and added(text, r.text) == lines


@pytest.mark.parametrize(("text", "reason"), [
    (CONFIGMAP.replace("name: argocd-cm", "name: argocd-rbac-cm"), "no document of the file is the ConfigMap"),
    (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  {KEY}: 'jsonPointers: [/a]'\n",
     "literal block"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata: {{ .Values.cm }}\n", "template"),
])  # fmt: skip
def test_what_cannot_be_edited_safely_is_refused_in_words(text: str, reason: str) -> None:
    r = add_system_rule(text, form="configmap", key=KEY, rules=HPA)
    assert r.status == "refused" and r.reason is not None and reason in r.reason and r.text is None


def test_the_all_key_is_never_written() -> None:
    with pytest.raises(ValueError, match="per-kind"):
        add_system_rule(CONFIGMAP, form="configmap", key="resource.customizations.ignoreDifferences.all", rules=HPA)
