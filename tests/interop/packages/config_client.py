"""Runs one server entry of an MCP client configuration (the `mcpServers` JSON that Claude
Desktop and the MCP Inspector read) the way such a client does, with the official Python SDK
client (pinned in ../requirements.txt): it launches `command` with `args` over stdio, lists
the tools and calls one, and prints one JSON summary on stdout.

    python config_client.py <config.json> <server-name> <tool> [arguments-json]
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any


def _dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(config: dict[str, Any], name: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    entry = config["mcpServers"][name]
    # `env` adds to the SDK's default environment, as in a client's configuration.
    server = StdioServerParameters(command=entry["command"], args=entry.get("args", []), env=entry.get("env"))
    summary: dict[str, Any] = {"client": "python", "sdk": version("mcp")}
    async with Client(server, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        summary["tools"] = sorted(t.name for t in listed.tools)
        summary["definitions"] = {t.name: _dump(t) for t in listed.tools}
        summary["result"] = _dump(await client.call_tool(tool, arguments))
    return summary


def main() -> int:
    if len(sys.argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        config = json.load(f)
    arguments = json.loads(sys.argv[4]) if len(sys.argv) == 5 else {}
    summary = asyncio.run(asyncio.wait_for(run(config, sys.argv[2], sys.argv[3], arguments), timeout=120))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
