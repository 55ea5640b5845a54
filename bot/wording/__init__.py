"""Every sentence argo-why says to a person, one module per audience, separate from the logic that says it.

* :mod:`bot.wording.report` -- the report itself, shared by every output: cause titles, better fixes, what not to
  do, explanations, the analysis' reasons and evidence (the only wording the analysis may import);
* :mod:`bot.wording.slack` -- Slack: slash commands, alerts, threads, the digest, fixes from chat;
* :mod:`bot.wording.pr` -- the pull requests argo-why opens, and finding the file a fix edits;
* :mod:`bot.wording.cli` -- errors about the sources and the settings (Git hosts, Argo CD), on the command line
  and wherever else they surface.

Keeping each audience's sentences together keeps tone and terms consistent and a change of phrasing one edit.
Nothing here may interpolate a field value that could belong to a Secret: callers mask values first. This package
re-exports nothing: import the audience's module.
"""
