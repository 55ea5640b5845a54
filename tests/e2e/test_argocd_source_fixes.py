"""The two fixes in Git that are not an ``ignoreDifferences`` rule, from chat to a Synced app on the real Argo CD.

* **The source fix**: an autoscaler owns a Deployment's replica count; the thread's "fix the source" Open PR removes
  ``replicas`` from the manifest in Git. The app syncs itself (automated sync) to the merged revision, and stays
  Synced when the autoscaler writes the count again: the field is no longer Git's.
* **Commit the live value**: a person's ``kubectl edit`` of an image that should be kept; the thread's "commit the
  live value to Git" Open PR writes the live image into the manifest. Merged, Git and the cluster agree: one
  refresh and the app (manual sync) is Synced, without a sync.

Each: the drift by its real writer, the alert, the approver's click on that button as Slack sends it, the PR on the
fake GitHub whose repository Argo CD reads (over ``git://``, ``E2E.repo_url``), its exact change, the merge, Argo CD
refreshed, the app Synced and still Synced after a later comparison, and the thread saying the drift is resolved.
"""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest
import yaml

from tests.fakes.git import BareRepo
from tests.harness.argocd_e2e import CHANNEL, E2E, REPO, click, namespace_for, wait, wait_for
from tests.harness.argocd_objects import deployment, hpa, ref

pytestmark = pytest.mark.argocd

Obj = dict[str, Any]


def fix_message(e2e: E2E, parent: Obj, block_id: str) -> Obj:
    """The thread message that holds the Open PR button of ``block_id`` (``argo-why-fix-source-0``, ...)."""

    def find() -> Obj | None:
        for reply in e2e.slack.thread(CHANNEL, parent["ts"]):
            if any(b.get("block_id") == block_id for b in reply.get("blocks") or []):
                return dict(reply)
        return None

    return dict(wait(find, f"the thread's {block_id} button", 60))


def open_pr(e2e: E2E, parent: Obj, app: str, block_id: str) -> Any:
    """The approver clicks the Open PR button of ``block_id`` in ``parent``'s thread; the pull request it opened."""
    click(e2e, fix_message(e2e, parent, block_id), "open_pr", block_id=block_id)
    return the_pr(e2e, app)


def the_pr(e2e: E2E, app: str) -> Any:
    """The one pull request the bot opened for ``app`` (its branch is ``argo-why/<app>/<hash>``)."""
    mine = lambda: [p for p in e2e.github.pulls(REPO) if p.head.startswith(f"argo-why/{app}/")]  # noqa: E731
    [pr] = wait(mine, f"the pull request for {app}", 60)
    return pr


def changed_lines(bare: BareRepo, pr: Any) -> tuple[list[str], list[str]]:
    """The PR's diff against where its branch started (main may have moved on): (removed lines, added lines)."""
    diff = bare.git("diff", f"{pr.base}...{pr.head}")
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def merged_and_synced(e2e: E2E, parent: Obj, app: str) -> str:
    """The thread once the bot said the PR was merged and the app is Synced again."""
    text = wait_for(lambda: e2e.thread_text(parent), lambda t: "was merged and" in t,
                    "the thread saying the drift is resolved", 90)  # fmt: skip
    merged = [m for m in e2e.slack.thread(CHANNEL, parent["ts"]) if "was merged and" in m.get("text", "")]
    assert [m["text"] for m in merged] == [f"PR #{pr_number(e2e, app)} was merged and {app} is Synced again."]
    [block] = merged[0]["blocks"]
    assert block["text"]["text"].startswith(":large_green_circle: PR <"), block  # the icon once
    assert block["text"]["text"].count(":large_green_circle:") == 1, block
    [now] = e2e.parents(app)  # the parent itself turned green
    assert f"{app} is Synced again" in now["text"], now["text"]
    return str(text)


def pr_number(e2e: E2E, app: str) -> int:
    return int(the_pr(e2e, app).number)


def still_synced_after_a_comparison(e2e: E2E, app: str) -> Obj:
    """A new comparison (a hard refresh) of ``app``, which must say Synced; the app as it then was."""
    before = e2e.app(app)["status"]["reconciledAt"]
    # reconciledAt is in whole seconds: a comparison in the same second as the last one would not be told apart
    at = datetime.datetime.fromisoformat(before.replace("Z", "+00:00")).timestamp() + 1.0
    time.sleep(max(0.0, at - time.time()))
    e2e.refresh(app)
    seen = e2e.wait_app(app, lambda a: a["status"]["reconciledAt"] > before, "compared again")
    assert seen["status"]["sync"]["status"] == "Synced", seen["status"]
    return seen


