"""Strings as sigs.k8s.io/yaml writes them: a port of gopkg.in/yaml.v2's emitter.

kubectl-blame prints every key and string value through ``yaml.Marshal(s)``
(sigs.k8s.io/yaml, which marshals with gopkg.in/yaml.v2), so a byte-for-byte
emulation has to choose the same style and fold the same lines. This module ports,
from gopkg.in/yaml.v2, what marshalling one string as a document does:

* ``encode.go``: ``stringv`` (literal style for multi-line text, double quotes for
  what would read back as another type, see ``resolve``) and ``isBase60Float``;
* ``emitterc.go``: ``yaml_emitter_select_scalar_style`` and
  ``yaml_emitter_analyze_scalar`` (which styles the text allows), and the writers
  ``yaml_emitter_write_plain_scalar``, ``..._single_quoted_scalar``,
  ``..._double_quoted_scalar`` (with its escapes), ``..._literal_scalar``,
  ``yaml_emitter_write_indent`` and ``yaml_emitter_write_indicator``;
* ``yamlprivateh.go``: ``is_printable``, ``is_break``.

Only the root-scalar path is ported: no mappings, sequences, tags or anchors. The
line folding is kept on purpose: yaml.v2 folds plain and quoted scalars after
column 80 (``best_width``), and kubectl-blame prints the folded lines as they come.

Guarantees: pure; ``yaml_string(s)`` is what ``yaml.Marshal(s)`` writes, without
its final newline: the same style, escapes (control characters, text outside
yaml.v2's printable set, every character of a value that starts with a BOM) and
folding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.analysis.blame.resolve import resolves_as_string

# encode.go: "From http://yaml.org/type/float.html, except the regular expression there is bogus."
_BASE60_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")


def is_base60_float(s: str) -> bool:
    """yaml.v2 ``isBase60Float``: YAML 1.1's sexagesimal floats (``190:20:30``), quoted for YAML 1.1 readers."""
    return _BASE60_FLOAT.fullmatch(s) is not None


def yaml_string(s: str) -> str:
    """``yaml.Marshal(s)`` without its final newline (kubectl-blame's ``toYAMLString``)."""
    if "\n" in s:
        style = "literal"
    elif resolves_as_string(s) and not is_base60_float(s):
        style = "plain"
    else:
        style = "double"  # would read back as a bool, number, null or timestamp
    a = _analyze(s)
    if style == "plain" and not a.block_plain_allowed:
        style = "single"
    if style == "single" and not a.single_quoted_allowed:
        style = "double"
    if style == "literal" and not a.block_allowed:
        style = "double"
    return _Emitter().document(s, style)[:-1]


@dataclass
class _Analysis:
    block_plain_allowed: bool = True
    single_quoted_allowed: bool = True
    block_allowed: bool = True


_BREAKS = "\r\n\x85\u2028\u2029"


def _printable_char(ch: str) -> bool:
    """yaml.v2 is_printable: LF, ASCII printables, and BMP text (no surrogates, BOM, U+FFFE/F)."""
    cp = ord(ch)
    return cp == 0x0A or 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xD7FF or (0xE000 <= cp <= 0xFFFD and cp != 0xFEFF)


def _analyze(s: str) -> _Analysis:
    """yaml.v2 ``yaml_emitter_analyze_scalar``, reduced to what a root scalar needs."""
    if not s:
        return _Analysis(True, True, False)
    block_ind = s.startswith(("---", "..."))
    line_breaks = special = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = previous_space = previous_break = False
    preceded_by_ws = True
    n = len(s)
    for i, ch in enumerate(s):
        followed_by_ws = i + 1 >= n or s[i + 1] in " \t"
        if i == 0:
            if ch in "#,[]{}&*!|>'\"%@`" or (ch in "?:-" and followed_by_ws):
                block_ind = True
        elif (ch == ":" and followed_by_ws) or (ch == "#" and preceded_by_ws):
            block_ind = True
        if not _printable_char(ch):
            special = True
        if ch == " ":
            leading_space = leading_space or i == 0
            trailing_space = trailing_space or i == n - 1
            break_space = break_space or previous_break
            previous_space, previous_break = True, False
        elif ch in _BREAKS:
            line_breaks = True
            leading_break = leading_break or i == 0
            trailing_break = trailing_break or i == n - 1
            space_break = space_break or previous_space
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_by_ws = ch in " \t\0" or ch in _BREAKS
    a = _Analysis()
    if leading_space or leading_break or trailing_space or trailing_break or line_breaks or block_ind:
        a.block_plain_allowed = False
    if trailing_space:
        a.block_allowed = False
    if break_space:
        a.block_plain_allowed = a.single_quoted_allowed = False
    if space_break or special:
        a.block_plain_allowed = a.single_quoted_allowed = a.block_allowed = False
    return a


