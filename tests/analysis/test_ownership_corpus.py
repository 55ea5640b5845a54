"""Ownership agrees with Argo CD's and gitops-engine's own test data (tests/scenarios/corpus/INDEX.md)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.analysis.loader import load_documents
from bot.analysis.managedfields import entries_of, owners
from bot.analysis.pointer import Path, split
from tests.paths import CORPUS


def _path(obj: Any, pointer: str) -> Path:
    out: list[str | int] = []
    cur = obj
    for tok in split(pointer):
        key: str | int = int(tok) if isinstance(cur, list) else tok
        out.append(key)
        cur = cur[key]
    return tuple(out)


# (file, pointer, the managers (operation[/subresource]) INDEX.md says own the field)
CLAIMS = [
    ("argo-cd__util_argo_testdata__live_deployment_with_managed_replica.yaml", "/spec/replicas",
     {"kube-controller-manager(Update)", "argocd(Update)"}),
    ("argo-cd__util_argo_testdata__live_deployment_with_managed_replica.yaml", "/spec/revisionHistoryLimit",
     {"revision-history-manager(Apply)", "argocd(Update)"}),
    ("argo-cd__util_argo_testdata__live_validating_webhook.yaml", "/webhooks/0/clientConfig/caBundle",
     {"external-secrets(Update)"}),
    ("argo-cd__controller_testdata__live-deployment.yaml", "/metadata/annotations/iksm-version", {"janitor(Apply)"}),
    ("argo-cd__controller_testdata__live-deployment.yaml", "/spec/replicas", {"argocd(Update)"}),
    ("argo-cd__controller_testdata__live-deployment.yaml", "/metadata/annotations/deployment.kubernetes.io~1revision",
     {"kube-controller-manager(Update)"}),
    ("gitops-engine__pkg_diff_testdata__smd-service-live.yaml", "/spec/ports/1/targetPort",
     {"argocd-controller(Apply)"}),
    ("gitops-engine__pkg_diff_testdata__smd-service-live.yaml", "/spec/sessionAffinity",
     {"kubectl-client-side-apply(Update)"}),
    ("gitops-engine__pkg_diff_testdata__smd-service-live.yaml", "/spec/type", {"kubectl-client-side-apply(Update)"}),
    ("gitops-engine__pkg_diff_testdata__smd-service-live-with-type.yaml", "/spec/type", {"argocd-controller(Apply)"}),
    ("gitops-engine__pkg_diff_testdata__smd-service-live-with-type.yaml", "/spec/ports/1/targetPort",
     {"argocd-controller(Apply)", "kubectl-client-side-apply(Update)"}),
    ("gitops-engine__pkg_diff_testdata__smd-deploy2-live.yaml",
     "/spec/template/spec/containers/0/resources/requests/cpu", {"argocd-controller(Apply)"}),
    ("gitops-engine__pkg_diff_testdata__smd-deploy2-live.yaml", "/spec/template/spec/containers/0/ports/1", set()),
    ("gitops-engine__pkg_diff_testdata__smd-deploy2-live.yaml",
     "/metadata/annotations/deployment.kubernetes.io~1revision", {"kube-controller-manager(Update/status)"}),
    ("gitops-engine__pkg_diff_testdata__ssd-deploy-with-manual-apply-live.yaml",
     "/spec/template/spec/containers/1/image", {"kubectl-client-side-apply(Update)"}),
    ("gitops-engine__pkg_diff_testdata__ssd-svc-label-live.yaml", "/metadata/labels/delete-me",
     {"argocd-controller(Apply)"}),
    ("gitops-engine__pkg_diff_testdata__ssd-deploy-composite-key-predicted-live.json",
     "/spec/template/spec/containers/0/ports/0/protocol", {"mutation-webhook(Apply)"}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "pointer", "want"), CLAIMS)
def test_owners_match_index(name: str, pointer: str, want: set[str]) -> None:
    path = CORPUS / name
    obj = load_documents(path.read_text(), name)[0]
    entries = entries_of(obj)
    assert entries is not None
    got = {
        f"{e.manager}({e.operation}{'/' + e.subresource if e.subresource else ''})"
        for e in owners(entries, obj, _path(obj, pointer))
    }
    assert got == want


def test_every_owned_leaf_exists_in_its_object() -> None:
    """Sanity of the decoder on the whole corpus: walking each entry's tree never fails."""
    for path in sorted(CORPUS.glob("*live*")):
        for obj in load_documents(path.read_text(), path.name):
            assert entries_of(obj), path.name


def _walk(value: Any, path: Path = ()) -> Any:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            if path == () and k == "metadata":
                v = {mk: mv for mk, mv in v.items() if mk != "managedFields"}
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, (*path, i))


@pytest.mark.parametrize("name", ["deploy.yaml", "list.yaml", "multi-manager-list-item.yaml"])
def test_ownership_agrees_with_kubectl_blame_tree(name: str) -> None:
    """Where kubectl-blame attributes a line to its own field (not inherited), owners() names the same entries."""
    from bot.analysis.blame import _build_tree, _item_node, _Node

    path_ = CORPUS / "kubectl-blame" / name
    for obj in load_documents(path_.read_text(), name, require_name=False):
        entries = entries_of(obj)
        assert entries is not None
        tree = _build_tree(entries, [e.manager for e in entries])
        for path, _value in _walk(obj):
            if not path:
                continue
            node: _Node | None = tree
            cur: Any = obj
            inherited: set[int] = set()
            for tok in path:
                if node is None:
                    break
                if node.owners and not (node.fields or node.keys or node.values or node.indexes):
                    inherited |= node.owners  # an atomic leaf above the path
                node = _item_node(node, cur[tok], tok) if isinstance(tok, int) else node.fields.get(tok)
                cur = cur[tok]
            mine = {entries.index(e) for e in owners(entries, obj, path)}
            if node is not None and node.owners:
                assert mine == node.owners, (name, path)
            else:
                assert mine <= inherited, (name, path)
