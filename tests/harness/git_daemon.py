"""Git repositories served over ``git://`` on loopback by ``git daemon``: one URL that Argo CD's repo server reads
and that the bot maps to the fake GitHub's repository, as a real user's ``spec.source.repoURL`` is both.

The bot refuses a ``file://`` repository URL (it could not open a pull request on it), and a URL of the fake
GitHub's web host is not something Argo CD can clone. ``git://127.0.0.1:PORT/acme/gitops.git`` is both: Argo CD
clones it like any remote, and ``bot.sources.git.urls.parse_repo_url`` takes it for ``acme/gitops`` on the fake
GitHub (its API host is 127.0.0.1; over ``git://`` the port is the daemon's, so only host names are compared).

:class:`GitRepos` is the daemon's configuration: the folder it serves (``--base-path``), its port, and
:meth:`GitRepos.serve`, which publishes a bare repository kept elsewhere (the fake GitHub's) under its
``owner/name`` path by a symbolic link, so a merged pull request is what Argo CD reads next. The daemon listens on
127.0.0.1 only, serves reads only (``upload-pack``; pushes go through the fake GitHub's API or its bare repository)
and ignores the machine's git configuration. :class:`tests.harness.argocd_stack.ArgoCDStack` starts it with the
other components (its log is ``git-daemon.log`` beside theirs) and stops it with them.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from tests.harness.redis_server import free_port

NAME = "git-daemon"
"""The component's name in the stack (and its log file's)."""


@dataclass
class GitRepos:
    root: Path
    """What the daemon serves: ``<root>/<owner>/<name>.git`` is ``git://127.0.0.1:<port>/<owner>/<name>.git``."""
    port: int = 0

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()

    @property
    def base_url(self) -> str:
        return f"git://127.0.0.1:{self.port}"

    def url(self, repo: str) -> str:
        """The ``repoURL`` of ``repo`` (``owner/name``)."""
        return f"{self.base_url}/{repo}.git"

    def serve(self, repo: str, bare: Path) -> str:
        """Serve the bare repository ``bare`` as ``repo`` (``owner/name``); its URL."""
        link = self.root / f"{repo}.git"
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() and link.resolve() != bare.resolve():
            link.unlink()
        if not link.is_symlink():
            link.symlink_to(bare.resolve(), target_is_directory=True)
        return self.url(repo)

    def argv(self) -> list[str]:
        # --export-all: no git-daemon-export-ok file in the served repositories; --base-path: a request names a path
        # below root and nothing else (git daemon refuses "..").
        return ["git", "daemon", "--export-all", f"--base-path={self.root}", "--listen=127.0.0.1",
                f"--port={self.port}", "--reuseaddr", "--verbose", "--informative-errors"]  # fmt: skip

    @staticmethod
    def env() -> dict[str, str]:
        """The daemon's git ignores the machine's configuration (a ``safe.directory``, an ``insteadOf``...)."""
        return {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

    def listening(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
            return True
        return False
