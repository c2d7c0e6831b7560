"""Templates and the safe rendering of what users wrote.

Jinja2 autoescapes every template. Markdown goes through markdown-it-py with raw HTML disabled
(any tag a user typed is shown as text), and links or images are kept only when they point to
http(s) URLs; every other scheme (``javascript:``, ``data:``, ``vbscript:`` ...) is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from bountyboard.accounts.auth import last_use
from bountyboard.clock import as_utc, now
from bountyboard.ledger.money import format_money

TEMPLATES_DIR = Path(__file__).parent / "templates"
STATIC_DIR = Path(__file__).parent / "static"


def is_web_url(value: str | None) -> bool:
    """True for absolute http(s) URLs with a host: the only links the site renders as links."""
    if not value:
        return False
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


class _SafeMarkdown(MarkdownIt):
    """CommonMark without raw HTML; links and images only to http(s) URLs, links marked nofollow."""

    def __init__(self) -> None:
        super().__init__("commonmark", {"html": False, "linkify": False})
        self.enable(["table", "strikethrough"])
        self.add_render_rule("link_open", _link_open)

    def validateLink(self, url: str) -> bool:
        return is_web_url(url)


def _link_open(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return str(renderer.renderToken(tokens, idx, options, env))


_md = _SafeMarkdown()


def markdown(text: str | None) -> Markup:
    # Markup is safe here: raw HTML is disabled, so the renderer escapes every character users wrote.
    return Markup(_md.render(text or ""))


def when(value: datetime | str | None) -> str:
    """A short relative time ("3 min ago", "in 2 h") for lists."""
    if value is None:
        return "never"
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    seconds = (as_utc(now()) - as_utc(value)).total_seconds()
    future, seconds = seconds < 0, abs(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            amount = f"{int(seconds // size)} {unit}"
            break
    else:
        return "just now"
    return f"in {amount}" if future else f"{amount} ago"


def link(url: str | None, text: str | None = None) -> Markup:
    """An anchor for http(s) URLs; anything else is shown as inert text."""
    if not is_web_url(url):
        return Markup('<span class="inert-url">{}</span>').format(url or "")
    return Markup('<a href="{}" rel="nofollow noopener noreferrer">{}</a>').format(url, text or url)


def build_environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES_DIR), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    # last_use: a key's last use counts this process's marks not yet written (accounts.auth batches them)
    env.filters.update(markdown=markdown, when=when, money=format_money, last_use=last_use)
    env.globals.update(link=link, is_web_url=is_web_url, escape=escape)
    return env
