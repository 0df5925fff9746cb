"""A stdio MCP server on the official Python SDK's low-level `Server`, for the contract-proxy tests.

    python py_server.py

The low-level `Server` sends what a handler returns as it is: nothing checks a result
against the outputSchema the server lists. Tools (every one takes `{"q": string}`):

  report      outputSchema requires `count` and `status`; the handler drops `status`
  report_ok   the same outputSchema; the handler answers both fields
  weather     no outputSchema; answers {"city": "Oslo"} (the contract of
              tests/fixtures/dynamic, declared with --contracts, also requires `celsius`)
  weather_ok  no outputSchema; answers {"city": "Oslo", "celsius": 4.5}
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types

from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

INPUT = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
REPORT = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "status": {"type": "string"}},
    "required": ["count", "status"],
}
ANSWERS: dict[str, dict[str, Any]] = {
    "report": {"count": 3},
    "report_ok": {"count": 3, "status": "ok"},
    "weather": {"city": "Oslo"},
    "weather_ok": {"city": "Oslo", "celsius": 4.5},
}


def tools() -> list[dict[str, Any]]:
    listed = []
    for name in ANSWERS:
        tool: dict[str, Any] = {"name": name, "inputSchema": INPUT}
        if name.startswith("report"):
            tool["outputSchema"] = REPORT
        listed.append(tool)
    return listed


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult.model_validate({"tools": tools()})


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    value = ANSWERS.get(params.name)
    if value is None:
        result: dict[str, Any] = {"isError": True, "content": [{"type": "text", "text": f"unknown tool: {params.name}"}]}
    else:
        result = {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}
    return types.CallToolResult.model_validate(result)


SERVER = Server("proxy-py-fixture", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await SERVER.run(read_stream, write_stream, SERVER.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
