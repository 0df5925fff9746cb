"""The peers benchmark's Python server (examples/qe-server/examples/peers.rs drives it).

The official SDK's `MCPServer` serving `search_tickets_page`; the tool returns a pydantic
model equivalent to the contract in schemas/search_tickets_page.json, from which the SDK
derives the output schema and against which it validates every result.

    python py_server.py                    stdio
    python py_server.py --http HOST:PORT   streamable HTTP at /mcp (the SDK's app, sessions,
                                           JSON responses) on uvicorn; prints
                                           `listening on http://ADDR/mcp` once bound (port 0 picks one)

The query `invalid` makes the recipe leave `title` out of the first ticket (it returns the
page as a dict without it): a result that breaks the output schema, to show what the SDK
does with one.
"""

import socket
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mcp.server.mcpserver import MCPServer


class Ticket(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    title: str
    status: Literal["open", "closed"]


class Completeness(BaseModel):
    model_config = ConfigDict(extra="forbid")
    disposition: Literal["complete", "partial", "unknown", "unavailable"]
    returned_count: int = Field(ge=0)
    total_known: int | None = Field(ge=0)
    pagination_complete: bool
    truncation: Literal["none", "client", "server", "unknown"]
    limitations: list[str]


class TicketPage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str
    tickets: list[Ticket]
    next_cursor: str | None
    completeness: Completeness


server = MCPServer("peers-py")


@server.tool()
def search_tickets_page(query: str, limit: int) -> TicketPage:
    """A page of `limit` generated tickets."""
    page = build_page(query, limit)
    if query == "invalid":
        broken: dict[str, Any] = page.model_dump()
        if broken["tickets"]:
            del broken["tickets"][0]["title"]
        return broken  # type: ignore[return-value]
    return page


def build_page(query: str, limit: int) -> TicketPage:
    tickets = [
        Ticket(id=f"T-{i}", title=f"Ticket {i}: login fails after password reset", status="closed" if i % 3 == 0 else "open")
        for i in range(1, limit + 1)
    ]
    return TicketPage(
        query=query,
        tickets=tickets,
        next_cursor=None,
        completeness=Completeness(
            disposition="complete",
            returned_count=limit,
            total_known=limit,
            pagination_complete=True,
            truncation="none",
            limitations=[],
        ),
    )


def serve_http(address: str) -> None:
    import anyio
    import uvicorn

    host, _, port = address.rpartition(":")
    sock = socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # TCP_NODELAY, inherited by every accepted connection: without it a keep-alive client
    # waits about 40 ms per answer for its delayed ACK (uvicorn serving a socket it was
    # given does not set it).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host.strip("[]"), int(port)))
    # Listening before the address is printed: uvicorn starts listening only once its
    # startup has run, and a client that connects first would be refused.
    sock.listen(2048)
    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if sock.family == socket.AF_INET6 else bound[0]
    app = server.streamable_http_app(json_response=True, host=host.strip("[]"))
    # No access log: a line per request on stderr would be measured as the server's work.
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    print(f"listening on http://{shown}:{bound[1]}/mcp", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if len(sys.argv) == 1:
        server.run("stdio")
    elif len(sys.argv) == 3 and sys.argv[1] == "--http":
        serve_http(sys.argv[2])
    else:
        print("usage: python py_server.py [--http HOST:PORT]", file=sys.stderr)
        sys.exit(2)
