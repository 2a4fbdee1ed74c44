"""FastMCP 4.2.3 serving the skill folders under ``ROOT`` (its ``SkillsDirectoryProvider``), over stdio:
a second implementation of the skills extension (SEP-2640), for our client.

    python tests/skills/fastmcp_skills_server.py ROOT
"""

import sys

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider

server = FastMCP("fastmcp-skills")
server.add_provider(SkillsDirectoryProvider(sys.argv[1]))

if __name__ == "__main__":
    server.run(show_banner=False)
