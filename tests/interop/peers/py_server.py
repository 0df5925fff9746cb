"""The peers benchmark's Python server (examples/qe-server/examples/peers.rs drives it).

The official SDK's `MCPServer` serving `search_tickets_page` over stdio; the tool returns a
pydantic model equivalent to the contract in schemas/search_tickets_page.json, from which
the SDK derives the output schema and against which it validates every result.
"""

from typing import Literal

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


if __name__ == "__main__":
    server.run("stdio")
