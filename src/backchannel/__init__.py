"""backchannel: an MCP runtime."""
