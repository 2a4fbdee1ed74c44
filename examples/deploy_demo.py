"""The chapter's story (18.8): ``deploy_to_production``, everything the reverse channel does in one tool.

``backchannel demo`` serves it on the bundled demo server (``examples/demo_server.py``
calls ``add_deploy(server)``); type ``call deploy_to_production``. The tool

1. reads the client's **roots** to learn which workspace it deploys (and its git branch);
2. asks a **form**: the branch (the workspace's, prefilled) and the environment;
3. asks for **authorization in URL mode**: the person signs in to a local "GitHub"
   stand-in (the OAuth 2.0 provider of ``examples/github_connect.py``, with PKCE) in
   their browser, after typing the confirmation code their client shows; accounts
   ``octocat`` / ``hubot``, password: the login followed by ``-pass``;
4. "builds" with **progress** and **log lines**, six steps of a few seconds;
5. can be **cancelled** at any moment (Ctrl-C in the terminal client): it then rolls
   back what it did, inside ``ctx.shield`` so that the rollback itself is never cut
   short, says so in log lines, and nothing is deployed.

The provider and the URL-elicitation pages run on two free 127.0.0.1 ports, started
in the server's own event loop the first time the tool asks for authorization (they
need ``pip install -e '.[examples]'``: authlib and starlette; without them the tool says so
before it asks anything).
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

from backchannel import Context, Server, ToolError
from backchannel.server.url_elicitation import UrlElicitations

#: The build: each step takes ``PACE`` seconds, reported as ``TICKS`` progress notifications.
STEPS = (
    "check out {branch}",
    "install the dependencies",
    "run the tests",
    "build the image",
    "push the image",
    "switch {environment} to the new release",
)
#: What each step would run, said at debug level (``log debug`` in the terminal client shows it).
COMMANDS = (
    "git checkout {branch}",
    "pip install -r requirements.txt",
    "pytest -q",
    "docker build -t release:{branch} .",
    "docker push registry.example.com/release:{branch}",
    "kubectl set image deployment/web web=registry.example.com/release:{branch} -n {environment}",
)
PACE = 0.8
TICKS = 8
ENVIRONMENTS = {"production": "Production", "staging": "Staging"}


#: What the authorization step imports beyond backchannel: ``pip install -e '.[examples]'``.
EXTRAS = ("authlib", "starlette")


def _github_connect() -> Any:
    """``examples/github_connect.py``, our sibling; ToolError, in one line, when its extras are missing.

    Called before anything is asked, so that a person is never taken through the form
    only to learn at the end that this deployment could not have been authorized."""
    try:
        return importlib.import_module("github_connect")
    except ImportError as exc:
        missing = (exc.name or "").partition(".")[0]
        needs = missing if missing in EXTRAS else " and ".join(EXTRAS)
        raise ToolError(f"The authorization step needs {needs}: pip install -e '.[examples]'") from None


class Authorizer:
    """The "GitHub" provider and the confirmation pages, started once, on first use."""

    def __init__(self) -> None:
        self.github: Any = None
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def start(self, server: Server) -> Any:
        """The ``GitHubConnect`` flow handler (a ``UrlFlowHandler``), its servers up."""
        async with self._lock:
            if self.github is not None:
                return self.github
            gh = _github_connect()
            pages_sock, pages_url = gh._bind()
            provider_sock, provider_url = gh._bind()
            secret = gh.generate_token(32)
            flows = UrlElicitations(pages_url, title=server.name, poll_wait=60.0)
            server.url_elicitations = flows
            github = gh.GitHubConnect(flows, provider_url, secret)
            provider_app, _ = gh.build_provider(flows.callback_url, secret)
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            async def serve() -> None:
                async with gh._serve(provider_app, provider_sock), gh._serve(flows, pages_sock):
                    ready.set_result(None)
                    await asyncio.Event().wait()  # as long as the server runs

            self._task = asyncio.get_running_loop().create_task(serve())
            done, _ = await asyncio.wait([ready, self._task], return_when=asyncio.FIRST_COMPLETED)
            if self._task in done:
                self._task.result()  # it failed to start: raise why
            self.github = github
            return github


def _branch_of(workspace: Path | None) -> str | None:
    """The branch a git checkout is on (from ``.git/HEAD``), or None."""
    if workspace is None:
        return None
    try:
        head = (workspace / ".git" / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return head[len(prefix) :] if head.startswith(prefix) else None


def _release_form(branch: str) -> dict[str, Any]:
    return {
        "type": "object",
        "title": "Release",
        "properties": {
            "branch": {
                "type": "string",
                "title": "Branch",
                "description": "the branch to deploy",
                "minLength": 1,
                "maxLength": 100,
                "default": branch,
            },
            "environment": {
                "type": "string",
                "title": "Environment",
                "oneOf": [{"const": key, "title": title} for key, title in ENVIRONMENTS.items()],
                "default": "production",
            },
        },
        "required": ["branch", "environment"],
    }


async def _build(ctx: Context, branch: str, environment: str) -> None:
    """The deployment proper: progress and a log line per step; on cancel, a shielded rollback."""
    total = len(STEPS) * TICKS
    done: list[str] = []
    try:
        for index, template in enumerate(STEPS):
            step = template.format(branch=branch, environment=environment)
            await ctx.info(f"{step} ...", logger="deploy")
            await ctx.debug("$ " + COMMANDS[index].format(branch=branch, environment=environment), logger="deploy")
            for tick in range(TICKS):
                await asyncio.sleep(PACE / TICKS)
                await ctx.report_progress(index * TICKS + tick + 1, total, step)
            done.append(step)
    except asyncio.CancelledError:
        await ctx.shield(_rollback(ctx, environment, done))
        raise


async def _rollback(ctx: Context, environment: str, done: list[str]) -> None:
    await ctx.warning(f"cancelled after {len(done)} of {len(STEPS)} steps: rolling back", logger="deploy")
    for step in reversed(done):
        await asyncio.sleep(0.1)
        await ctx.info(f"undone: {step}", logger="deploy")
    await ctx.log("notice", f"rolled back: {environment} still runs the previous release", logger="deploy")


def add_deploy(server: Server) -> None:
    """Register ``deploy_to_production`` on ``server``."""
    authorizer = Authorizer()
    releases: list[str] = []

    @server.tool()
    async def deploy_to_production(ctx: Context) -> str:
        """Deploy your workspace: asks the branch and environment, then authorization in the browser."""
        _github_connect()  # the authorization step's extras, checked before the form is asked
        roots = await ctx.list_roots()
        workspace = next((root.path for root in roots if root.path is not None), None)
        name = workspace.name if workspace is not None else "the project"
        found = await asyncio.to_thread(_branch_of, workspace)
        branch = found or "main"
        where = "its .git/HEAD" if found else "no git checkout there, so the default"
        offered = f"{len(roots)} root{'' if len(roots) == 1 else 's'} offered"
        await ctx.debug(f"{offered}; workspace {name}, branch {branch} ({where})", logger="deploy")
        # Each deploy is its own decision: declining one must not hide the form from the next.
        question = f"Deploy {name}: which branch, to which environment?"
        answer = await ctx.elicit(question, _release_form(branch), remember_decline=False)
        if not answer.accepted:
            return f"Nothing was deployed ({answer.action})."
        branch, environment = answer.data["branch"], answer.data["environment"]
        github = await authorizer.start(ctx.server)
        outcome = await ctx.elicit_url(
            f"Authorize deploying {name} ({branch}) to {environment}: sign in with your GitHub account.",
            flow=github,
        )
        profile = await github.api(ctx.principal, "/user") if outcome.accepted else None
        github.vault.pop(ctx.principal, None)  # one authorization, one deployment
        if profile is None:
            return "Nothing was deployed: the deployment was not authorized."
        await ctx.info(f"authorized by {profile['login']}", logger="deploy")
        await _build(ctx, branch, environment)
        releases.append(branch)
        release = f"{name}-{len(releases)}"
        await ctx.log("notice", f"{environment} now runs {release}", logger="deploy")
        return f"Deployed {name} ({branch}) to {environment} as {release}, authorized by {profile['login']}."
