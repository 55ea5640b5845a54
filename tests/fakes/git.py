"""The fake GitHub and GitLab servers live in ``bot.devtools`` (the offline demo uses them); re-exported for tests."""

from bot.devtools.fake_git import BareRepo, FakeGitHost, FakeGitHub, FakeGitLab  # noqa: F401
