"""Drives a server with the official MCP Python SDK client, for the contract-proxy tests.

    python py_client.py <calls.json> stdio <command> [args...]
    python py_client.py <calls.json> http <url>

calls.json: `[{"name": ..., "arguments": {...}}]`. Lists the tools, makes every call, and
prints one JSON summary on stdout: the listed tools (name, outputSchema, _meta) and, per
call, the result the SDK returned or the exception it raised (a raise is data, never fatal).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


def _dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(calls: list[dict[str, Any]], transport: str, target: list[str]) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    server: Any = StdioServerParameters(command=target[0], args=target[1:]) if transport == "stdio" else target[0]
    summary: dict[str, Any] = {"transport": transport}
    async with Client(server, read_timeout_seconds=20) as client:
        summary["protocolVersion"] = client.protocol_version
        listed = await client.list_tools()
        summary["tools"] = [{"name": t.name, "outputSchema": t.output_schema, "_meta": t.meta} for t in listed.tools]
        summary["calls"] = []
        for call in calls:
            entry: dict[str, Any] = {"name": call["name"]}
            try:
                entry.update(threw=None, result=_dump(await client.call_tool(call["name"], call["arguments"])))
            except Exception as err:  # noqa: BLE001 - every failure is data for the test
                entry.update(threw=f"{type(err).__name__}: {err}", result=None)
            summary["calls"].append(entry)
    return summary


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] not in ("stdio", "http"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as file:
        calls = json.load(file)
    summary = asyncio.run(asyncio.wait_for(run(calls, sys.argv[2], sys.argv[3:]), timeout=60))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
