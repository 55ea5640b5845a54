"""The ``argo-why`` command line (``python -m bot`` is the same).

Subcommands: ``explain`` (files in, report out), ``why`` (the same against a live
Argo CD, read-only), ``blame`` (who owns every line), ``serve`` (the Slack bot) and
``demo`` (the whole bot offline, on the bundled examples). Exit status: 0 no drift,
1 drift explained or desired objects left uncompared, 2 bad input or configuration (one line on stderr naming the
file and document, or the variable), 3 upstream or internal error. No traceback
reaches the user unless ``ARGO_WHY_DEBUG=1`` is set.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from bot.demo import EXAMPLES
from bot.errors import ArgoWhyError, BadInput
from bot.model import Report

EXIT_CLEAN, EXIT_DRIFT, EXIT_BAD_INPUT, EXIT_UPSTREAM = 0, 1, 2, 3
FORMATS = ("text", "json", "slack", "html")
"""``--format`` of ``explain`` and ``why``: ``html`` is the drift page, one self-contained file."""


def read_objects(
    paths: Sequence[str], *, require_name: bool = True, require_kind: bool = True, option: str | None = None
) -> list[dict[str, Any]]:
    """The objects of every file (``-`` is stdin), read as bytes: the loader decodes UTF-8, UTF-16, byte order marks.

    With ``option`` (``--desired``, ``--live``) a file without a single object is bad input naming that file: an
    empty side has nothing to compare, and must never pass for "no drift". At most ``MAX_INPUT_BYTES`` (and one
    more, so that the loader can say it is too large) are read from each file."""
    from bot.analysis import MAX_INPUT_BYTES, load_documents
    from bot.wording import cli as wording

    objs: list[dict[str, Any]] = []
    for p in paths:
        data: str | bytes
        if p == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a replaced stdin (tests) may be text only
            reader = stdin if stdin is not None else sys.stdin
            data, source = reader.read(MAX_INPUT_BYTES + 1), "<stdin>"
        else:
            try:
                with Path(p).open("rb") as f:
                    data, source = f.read(MAX_INPUT_BYTES + 1), p
            except OSError as e:
                raise BadInput(f"cannot read: {e.strerror or e}", source=p) from e
        found = load_documents(data, source, require_name=require_name, require_kind=require_kind)
        if option is not None and not found:
            empty = wording.INPUT_EMPTY if option == "--desired" else wording.INPUT_EMPTY_LIVE
            raise BadInput(empty.format(option=option), source=source)
        objs.extend(found)
    return objs


def stdin_once(args: argparse.Namespace, options: Sequence[str]) -> None:
    """Standard input can be read once: ``-`` given to two options (or twice to one) is bad input, said before
    anything is read (the second reader would find it empty and blame the file)."""
    from bot.wording import cli as wording

    given = [f"--{o.replace('_', '-')}" for o in options for p in getattr(args, o) or () if p == "-"]
    if len(given) > 1:
        raise BadInput(wording.INPUT_STDIN_TWICE.format(options=" and ".join(dict.fromkeys(given))), source="<stdin>")


def render(report: Report, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "slack":  # the parent message and its thread, as the bot would post them (no buttons)
        from bot.slack.render import Alert, parent_message, thread_messages

        alert = Alert.from_report(report)
        doc = {
            "parent": parent_message(report, alert, None).to_dict(),
            "thread": [m.to_dict() for m in thread_messages(report, alert)],
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":  # the drift page: one self-contained file (bot/report/html.py)
        from bot.report.html import render_html

        return render_html(report)
    from bot.report.text import render as render_text

    return render_text(report)


def cmd_explain(args: argparse.Namespace) -> int:
    from bot.analysis import explain, looks_swapped
    from bot.wording import cli as wording

    stdin_once(args, ("desired", "live", "context", "desired_again"))
    with _inputs_spared() as inputs_read:
        desired = read_objects(args.desired, option="--desired")
        # a pasted live object may start at metadata:
        live = read_objects(args.live, require_kind=False, option="--live")
        if looks_swapped(desired, live):
            raise BadInput(wording.INPUT_SWAPPED, source=", ".join(args.desired))
        context = read_objects(args.context) if args.context else []
        again = read_objects(args.desired_again) if args.desired_again else None
        inputs_read()
        report = explain(desired, live, context, app=args.app, desired_again=again)
        if not report.resources_compared and report.not_compared:  # hooks alone are not "no counterpart"
            raise BadInput(wording.INPUT_NO_COUNTERPART, source=", ".join(args.live))
        sys.stdout.write(render(report, args.format))
        if _left_for_exit is not None:  # run() ends the process next: freeing the inputs would only cost time
            _left_for_exit.append((desired, live, context, again, report))
    if args.format != "text":  # the text report prints its notes itself
        for note in report.notes:
            print(f"argo-why: note: {note}", file=sys.stderr)
    return exit_status(report)


@contextmanager
def _inputs_spared() -> Iterator[Callable[[], None]]:
    """Inputs read without the cycle collector, then exempt from it (``inputs_read()``) until the command ends.

    Parsing a large app creates a million dicts and lists, none of them in a cycle; each full collection walked
    them all again, while they were parsed and while they were analysed (a third of ``argo-why explain``'s time
    for a 2,000-resource app, bench/analysis.py). ``gc.freeze`` leaves them to reference counting alone; what
    the analysis creates is still collected. The collector is as it was afterwards (tests call ``main``)."""
    enabled, frozen = gc.isenabled(), gc.get_freeze_count()

    def inputs_read() -> None:
        gc.freeze()
        if enabled:
            gc.enable()

    gc.disable()
    try:
        yield inputs_read
    finally:
        if enabled:
            gc.enable()
        if not frozen:
            gc.unfreeze()


def exit_status(report: Report) -> int:
    """1 for drift, for a report that left desired objects out (incomplete is not clean), for resources only one side
    has (to prune, missing) and for an app Argo CD calls OutOfSync with nothing that differs; else 0."""
    return EXIT_CLEAN if report.clean else EXIT_DRIFT


def cmd_why(args: argparse.Namespace) -> int:
    import asyncio

    from bot.config import load_settings
    from bot.sources.clients import argocd_factory, clusters
    from bot.why import investigate

    cfg = load_settings().argocd
    new_client = argocd_factory(cfg)

    async def run() -> Report:
        async with new_client() as argocd:
            return await investigate(args.app, app_namespace=args.app_namespace or cfg.app_namespace, argocd=argocd,
                                     cluster=None if args.no_cluster else clusters(cfg))  # fmt: skip

    report = asyncio.run(run())
    sys.stdout.write(render(report, args.format))
    return exit_status(report)


def cmd_serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from bot.app import build_app, build_services, serve
    from bot.config import load_settings
    from bot.runtime.routes import check_channel_routes

    settings = load_settings(serve=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    for chatty in ("httpx", "apscheduler"):  # a line per request, per scheduled run: not what an operator reads
        logging.getLogger(chatty).setLevel(logging.WARNING)
    services = build_services(settings)
    asyncio.run(check_channel_routes(services))  # an unknown channel name in CHANNEL_ROUTES stops here, in words
    serve(build_app(services), settings)
    return EXIT_CLEAN


def cmd_blame(args: argparse.Namespace) -> int:
    from bot.analysis import blame_many
    from bot.wording import cli as wording

    objs = read_objects([args.file], require_name=False)
    if not objs:
        raise BadInput(wording.INPUT_EMPTY_BLAME, source="<stdin>" if args.file == "-" else args.file)
    sys.stdout.write(blame_many(objs, time_format=args.time))
    return EXIT_CLEAN


def cmd_demo(args: argparse.Namespace) -> int:
    if not args.reports:
        import asyncio
        import logging

        from bot.demo.runner import run

        logging.basicConfig(level=logging.ERROR)
        try:
            return asyncio.run(run(EXAMPLES, hold=args.hold))
        except KeyboardInterrupt:  # --hold ends with Ctrl-C
            return EXIT_CLEAN
    from bot.analysis import explain

    scenarios = sorted(p for p in EXAMPLES.iterdir() if (p / "case.json").exists()) if EXAMPLES.is_dir() else []
    if not scenarios:
        raise BadInput("no bundled examples found", source=str(EXAMPLES))
    for folder in scenarios:
        spec = json.loads((folder / "case.json").read_text(encoding="utf-8"))
        ctx = folder / "context.yaml"
        report = explain(
            read_objects([str(folder / "desired.yaml")]),
            read_objects([str(folder / "live.yaml")]),
            read_objects([str(ctx)]) if ctx.exists() else [],
            app=spec.get("app"),
        )
        bar = "=" * 100
        sys.stdout.write(f"{bar}\n{folder.name}: {spec.get('title', '')}\n{bar}\n")
        sys.stdout.write(render(report, "text") + "\n")
    return EXIT_CLEAN


_DEBUG = "  ARGO_WHY_DEBUG=1   print the traceback of an internal error (never printed otherwise)"
_EXIT_REPORT = """\
exit status:
  0  no drift: every desired object was compared and matches (hooks are not compared, as in Argo CD)
  1  drift explained, an incomplete comparison, a resource to prune or missing, or nothing differs (why)
  2  {bad}: one line on stderr naming it
  3  {upstream}"""


def _variables(*groups: Any) -> str:
    """The environment variables of the settings groups, as the settings read them (one list, never two)."""
    names = [str(f.validation_alias) for group in groups for f in group.model_fields.values()]
    lines, line = [], " "
    for name in names:
        if len(line) + len(name) + 2 > 100:
            lines.append(line)
            line = " "
        line += f" {name},"
    return "\n".join([*lines, line.rstrip(",")])


def _epilogs() -> dict[str, str]:
    """What ``--help`` says after the options of each command: its environment and its exit status."""
    from bot.config import ArgoCDSettings, Settings

    # every group of the settings object, so that a new variable is listed the day it is read
    groups = [f.annotation for f in Settings.model_fields.values()]

    return {
        "explain": "environment:\n" + _DEBUG + "\n\n" + _EXIT_REPORT.format(
            bad="bad input (a file that cannot be read or parsed, --desired and --live swapped, or no desired object "
                "has a live counterpart)",
            upstream="internal error"),
        "why": "environment (ARGOCD_URL and ARGOCD_TOKEN required):\n" + _variables(ArgoCDSettings) + "\n" + _DEBUG
               + "\n\n" + _EXIT_REPORT.format(bad="a missing or malformed variable",
                                                upstream="Argo CD or the cluster refused or did not answer (said in "
                                                         "words), or an internal error"),
        "blame": "environment:\n" + _DEBUG + "\n\nexit status:\n  0  printed\n  2  bad input (or no object at all): "
                 "one line on stderr naming the file and the document\n  3  internal error",
        "serve": "environment (the README says what each means; required: SLACK_BOT_TOKEN with\n"
                 "SLACK_SIGNING_SECRET, or SLACK_APP_TOKEN for Socket Mode; SLACK_CHANNEL, ARGOCD_URL, ARGOCD_TOKEN,\n"
                 "WEBHOOK_TOKEN):\n"
                 + _variables(*groups) + "\n"
                 + _DEBUG + "\n\nexit status:\n  0  stopped (SIGTERM, Ctrl-C) after handing back the jobs in hand\n"
                 "  2  a missing or malformed variable: one line on stderr naming it\n  3  internal error",
        "demo": "environment: none is read (the demo brings its own fake Slack, Argo CD, cluster and GitHub)\n"
                + _DEBUG + "\n\nexit status:\n  0  the demo ran to the end\n  3  internal error",
    }  # fmt: skip


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("argo-why")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from bot import __version__

        return __version__


class _Version(argparse.Action):
    """``--version``, read from the installed package only when asked (importlib.metadata costs 40 ms a start)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"argo-why {_version()}")  # stdout, as argparse's own version action prints it
        parser.exit()