_ESCAPES = {
    0x00: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r",
    0x1B: "e", 0x22: '"', 0x5C: "\\", 0x85: "N", 0xA0: "_", 0x2028: "L", 0x2029: "P",
}  # fmt: skip


class _Emitter:
    """yaml.v2's emitter writing one document that holds one scalar (what yaml.Marshal(s) does).

    The line folding is kept on purpose: yaml.v2 folds plain and quoted scalars after
    column 80, and kubectl-blame prints the folded lines as they come.
    """

    best_width = 80

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.column = 0
        self.indent = -1
        self.whitespace = True
        self.indention = True

    def put(self, text: str) -> None:
        self.buf.append(text)
        self.column += len(text)

    def put_break(self) -> None:
        self.buf.append("\n")
        self.column = 0

    def write_break(self, ch: str) -> None:
        if ch == "\n":
            self.put_break()
        else:
            self.buf.append(ch)
            self.column = 0

    def write_indent(self) -> None:
        indent = max(self.indent, 0)
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        while self.column < indent:
            self.put(" ")
        self.whitespace = self.indention = True

    def write_indicator(self, indicator: str, need_whitespace: bool, is_whitespace: bool) -> None:
        if need_whitespace and not self.whitespace:
            self.put(" ")
        self.put(indicator)
        self.whitespace = is_whitespace
        self.indention = False

    def document(self, s: str, style: str) -> str:
        self.indent = 2  # yaml_emitter_increase_indent(flow=true) from the root's -1
        {"plain": self.plain, "single": self.single, "double": self.double, "literal": self.literal}[style](s)
        self.indent = -1
        self.write_indent()  # document end
        return "".join(self.buf)

    def plain(self, s: str) -> None:
        if not self.whitespace:
            self.put(" ")
        spaces = breaks = False
        for i, ch in enumerate(s):
            if ch == " ":
                nxt = s[i + 1] if i + 1 < len(s) else ""
                if not spaces and self.column > self.best_width and nxt != " ":
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            elif ch in _BREAKS:
                if not breaks and ch == "\n":
                    self.put_break()
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(ch)
                self.indention = spaces = breaks = False
        self.whitespace = self.indention = False

    def single(self, s: str) -> None:
        self.write_indicator("'", True, False)
        spaces = breaks = False
        last = len(s) - 1
        for i, ch in enumerate(s):
            if ch == " ":
                nxt = s[i + 1] if i < last else ""
                if not spaces and self.column > self.best_width and 0 < i < last and nxt != " ":
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            elif ch in _BREAKS:
                if not breaks and ch == "\n":
                    self.put_break()
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put("''" if ch == "'" else ch)
                self.indention = spaces = breaks = False
        self.write_indicator("'", False, False)
        self.whitespace = self.indention = False

    def double(self, s: str) -> None:
        self.write_indicator('"', True, False)
        # yaml.v2's is_bom looks at the start of the value, not at the character: a value that
        # starts with a BOM gets every character escaped.
        bom = s.startswith("\ufeff")
        spaces = False
        last = len(s) - 1
        for i, ch in enumerate(s):
            cp = ord(ch)
            if bom or not _printable_char(ch) or ch in _BREAKS or ch in '"\\':
                if cp in _ESCAPES:
                    self.put("\\" + _ESCAPES[cp])
                elif cp <= 0xFF:
                    self.put(f"\\x{cp:02X}")
                elif cp <= 0xFFFF:
                    self.put(f"\\u{cp:04X}")
                else:
                    self.put(f"\\U{cp:08X}")
                spaces = False
            elif ch == " ":
                if not spaces and self.column > self.best_width and 0 < i < last:
                    self.write_indent()
                    if s[i + 1] == " ":
                        self.put("\\")
                else:
                    self.put(ch)
                spaces = True
            else:
                self.put(ch)
                spaces = False
        self.write_indicator('"', False, False)
        self.whitespace = self.indention = False

    def literal(self, s: str) -> None:
        self.write_indicator("|", True, False)
        if s and (s[0] == " " or s[0] in _BREAKS):
            self.write_indicator("2", False, False)  # indentation indicator: best_indent
        if not s or s[-1] not in _BREAKS:
            self.write_indicator("-", False, False)
        elif len(s) == 1 or s[-2] in _BREAKS:
            self.write_indicator("+", False, False)
        self.put_break()
        self.indention = self.whitespace = True
        breaks = True
        for ch in s:
            if ch in _BREAKS:
                self.write_break(ch)
                self.indention = breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(ch)
                self.indention = breaks = False
