"""The Git host layer: read an Application's definition, push one branch and open one pull request.

``parse_web_url`` and ``parse_repo_url`` find the repository an Application names; everything here speaks the
``GitHost`` protocol of ``base.py`` and raises ``GitHostError`` (or ``UnsupportedRepo`` for a URL, path or branch
it refuses before any request).
"""

from __future__ import annotations

from bot.sources.git.base import FileContent, GitHost, GitHostError, PullRequest, RepoRef
from bot.sources.git.urls import (
    UnsupportedRepo,
    accepted_hosts,
    check_ref,
    check_repo_path,
    parse_repo_url,
    parse_web_url,
)

__all__ = [
    "FileContent",
    "GitHost",
    "GitHostError",
    "PullRequest",
    "RepoRef",
    "UnsupportedRepo",
    "accepted_hosts",
    "check_ref",
    "check_repo_path",
    "parse_repo_url",
    "parse_web_url",
]