def test_a_source_fix_removing_autoscaled_replicas_from_git_merged_keeps_the_app_synced(e2e: E2E) -> None:
    name = "src-fix"
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(name, replicas=2)
    e2e.add_files({f"apps/{name}/deployment.yaml": web, f"apps/{name}/hpa.yaml": hpa(name)}, f"add {name}")
    e2e.create_app(name, f"apps/{name}", ns, automated=True)
    e2e.wait_app(name, lambda a: (a["status"].get("operationState") or {}).get("phase") == "Succeeded"
                 and a["status"]["sync"]["status"] == "Synced", "synced by its automated policy")  # fmt: skip
    e2e.past_grace(name)
    e2e.cluster.autoscale(ref(web, ns), 5)  # kube-controller-manager's GET + PUT of /scale
    [parent] = e2e.wait_parents(name, "the alert")

    pr = open_pr(e2e, parent, name, "argo-why-fix-source-0")
    bare = e2e.github.repo(REPO)
    removed, added = changed_lines(bare, pr)
    assert (removed, added) == (["  replicas: 2"], []), (removed, added)  # that one line, nothing else
    assert bare.git("diff", "--name-only", f"{pr.base}...{pr.head}").split() == [f"apps/{name}/deployment.yaml"]
    manifest = yaml.safe_load(bare.read(pr.head, f"apps/{name}/deployment.yaml") or b"")
    assert "replicas" not in manifest["spec"] and manifest["spec"]["template"] == web["spec"]["template"]
    assert pr.title == (f"argo-why: drop /spec/replicas of Deployment/{name} from Git, "
                        f"HorizontalPodAutoscaler {ns}/{name} owns it")  # fmt: skip
    assert f"Removed from Deployment `{name}`: `/spec/replicas`." in pr.body
    assert "no ignore rule is needed" in pr.body and "Git: `2` · live: `5`" in pr.body
    said = wait_for(lambda: e2e.thread_text(parent), lambda t: "Proposed in" in t, "the thread's record of the PR")
    assert f"Proposed in `apps/{name}/deployment.yaml` of" in said and "remove `/spec/replicas`" in said

    merge = e2e.github.merge_pr(REPO, pr.number)
    e2e.refresh(name)  # Argo CD reads the merge; its automated policy syncs the new revision
    app = e2e.wait_app(name, lambda a: a["status"]["sync"]["status"] == "Synced"
                       and (a["status"].get("operationState") or {}).get("syncResult", {}).get("revision") == merge,
                       "Synced at the merged revision", timeout=90)  # fmt: skip
    assert app["status"]["sync"]["revision"] == merge
    merged_and_synced(e2e, parent, name)

    # The autoscaler writes the count again: the field is no longer Git's, so the app stays Synced and the bot quiet.
    e2e.past_grace(name)
    e2e.cluster.autoscale(ref(web, ns), 7)
    seen = still_synced_after_a_comparison(e2e, name)
    assert e2e.cluster.get(ref(web, ns))["spec"]["replicas"] == 7
    assert seen["status"]["sync"]["revision"] == merge
    assert len(e2e.parents(name)) == 1, e2e.parents(name)


def test_committing_the_live_value_of_a_kubectl_edit_merged_makes_the_app_synced(e2e: E2E) -> None:
    name = "commit-live"
    ns = namespace_for(name)
    e2e.stack.kube.create_namespace(ns)
    web = deployment(name, replicas=1, image="nginx:1.27")
    e2e.add_files({f"apps/{name}/deployment.yaml": web}, f"add {name}")
    e2e.create_app(name, f"apps/{name}", ns)
    e2e.sync(name)
    e2e.past_grace(name)
    e2e.cluster.kubectl_edit(ref(web, ns), {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.26"}]}}}})  # fmt: skip  # a hotfix that should be kept
    [parent] = e2e.wait_parents(name, "the alert")

    pr = open_pr(e2e, parent, name, "argo-why-fix-commit-0")
    bare = e2e.github.repo(REPO)
    removed, added = changed_lines(bare, pr)
    assert (removed, added) == (["        image: nginx:1.27"], ["        image: nginx:1.26"]), (removed, added)
    manifest = yaml.safe_load(bare.read(pr.head, f"apps/{name}/deployment.yaml") or b"")
    assert manifest["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert manifest["spec"]["replicas"] == 1
    assert pr.title == (f"argo-why: commit the live /spec/template/spec/containers/0/image of Deployment/{name} to "
                        "Git, set by hand with kubectl-edit")  # fmt: skip
    assert "set from `nginx:1.27` (Git) to `nginx:1.26` (live)" in pr.body
    said = wait_for(lambda: e2e.thread_text(parent), lambda t: "Proposed in" in t, "the thread's record of the PR")
    assert f"Proposed in `apps/{name}/deployment.yaml` of" in said
    assert "set `/spec/template/spec/containers/0/image` to the live value" in said

    merge = e2e.github.merge_pr(REPO, pr.number)
    e2e.refresh(name)  # Git now says what the cluster has: Synced without a sync
    app = e2e.wait_app(name, lambda a: a["status"]["sync"]["status"] == "Synced"
                       and a["status"]["sync"]["revision"] == merge, "Synced at the merged revision",
                       timeout=90)  # fmt: skip
    assert (app["status"].get("operationState") or {}).get("syncResult", {}).get("revision") != merge  # no sync ran
    merged_and_synced(e2e, parent, name)
    still_synced_after_a_comparison(e2e, name)
    assert e2e.cluster.get(ref(web, ns))["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert len(e2e.parents(name)) == 1, e2e.parents(name)
