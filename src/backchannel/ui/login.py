"""Logging in to a protected server from the terminal: ``backchannel connect https://...``.

The first request the server refuses (401) starts the login: the system browser opens the
authorization server's page (``--no-browser`` prints the link instead), and the answer comes
back to a listener on ``127.0.0.1``. Tokens and the client's registration are kept in
``$XDG_CONFIG_HOME/backchannel/oauth.json`` (mode 0600), so the next ``connect`` needs no login
until they run out; ``backchannel logout URL`` forgets them.

``backchannel call URL`` uses that login too (``kept_login``): the kept tokens, refreshed at
the token endpoint when they run out, and never a browser; with no login kept it says to run
``connect`` once. An ``Authorization`` header given with ``--header`` is sent instead.
"""

from __future__ import annotations

__all__ = ["CLIENT_NAME", "forget", "kept_login", "login_advice", "terminal_oauth"]

from typing import TYPE_CHECKING

from ..client.oauth.store import FileTokenStore

if TYPE_CHECKING:
    from rich.console import Console

    from ..client.oauth import KeptLogin, OAuth

#: How the terminal client names itself when it registers with an authorization server.
CLIENT_NAME = "backchannel (terminal client)"


def terminal_oauth(console: Console, *, browser: bool = True) -> OAuth:
    """The terminal client's ``OAuth``: logins in the browser (or by a printed link), tokens on disk."""
    from rich.markup import escape

    from ..client.oauth import LoopbackBrowser, OAuth

    def announce(text: str) -> None:
        # One unwrapped line: the link must survive being copied out of the terminal whole.
        console.print(f"[yellow]{escape(text)}[/]", soft_wrap=True, highlight=False)

    return OAuth(
        LoopbackBrowser(open_browser=browser, announce=announce),
        store=FileTokenStore(),
        client_name=CLIENT_NAME,
    )


def kept_login() -> tuple[OAuth, KeptLogin]:
    """``backchannel call``'s ``OAuth``: the login ``connect`` keeps, refreshed, never a new one;
    and its grant, whose ``needed`` says afterwards whether a login was missing."""
    from ..client.oauth import KeptLogin, OAuth

    grant = KeptLogin()
    return OAuth(grant=grant, store=FileTokenStore()), grant


def login_advice(url: str) -> str:
    """What to say when ``url`` needs a login that no kept one gives: the one line of ``call``."""
    return f"{url} needs a login: run `backchannel connect {url}` once; call then uses the login it keeps"


async def forget(url: str) -> str:
    """``backchannel logout URL``: forget (and revoke where offered) what is kept for ``url``; what happened."""
    store = FileTokenStore()
    if store.is_empty():  # nothing kept for any server: no OAuth (nor its HTTP client) to load, no lock to take
        return f"no login kept for {url} (in {store.path})"
    from ..client.oauth import LoopbackBrowser, OAuth

    oauth = OAuth(LoopbackBrowser(open_browser=False), store=store, client_name=CLIENT_NAME)
    if await oauth.logout(url):
        return f"logged out of {url}: its tokens are forgotten ({store.path})"
    return f"no login kept for {url} (in {store.path})"
