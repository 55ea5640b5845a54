"""The small error hierarchy of argo-why.

Everything that can go wrong for a reason a user can act on is one of these;
the command line (and later the bot) translates them into one clear line and
an exit status. Anything else is a bug and is reported as such.
"""

from __future__ import annotations


class ArgoWhyError(Exception):
    """Base class: a failure with a message meant for a person."""

    exit_code = 3


class BadInput(ArgoWhyError):
    """The input files cannot be analysed (unparsable, missing kind or name, ...)."""

    exit_code = 2

    def __init__(self, reason: str, *, source: str | None = None, document: int | None = None) -> None:
        self.reason = reason
        self.source = source
        self.document = document
        where = source or "input"
        if document is not None:
            where = f"{where}: document {document}"
        super().__init__(f"{where}: {reason}")


class UpstreamError(ArgoWhyError):
    """Argo CD, the cluster or a Git host failed or refused the request."""

    exit_code = 3
