"""The Git host layer: read an Application's definition, push one branch and open one pull request.

``make_git_host`` picks the client for ``GIT_PROVIDER``; ``parse_web_url`` and ``parse_repo_url`` find the
repository an Application names. Everything here speaks the ``GitHost`` protocol of ``base.py`` and raises
``GitHostError`` (or ``UnsupportedRepo`` for a URL, path or branch it refuses before any request).
"""

from __future__ import annotations

from typing import Any

from bot.config import ConfigError
from bot.sources.git.base import FileContent, GitHost, GitHostError, PullRequest, RepoRef
from bot.sources.git.github import API_URL as GITHUB_API_URL
from bot.sources.git.github import GitHubClient
from bot.sources.git.gitlab import GitLabClient
from bot.sources.git.http import HTTPGitHost
from bot.sources.git.urls import (
    UnsupportedRepo,
    accepted_hosts,
    check_ref,
    check_repo_path,
    parse_repo_url,
    parse_web_url,
    web_url_candidates,
)
from bot.wording import cli as wording

__all__ = [
    "GITHUB_API_URL",
    "FileContent",
    "GitHost",
    "GitHostError",
    "GitHubClient",
    "GitLabClient",
    "HTTPGitHost",
    "PullRequest",
    "RepoRef",
    "UnsupportedRepo",
    "accepted_hosts",
    "check_ref",
    "check_repo_path",
    "make_git_host",
    "parse_repo_url",
    "parse_web_url",
    "web_url_candidates",
]


def make_git_host(provider: str, api_url: str | None, token: str, **kwargs: Any) -> GitHost:
    """The client for ``provider`` ("github" or "gitlab"): ``api_url`` defaults to https://api.github.com for
    GitHub and is required for GitLab; ``kwargs`` go to the client (``timeout``, ``retries``, ``transport``, ...).
    A missing or wrong setting raises ``ConfigError`` naming the variable."""
    if not token:
        raise ConfigError(wording.GIT_NO_TOKEN)
    if provider == "github":
        return GitHubClient(api_url or GITHUB_API_URL, token, **kwargs)
    if provider == "gitlab":
        if not api_url:
            raise ConfigError(wording.GIT_NO_API_URL)
        return GitLabClient(api_url, token, **kwargs)
    raise ConfigError(wording.GIT_UNKNOWN_PROVIDER.format(provider=provider))
