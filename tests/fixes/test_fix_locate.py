"""bot.fixes.locate, the pure parts: who tracks an Application, which files a directory source holds, which
document is the object. (The search itself runs end to end in tests/fixes/test_fix_flow.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from bot.fixes.locate import _selected, documents, matches, parent_of


def app(annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": "shop", "namespace": "argocd", "annotations": annotations or {},
                         "labels": labels or {}}}  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "parent"),
    [
        (app({"argocd.argoproj.io/tracking-id": "root:argoproj.io/Application:argocd/shop"}), ("root", None)),
        (app({"argocd.argoproj.io/tracking-id": "team-a_root:argoproj.io/Application:team-a/shop"}),
         ("root", "team-a")),
        (app({"argocd.argoproj.io/tracking-id": "root:argoproj.io/ApplicationSet:argocd/shops"}), ("root", None)),
        (app(labels={"app.kubernetes.io/instance": "root"}), ("root", None)),
        (app(labels={"app.kubernetes.io/instance": "shop"}), None),  # an app is not its own parent
        (app({"argocd.argoproj.io/tracking-id": "root:apps/Deployment:shop/web"}), None),
        (app(), None),
    ],
)  # fmt: skip
def test_the_parent_comes_from_the_tracking_id_or_the_instance_label(
    obj: dict[str, Any], parent: tuple[str, str | None] | None
) -> None:
    assert parent_of(obj) == parent


def test_a_directory_source_holds_its_manifests_with_include_and_exclude() -> None:
    files = ["apps/shop.yaml", "apps/cart.yml", "apps/README.md", "apps/old/legacy.yaml", "apps/values.json"]
    assert _selected(files, "apps", {}) == ["apps/shop.yaml", "apps/cart.yml", "apps/old/legacy.yaml",
                                            "apps/values.json"]  # fmt: skip
    assert _selected(files, "apps", {"include": "*.yaml"}) == ["apps/shop.yaml", "apps/old/legacy.yaml"]
    assert _selected(files, "apps", {"include": "{shop.yaml,cart.yml}"}) == ["apps/shop.yaml", "apps/cart.yml"]
    assert _selected(files, "apps", {"exclude": "old/*"}) == ["apps/shop.yaml", "apps/cart.yml", "apps/values.json"]


def test_the_document_is_the_object_by_kind_name_and_namespace_when_written() -> None:
    docs = documents("kind: Application\nmetadata: {name: shop, namespace: argocd}\n---\n"
                     "kind: Application\nmetadata: {name: cart}\n")  # fmt: skip
    assert docs is not None and len(docs) == 2
    assert matches(docs[0], "Application", "shop", "argocd") and not matches(docs[0], "Application", "shop", "team-a")
    assert matches(docs[1], "Application", "cart", "team-a")  # no namespace written: the destination's
    assert not matches(docs[0], "ApplicationSet", "shop", "argocd")
    assert documents("name: {{ .Values.name }}\nkind: [\n") is None  # a template is not plain YAML
