"""argocd-cm's resource exclusions and inclusions are parsed once per text, not once per object of the app.

``excluded`` is asked for every desired object and every object only the cluster has; with a
``resource.exclusions`` in the context each call parsed its YAML again (2,000 parses for a 2,000-resource app).
"""

from __future__ import annotations

from typing import Any

from bot.analysis.argoscope import _parsed_filters, excluded

EXCLUSIONS = """\
- apiGroups: ["cilium.io"]
  kinds: ["CiliumIdentity"]
  clusters: ["*"]
"""


def obj(api: str, kind: str, name: str) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "a"}}


def test_exclusions_are_parsed_once_for_all_the_objects_and_still_decide_each() -> None:
    cm = {"data": {"resource.exclusions": EXCLUSIONS + f"# {id(object())}\n"}}  # a text no other test parsed
    before = _parsed_filters.cache_info()
    decided = [excluded(obj("cilium.io/v2", "CiliumIdentity", f"i{n}"), cm) for n in range(50)]
    decided += [excluded(obj("apps/v1", "Deployment", f"d{n}"), cm) for n in range(50)]
    after = _parsed_filters.cache_info()
    assert decided == [True] * 50 + [False] * 50
    assert after.misses - before.misses == 1  # the exclusions once (no inclusions text: nothing to parse)
    unreadable = {"data": {"resource.exclusions": "[not: yaml"}}
    assert excluded(obj("cilium.io/v2", "CiliumIdentity", "x"), unreadable) is False
