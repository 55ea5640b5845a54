"""deploy/README.md as someone installing reads it (issue 28, item 14): how to get helm 3.8+, that the chart renders
without a cluster (its `helm template` command, run as written by real Helm through helm-python-sdk), that the image
is built here (it is not published), and what building it for arm64 needs (QEMU/binfmt for `docker buildx`), with a
recipe that needs no emulation.
"""

from __future__ import annotations

import itertools
import re
import shlex
from typing import Any

from tests.deploy.test_chart import bot_container, render
from tests.paths import ROOT

README = ROOT / "deploy" / "README.md"


def _text() -> str:
    return " ".join(README.read_text(encoding="utf-8").split())  # line breaks are the editor's


def _shell_blocks() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return [re.sub(r"\\\n\s*", " ", b) for b in blocks]  # continued lines joined


def _command(prefix: str) -> list[str]:
    for block in _shell_blocks():
        for line in block.splitlines():
            if line.strip().startswith(prefix):
                return shlex.split(line.split(" > ")[0].split(" #")[0])
    raise AssertionError(f"deploy/README.md has no `{prefix} ...` command")


def _values(args: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for flag, setting in itertools.pairwise(args):
        if flag not in ("--set", "--set-string"):
            continue
        key, _, value = setting.partition("=")
        *parents, leaf = key.split(".")
        node = values
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return values


def test_the_readme_says_how_to_get_helm_and_checks_its_version() -> None:
    text = _text()
    assert "helm 3.8 or newer" in text and "helm version --short" in text
    assert "https://github.com/helm/helm/releases" in text and "https://helm.sh/docs/intro/install/" in text


def test_the_readme_template_command_renders_the_chart_without_a_cluster() -> None:
    args = _command("helm template")
    assert args[:4] == ["helm", "template", "argo-why", "deploy/chart/argo-why"]
    assert "--kube-context" not in args and "--validate" not in args  # nothing that reads a cluster
    rendered = render(_values(args), name=args[2], namespace=args[args.index("-n") + 1])
    assert bot_container(rendered["objects"])["image"] == "REGISTRY/argo-why:0.1.0"
    assert "renders without a cluster" in _text()


def test_the_image_is_built_here_on_one_architecture_without_emulation_or_for_both_with_it() -> None:
    text = _text()
    assert "The image is not published" in text
    plain = _command("docker build ")
    assert plain[-1] == "." and "--platform" not in plain and (ROOT / "Dockerfile").exists()
    assert "kubectl get nodes -L kubernetes.io/arch" in text
    multi = _command("docker buildx build")
    assert "linux/amd64,linux/arm64" in multi and "--push" in multi
    # what the multi-platform build needs before it can run
    assert "tonistiigi/binfmt --install arm64" in text and "binfmt_misc" in text and "QEMU" in text
    assert "--driver docker-container" in text
    assert "docker buildx imagetools create" in text  # joining two native builds: no emulation at all
