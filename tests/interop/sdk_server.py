"""A tiny stdio MCP server on the pinned Python SDK (mcp 2.3.0, `MCPServer`), for
contract-audit's call findings (tests/tests/client/audit_real.rs): what the SDK does with a tool's
own result. The tools mirror sdk_servers.mjs, with the output model `Page`:

    wrong_type   returns `markdown: 42`, which the SDK refuses (with the message of a crash)
    crash        raises an ordinary exception: the SDK's message is the same
    own_error    raises ToolError: an ordinary isError result with the tool's text
    fine         returns a valid page

    python sdk_server.py
"""

from typing import Any

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


class Metadata(BaseModel):
    title: str


class Page(BaseModel):
    markdown: str
    metadata: Metadata


server = MCPServer("py-fixture")


@server.tool()
def wrong_type() -> Page:
    """Returns a page whose markdown is a number."""
    bad: Any = {"markdown": 42, "metadata": {"title": "Example Domain"}}
    return bad


@server.tool()
def crash() -> Page:
    """Fails with an ordinary exception."""
    raise RuntimeError("disk full")


@server.tool()
def own_error() -> Page:
    """Fails the way the SDK lets a tool fail."""
    raise ToolError("page not found")


@server.tool()
def fine() -> Page:
    """Returns a valid page."""
    return Page(markdown="# Example Domain", metadata=Metadata(title="Example Domain"))


if __name__ == "__main__":
    server.run("stdio")
