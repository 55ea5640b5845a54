"""Fixes from chat: what a pull request proposes, where the Application is defined, and the edit of its file.

Pure modules (no I/O):

* ``proposal`` -- the findings a PR is for, the merged rules, and the fix's identity (hash, branch, store id);
* ``pr_text`` -- the PR's title and body, with the four points a reviewer must see;
* ``edit`` -- ignoreDifferences rules and sync options into an Application (or ApplicationSet) file, or a field
  out of a plain manifest, with a diff that only adds (or, for a dropped field, only removes) whole lines;
  ``rules`` works out on the parsed data what must be added, ``yamltext`` is the line-level machinery.

With clients passed in (Argo CD and a Git host, read and write through ``bot.sources`` only):

* ``locate`` -- where the Application is defined (annotation, parent app of apps, ApplicationSet);
* ``opener`` -- the one branch, one commit and one pull request.

With the store passed in: ``approvals`` -- who may open the pull request, and when enough people have said yes.
"""
