"""Drives qe-server with the official MCP Python SDK client (pinned in requirements.txt).

    python py_client.py stdio <server-binary> [server args...] [--mode auto|legacy]
    python py_client.py http <url> [--mode auto|legacy]

`--mode auto` (the SDK default) probes `server/discover` and may adopt protocol
2026-07-28; `--mode legacy` forces the `initialize` handshake (2025-era wire). Lists the
tools, makes every call in calls.json, and prints one JSON summary on stdout. Log records
and Python warnings are captured into `console`, so the Rust test can prove no
"unknown format"/"unknown keyword" warning appeared. A call that raises is recorded,
never fatal: the test decides.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CAPTURED: list[dict[str, str]] = []


class _Capture(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        CAPTURED.append({"level": record.levelname.lower(), "text": record.getMessage()})
        print(f"[py {record.levelname.lower()}] {record.getMessage()}", file=sys.stderr)


def _error_of(err: BaseException) -> dict[str, Any]:
    code = getattr(getattr(err, "error", None), "code", None)
    return {"name": type(err).__name__, "code": code, "message": str(err)}


def _dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(transport: str, target: str, server_args: list[str], mode: str) -> dict[str, Any]:
    from jsonschema.validators import validator_for

    from mcp import Client, StdioServerParameters

    calls = json.loads((HERE / "calls.json").read_text())["calls"]
    server: Any
    if transport == "stdio":
        server = StdioServerParameters(command=target, args=server_args)
    else:
        server = target
    summary: dict[str, Any] = {"client": "python", "sdk": version("mcp"), "transport": transport, "mode": mode}
    async with Client(server, mode=mode, read_timeout_seconds=20) as client:
        summary["protocolVersion"] = client.protocol_version
        listed = await client.list_tools()
        summary["tools"] = [
            {
                "name": t.name,
                "outputSchema": t.output_schema,
                "meta": t.meta,
                "inputSchema": t.input_schema,
            }
            for t in listed.tools
        ]
        # A clean control for the validator class the SDK uses (validator_for + check_schema):
        # the listed search_tickets schema must reject bad ticket payloads.
        search = next((t for t in listed.tools if t.name == "search_tickets"), None)
        if search is not None and search.output_schema is not None:
            schema = search.output_schema
            cls = validator_for(schema)
            cls.check_schema(schema)
            check = cls(schema)
            ticket = {"id": "T-1", "title": "Login bug", "status": "open"}

            def wrapped(v: Any) -> Any:
                return {"result": v} if schema.get("type") == "object" else v

            summary["validatorControl"] = {
                "good": check.is_valid(wrapped([ticket])),
                "extraKey": check.is_valid(wrapped([{**ticket, "run_shell": "rm -rf /"}])),
                "badEnum": check.is_valid(wrapped([{**ticket, "status": "done"}])),
            }
        summary["calls"] = []
        for call in calls:
            entry: dict[str, Any] = {"name": call["name"], "arguments": call["arguments"], "expect": call["expect"]}
            try:
                result = await client.call_tool(call["name"], call["arguments"])
                entry.update(threw=None, result=_dump(result))
            except Exception as err:  # noqa: BLE001 - every failure is data for the test
                entry.update(threw=_error_of(err), result=None)
            summary["calls"].append(entry)
        try:
            await client.call_tool("no_such_tool", {})
            summary["unknownTool"] = {"threw": None}
        except Exception as err:  # noqa: BLE001
            summary["unknownTool"] = {"threw": _error_of(err)}
    return summary


def main() -> int:
    args = sys.argv[1:]
    mode = "auto"
    if "--mode" in args:
        i = args.index("--mode")
        mode = args[i + 1]
        del args[i : i + 2]
    if len(args) < 2 or args[0] not in ("stdio", "http"):
        print(__doc__, file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, handlers=[_Capture()], force=True)
    warnings.simplefilter("always")
    code = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            summary = asyncio.run(asyncio.wait_for(run(args[0], args[1], args[2:], mode), timeout=60))
        except BaseException as err:  # noqa: BLE001 - reported in the summary
            summary = {"client": "python", "transport": args[0], "mode": mode, "fatal": _error_of(err)}
            code = 1
    for w in caught:
        CAPTURED.append({"level": "warning", "text": f"{w.category.__name__}: {w.message}"})
    summary["console"] = CAPTURED
    print(json.dumps(summary))
    return code


if __name__ == "__main__":
    sys.exit(main())
