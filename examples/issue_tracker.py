"""The chapter's story: a tool that files an issue and asks for what it is missing.

``create_issue(summary)`` needs a project and an issue type; when the caller did not
give them, it asks the person with a form (project key and type required; priority,
assignee and labels optional). The three answers are handled the way the chapter
recommends (18.2.5): *accept* continues the call; *decline* is a boundary, so the tool
says so kindly, offers another way, and the same question is not asked again in this
session; *cancel* ends the operation without filing anything, and asking later is fine.

    backchannel run examples/issue_tracker.py          # stdio
    backchannel connect python examples/issue_tracker.py
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from backchannel import Context, Server, ToolError
from backchannel.forms import Titles

server = Server("issue-tracker", "1.0.0", instructions="Files issues in the team tracker.")

PROJECTS = {"WEB": "Website", "API": "Public API", "OPS": "Operations"}
ISSUES: list[dict[str, object]] = []


@dataclass
class IssueDetails:
    """What the tracker needs to file an issue."""

    project_key: Annotated[
        Literal["WEB", "API", "OPS"], Titles(PROJECTS), Field(description="The project the issue belongs to")
    ]
    issue_type: Annotated[
        Literal["bug", "task", "story"],
        Titles({"bug": "Bug", "task": "Task", "story": "Story"}),
        Field(description="What kind of work this is"),
    ]
    priority: Annotated[Literal["low", "medium", "high"], Field(description="How urgent it is")] = "medium"
    assignee: Annotated[str, Field(description="Who should pick it up (optional)", max_length=64)] = ""
    labels: Annotated[
        list[Literal["frontend", "backend", "security", "docs"]], Field(description="Labels to add (optional)")
    ] = field(default_factory=list)


@server.tool(elicits=[IssueDetails])
async def create_issue(
    summary: Annotated[str, "One line saying what is wrong or what to do"],
    ctx: Context,
    project_key: str | None = None,
    issue_type: str | None = None,
) -> str:
    """File an issue; asks for the project and the type when they are not given."""
    if not summary.strip():
        raise ToolError("The summary is empty: say in one line what the issue is about.")
    if project_key in PROJECTS and issue_type in ("bug", "task", "story"):
        details = IssueDetails(project_key, issue_type)  # type: ignore[arg-type]
    else:
        answer = await ctx.elicit(f"Where should “{summary}” be filed?", IssueDetails)
        if answer.action == "decline":
            return (
                "Understood: nothing was filed, and I will not ask again in this session. "
                "To file it yourself, call create_issue with project_key and issue_type."
            )
        if answer.action == "cancel" or answer.data is None:
            return "Cancelled: nothing was filed. Ask again whenever you are ready."
        details = answer.data
    number = len(ISSUES) + 1
    key = f"{details.project_key}-{number}"
    ISSUES.append({"key": key, "summary": summary, **details.__dict__})
    extras = [f"priority {details.priority}"]
    if details.assignee:
        extras.append(f"assigned to {details.assignee}")
    if details.labels:
        extras.append("labels " + ", ".join(details.labels))
    return f"Filed {key} ({details.issue_type}): {summary} — " + "; ".join(extras)


if __name__ == "__main__":
    server.run()
