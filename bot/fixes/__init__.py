"""Fixes as file edits: the text a pull request proposes, computed without any I/O.

``bot.fixes.edit`` adds ignoreDifferences rules and sync options to an Application
(or ApplicationSet) file, or drops a field from a plain manifest, and promises a
diff that only adds (or, for a dropped field, only removes) whole lines.
``bot.fixes.rules`` works out, on the parsed data, what a fix must add;
``bot.fixes.yamltext`` is the line-level machinery the edit stands on.
"""
