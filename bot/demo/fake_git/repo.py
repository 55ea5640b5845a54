"""A bare git repository driven through git plumbing: what the fake Git hosts serve, and what a test reads back
with plain ``git`` (branches and commits are real, ``git diff main..BRANCH`` shows a change).

Guarantees: every read and write runs ``git`` plumbing on the bare repository (``cat-file``, ``ls-tree``,
``hash-object -w``, ``update-index`` on a temporary index, ``write-tree``, ``commit-tree``, ``update-ref`` with the
expected old value), so a branch moves only from the commit the writer started from and two writers cannot both
win; refs, paths and shas that come from HTTP requests are never read by ``git`` as options; commits carry a fixed
identity (``GIT_ENV``), whatever the machine's git configuration; a failed ``git`` command raises ``GitError``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

ZERO_SHA = "0" * 40
SYMLINK_MODE = "120000"
# A fixed identity: commits must not depend on (or fail for lack of) the machine's git configuration.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "argo-why",
    "GIT_AUTHOR_EMAIL": "argo-why@users.noreply.example.com",
    "GIT_COMMITTER_NAME": "argo-why",
    "GIT_COMMITTER_EMAIL": "argo-why@users.noreply.example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class GitError(RuntimeError):
    """A ``git`` command failed: a bug in the fake or in the test that drives it."""


@dataclass(frozen=True)
class Entry:
    """One ``git ls-tree -l`` line: ``type`` is blob, tree or commit (a submodule); ``size`` is None for trees."""

    mode: str
    type: str
    sha: str
    size: int | None
    path: str

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]


class BareRepo:
    """A bare git repository; every method runs ``git`` on it. Refs, paths and shas given to it come from HTTP
    requests, so every command puts them after ``--`` or in positions where ``git`` cannot read them as options."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(
        cls, path: Path, files: dict[str, str | bytes], *, branch: str = "main", message: str = "Initial commit"
    ) -> BareRepo:
        """A new bare repository at ``path`` with one commit on ``branch`` holding ``files``."""
        path.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "init", "--quiet", "--bare", f"--initial-branch={branch}", str(path)],
            check=True, capture_output=True, env={**os.environ, **GIT_ENV},
        )  # fmt: skip
        repo = cls(path)
        repo.commit(branch, files, message, parent=None)
        return repo

    def git(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", f"--git-dir={self.path}", *args],
            input=input, capture_output=True, env={**os.environ, **GIT_ENV, **(env or {})},
        )  # fmt: skip
        if done.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode("utf-8", errors="surrogateescape")

    def _try(self, *args: str) -> str | None:
        try:
            return self.git(*args).strip() or None
        except GitError:
            return None

    # -- refs --------------------------------------------------------------------------------------------------

    def branch(self, name: str) -> str | None:
        """The commit ``refs/heads/name`` points at."""
        return None if name.startswith("-") else self._try("rev-parse", "--verify", "--quiet", f"refs/heads/{name}")

    def branches(self) -> dict[str, str]:
        out = self.git("for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads")
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def resolve(self, ref: str) -> str | None:
        """The commit a branch, tag or (abbreviated) sha names, like the hosts resolve ``?ref=``."""
        if not ref or ref.startswith("-") or ".." in ref:
            return None
        for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
            sha = self._try("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}")
            if sha:
                return sha
        return None

    def object_type(self, sha: str) -> str | None:
        if not re.fullmatch(r"[0-9a-f]{4,64}", sha):
            return None
        return self._try("cat-file", "-t", sha)

    def is_ancestor(self, older: str, newer: str) -> bool:
        try:
            self.git("merge-base", "--is-ancestor", older, newer)
            return True
        except GitError:
            return False

    def update_ref(self, branch: str, new: str, old: str) -> None:
        """Move ``branch`` from ``old`` (``ZERO_SHA``: it must not exist) to ``new``, atomically."""
        self.git("update-ref", f"refs/heads/{branch}", new, old)

    # -- trees and blobs ---------------------------------------------------------------------------------------

    def entry(self, commit: str, path: str) -> Entry | None:
        """The tree entry at ``path`` in ``commit`` ("" is the root tree)."""
        if not path:
            tree = self.git("rev-parse", f"{commit}^{{tree}}").strip()
            return Entry("040000", "tree", tree, None, "")
        found = self.ls(commit, path=path, itself=True)
        return found[0] if found else None

    def ls(self, tree_ish: str, *, path: str = "", recursive: bool = False, itself: bool = False) -> list[Entry]:
        """``git ls-tree -l``: the entries of the directory ``path`` (recursive: every blob and tree below it), or
        with ``itself`` the entry of ``path``. Paths are relative to the repository root."""
        args = ["ls-tree", "-l", "-z", "--full-tree"]
        if recursive:
            args += ["-r", "-t"]
        args.append(tree_ish)
        if path:
            args += ["--", path if itself else f"{path}/"]
        entries = []
        for record in self.git(*args).split("\0"):
            if not record:
                continue
            meta, _, name = record.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append(Entry(mode, kind, sha, None if size == "-" else int(size), name))
        if itself:
            return [e for e in entries if e.path == path]
        return entries

    def blob(self, sha: str) -> bytes:
        return subprocess.run(
            ["git", f"--git-dir={self.path}", "cat-file", "blob", sha],
            check=True, capture_output=True, env={**os.environ, **GIT_ENV},
        ).stdout  # fmt: skip

    def read(self, ref: str, path: str) -> bytes | None:
        """The bytes of the file ``path`` at ``ref``, None when it is not a file there."""
        commit = self.resolve(ref)
        entry = self.entry(commit, path) if commit else None
        return self.blob(entry.sha) if entry is not None and entry.type == "blob" else None

    def last_commit_for(self, ref: str, path: str) -> str | None:
        """The last commit reachable from ``ref`` that touched ``path`` (GitLab's ``last_commit_id``)."""
        return self._try("log", "-1", "--format=%H", ref, "--", path)

    def commit_info(self, sha: str) -> Obj:
        fmt = "%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"
        fields = self.git("show", "-s", f"--format={fmt}", sha).split("\0")
        keys = ("sha", "tree", "parents", "author_name", "author_email", "authored", "committer_name",
                "committer_email", "committed", "message")  # fmt: skip
        info: Obj = dict(zip(keys, fields, strict=True))
        info["parents"] = info["parents"].split()
        info["message"] = info["message"].rstrip("\n")
        return info

    # -- writes ------------------------------------------------------------------------------------------------

    def commit(
        self, branch: str, changes: Mapping[str, str | bytes | None], message: str, *, parent: str | None
    ) -> str:
        """One commit on ``branch`` whose parent is ``parent`` (None: a root commit), with ``changes`` applied to
        the parent's tree (None deletes a path). The branch moves only if it still points at ``parent``: a
        concurrent writer makes this raise ``GitError`` instead of losing a commit. Four ``git`` runs whatever
        the number of files (blobs are hashed in one batch)."""
        with tempfile.TemporaryDirectory(prefix="index-", dir=self.path) as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", *([parent] if parent else ["--empty"]), env=env)
            written = {path: content for path, content in changes.items() if content is not None}
            blob_files = []
            for i, content in enumerate(written.values()):
                blob = Path(tmp) / f"blob-{i}"
                blob.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
                blob_files.append(str(blob))
            listing = "".join(f"{name}\n" for name in blob_files).encode()
            shas = self.git("hash-object", "-w", "--no-filters", "--stdin-paths", input=listing).split()
            # --index-info: "mode sha<TAB>path", NUL-terminated with -z; mode 0 removes the path.
            records = [f"100644 {sha}\t{path}\0" for path, sha in zip(written, shas, strict=True)]
            records += [f"0 {ZERO_SHA}\t{path}\0" for path, content in changes.items() if content is None]
            self.git("update-index", "-z", "--index-info", input="".join(records).encode(), env=env)
            tree = self.git("write-tree", env=env).strip()
        args = ["commit-tree", tree] + (["-p", parent] if parent else []) + ["-F", "-"]
        sha = self.git(*args, input=message.encode("utf-8")).strip()
        self.update_ref(branch, sha, parent or ZERO_SHA)
        return sha

    def merge(self, base: str, head: str, message: str) -> str:
        """Merge branch ``head`` into branch ``base`` as a host's merge button does: a fast-forward when ``base``
        has not moved, else a merge commit (``git merge-tree --write-tree``; a conflict raises ``GitError``)."""
        base_sha, head_sha = self.branch(base), self.branch(head)
        if base_sha is None or head_sha is None:
            raise GitError(f"cannot merge {head} into {base}: a branch is missing")
        if self.is_ancestor(base_sha, head_sha):
            self.update_ref(base, head_sha, base_sha)
            return head_sha
        tree = self.git("merge-tree", "--write-tree", base_sha, head_sha).split("\n", 1)[0].strip()
        sha = self.git("commit-tree", tree, "-p", base_sha, "-p", head_sha, "-F", "-", input=message.encode()).strip()
        self.update_ref(base, sha, base_sha)
        return sha

    def diff(self, old: str, new: str) -> str:
        return self.git("diff", old, new)
