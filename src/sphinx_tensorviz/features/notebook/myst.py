"""A MyST Markdown page as blocks of plain CommonMark prose and the directives the notebook places.

Jupyter renders CommonMark with ``$...$`` and ``$$...$$`` math, and nothing of MyST's: a directive
fence would show as a code block named ``{note}``. So each directive becomes what it means in plain
Markdown (an admonition a quoted paragraph with its title in bold, a ``code-block`` a fenced block,
``math`` a ``$$`` block, an image a Markdown image), roles become their text, and labels and comments
go. The ``tv-*`` directives are handed to the notebook whole (:class:`Directive`), with the lines they
span, so that it can find the figures Sphinx made of them.

The source is split with markdown-it, the parser MyST itself uses, so fences inside fences, tildes
and colon fences are found as MyST finds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.colon_fence import colon_fence_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

ADMONITIONS = ("attention", "caution", "danger", "error", "hint", "important", "note", "seealso", "tip", "warning")
CODE = ("code-block", "code", "sourcecode", "code-cell")
#: directives that mean nothing outside the site (navigation, tables of contents)
SITE_ONLY = ("toctree", "contents", "tv-catalogue", "include", "raw", "only")

_ROLE = re.compile(r"\{([a-zA-Z][\w:+-]*)\}`([^`]*)`")
_LABEL = re.compile(r"^\s*\([^()\s]+\)=\s*$")
_TARGET = re.compile(r"^(.*?)\s*<[^<>]+>$", re.DOTALL)
_OPTION = re.compile(r"^:([\w-]+):(?:\s+(.*))?$")


@dataclass(frozen=True)
class Directive:
    """A ``tv-*`` directive: its name, argument, options, body and lines (1-based, inclusive)."""

    name: str
    argument: str
    options: dict[str, str]
    body: str
    first: int
    last: int
    body_offset: int  #: the page line before the body's first line


def body_blocks(directive: Directive) -> Blocks:
    """A ``tv-*`` directive's body as blocks of its own (a tour's steps are directives in it)."""
    blocks = Blocks()
    _convert(directive.body, directive.body_offset, blocks)
    return blocks


@dataclass
class Blocks:
    """The page in order: prose (CommonMark) and the directives the notebook places itself."""

    items: list[str | Directive] = field(default_factory=list)

    def prose(self, text: str) -> None:
        """Add prose to the current Markdown cell; a heading starts a new one."""
        text = text.strip("\n")
        if not text:
            return
        if self.items and isinstance(self.items[-1], str) and not text.startswith("#"):
            self.items[-1] += "\n\n" + text
        else:
            self.items.append(text)


def parser() -> MarkdownIt:
    return MarkdownIt("commonmark").use(front_matter_plugin).use(colon_fence_plugin).use(dollarmath_plugin)


def page_blocks(source: str) -> Blocks:
    """The page's prose as CommonMark, and its ``tv-*`` directives, in the order of the page."""
    blocks = Blocks()
    _convert(source, 0, blocks)
    return blocks


def _convert(source: str, offset: int, blocks: Blocks) -> None:
    """Add ``source`` (whose first line is line ``offset + 1`` of the page) to ``blocks``."""
    lines = source.splitlines()
    for token in parser().parse(source):
        if token.level != 0 or token.map is None or token.nesting == -1:
            continue
        start, end = token.map
        if token.type == "front_matter":
            continue
        name, argument = _directive_of(token)
        if name is None:
            text = "\n".join(lines[start:end])
            blocks.prose(text if token.type in ("fence", "code_block", "math_block") else _plain(text))
        elif name.startswith("tv-"):
            options, body = _options_and_body(token.content)
            blocks.items.append(Directive(name, argument, options, body, offset + start + 1, offset + end,
                                          _body_offset(offset + start, token.content, body)))
        else:
            _directive(name, argument, token, offset + start, blocks)


def _directive_of(token: Token) -> tuple[str | None, str]:
    if token.type not in ("fence", "colon_fence") or not token.info.startswith("{"):
        return None, ""
    name, _, argument = token.info[1:].partition("}")
    return name.strip(), argument.strip()


def _options_and_body(content: str) -> tuple[dict[str, str], str]:
    """A directive's options (``:name: value`` lines or a ``---`` YAML block first) and its body."""
    lines = content.splitlines()
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---":
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), len(lines) - 1)
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        return options, "\n".join(lines[end + 1:])
    count = 0
    for line in lines:
        found = _OPTION.match(line)
        if found is None:
            break
        options[found.group(1)] = (found.group(2) or "").strip()
        count += 1
    return options, "\n".join(lines[count:])


def _body_offset(start: int, content: str, body: str) -> int:
    """The page line before a body's first line (the fence opens at 0-based line ``start``)."""
    return start + 1 + len(content.splitlines()) - len(body.splitlines())


def _directive(name: str, argument: str, token: Token, start: int, blocks: Blocks) -> None:
    """A directive that is not the extension's, as plain Markdown (its body converted in turn)."""
    options, body = _options_and_body(token.content)
    body_line = _body_offset(start, token.content, body)
    if name in SITE_ONLY:
        return
    if name in CODE:
        fence = "````" if "```" in body else "```"
        blocks.prose(f"{fence}{argument}\n{body.strip(chr(10))}\n{fence}")
    elif name == "math":
        blocks.prose(f"$$\n{body.strip()}\n$$")
    elif name in ("figure", "image"):
        alt = options.get("alt", "")
        blocks.prose(f"![{alt}]({argument})")
        _convert(body, body_line, blocks)
    elif name in ADMONITIONS or name == "admonition":
        inner = Blocks()
        _convert(body, body_line, inner)
        title = argument if name == "admonition" else name.capitalize()
        text = "\n\n".join(item for item in inner.items if isinstance(item, str))
        quoted = "\n".join(f"> {line}".rstrip() for line in f"**{_plain(title)}**\n\n{text}".splitlines())
        blocks.prose(quoted)
    else:  # a directive Jupyter has no equivalent of: its words stay
        _convert(body, body_line, blocks)


def _plain(text: str) -> str:
    """MyST's inline syntax in CommonMark: roles as their text (math as ``$...$``), no labels or comments."""
    kept = [line for line in text.splitlines() if not _LABEL.match(line) and not line.startswith("%")]
    return _ROLE.sub(_role, "\n".join(kept))


def _role(found: re.Match[str]) -> str:
    role, content = found.group(1), found.group(2)
    if role == "math":
        return f"${content}$"
    shown = _TARGET.match(content)
    text = shown.group(1) if shown else content.lstrip("~!")
    if role == "download":  # a project file: the notebook's zip holds the lesson's code files
        target = content[len(shown.group(1)):].strip().strip("<>") if shown else content
        return f"[{text}]({target})"
    return f"`{text}`" if role in ("code", "literal", "file", "samp", "kbd", "command", "program") else text