class _CommandParser(argparse.ArgumentParser):
    """A command's parser whose epilog (its environment and exit status) is written only for ``--help``.

    The epilogs list the settings' variables, read from ``bot.config``: importing pydantic-settings for them on
    every start cost ``argo-why explain`` a fifth of a second. The command's name stands in until then."""

    def format_help(self) -> str:
        if self.epilog in _COMMANDS:
            self.epilog = _epilogs()[self.epilog]
        return super().format_help()


_COMMANDS = ("explain", "why", "blame", "serve", "demo")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="argo-why", description="Why is my Argo CD Application OutOfSync?",
        epilog="Each command's --help lists the environment variables it reads and its exit status.",
    )  # fmt: skip
    parser.add_argument("--version", action=_Version, help="show program's version number and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_CommandParser)

    def add(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".", epilog=name,
                              formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip

    ex = add("explain", "explain the drift between rendered manifests and live objects")
    ex.add_argument("--desired", nargs="+", required=True, metavar="FILE", help="rendered manifests (- for stdin)")
    ex.add_argument(
        "--live",
        nargs="+",
        required=True,
        metavar="FILE",
        help="kubectl get -o yaml --show-managed-fields output",
    )
    ex.add_argument("--context", nargs="+", metavar="FILE", help="other cluster objects (HPAs, webhooks, apps, ...)")
    ex.add_argument("--desired-again", nargs="+", metavar="FILE", help="a second render of the same revision")
    ex.add_argument("--app", help="the Application the manifests belong to")
    ex.add_argument("--format", choices=FORMATS, default="text")
    ex.set_defaults(func=cmd_explain)

    wy = add("why", "explain an Application's drift, read-only, from Argo CD and the cluster")
    wy.add_argument("app", metavar="APP")
    wy.add_argument("--app-namespace", help="the Application's namespace (apps in any namespace)")
    wy.add_argument("--format", choices=FORMATS, default="text")
    wy.add_argument("--no-cluster", action="store_true", help="do not read HPAs, webhooks, namespaces")
    wy.set_defaults(func=cmd_why)

    bl = add("blame", "print an object with the owners of every line")
    bl.add_argument("file", metavar="FILE")
    bl.add_argument("--time", choices=("none", "relative", "full"), default="relative")
    bl.set_defaults(func=cmd_blame)

    sv = add("serve", "run the Slack bot (HTTP, or Socket Mode when SLACK_APP_TOKEN is set)")
    sv.set_defaults(func=cmd_serve)

    de = add("demo", "run the whole bot, offline, on the bundled examples (fake Slack and Argo CD)")
    de.add_argument("--reports", action="store_true", help="only print the text report of each example")
    de.add_argument("--hold", action="store_true", help="keep the bot serving its Full diff links until Ctrl-C")
    de.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        return code
    except ArgoWhyError as e:
        print(f"argo-why: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as e:  # a bug: one line, never a traceback, unless asked for
        if os.environ.get("ARGO_WHY_DEBUG"):
            raise
        print(
            f"argo-why: internal error ({type(e).__name__}); set ARGO_WHY_DEBUG=1 for details",
            file=sys.stderr,
        )
        return EXIT_UPSTREAM


_EXIT_AT_ONCE = frozenset({"explain"})
"""Commands that hold nothing to clean up once their output is written: a pure read of files, a report printed."""
_left_for_exit: list[object] | None = None
"""Set by :func:`run` for those commands: what they read, kept alive to the process's end instead of freed object
by object when the command returns (a 2,000-resource app is a million objects)."""


def run() -> NoReturn:
    """The console script (``argo-why``, ``python -m bot``): :func:`main`, then the exit.

    After ``explain`` the process exits at once (``os._exit``) once its output is flushed, and what it read is never
    freed object by object (neither when the command returns nor at the interpreter's end): tens of milliseconds of
    a 2,000-resource app's third of a second (bench/analysis.py). Every other command exits as usual: its cleanups
    (atexit, finalizers) run.
    """
    global _left_for_exit
    at_once = bool(sys.argv[1:2]) and sys.argv[1] in _EXIT_AT_ONCE
    _left_for_exit = [] if at_once else None
    code = main()
    if at_once:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:  # a closed pipe: nobody reads the rest, as main() treats it
            pass
        os._exit(code)
    raise SystemExit(code)
