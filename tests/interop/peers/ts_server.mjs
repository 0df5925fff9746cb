// The peers benchmark's TypeScript server (examples/qe-server/examples/peers.rs drives it):
// the official SDK's `McpServer` serving `search_tickets_page` over stdio, with a zod output
// schema equivalent to the contract in schemas/search_tickets_page.json, so the SDK
// validates every structured result as our server does.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const count = z.number().int().min(0);
const ticket = z.strictObject({ id: z.string(), title: z.string(), status: z.enum(["open", "closed"]) });
const completeness = z.strictObject({
    disposition: z.enum(["complete", "partial", "unknown", "unavailable"]),
    returned_count: count,
    total_known: count.nullable(),
    pagination_complete: z.boolean(),
    truncation: z.enum(["none", "client", "server", "unknown"]),
    limitations: z.array(z.string()),
});
const ticketPage = z.strictObject({
    query: z.string(),
    tickets: z.array(ticket),
    next_cursor: z.string().nullable(),
    completeness,
});

// The page every peer builds: `limit` generated tickets, complete.
function page(query, limit) {
    const tickets = [];
    for (let i = 1; i <= limit; i++) {
        tickets.push({ id: `T-${i}`, title: `Ticket ${i}: login fails after password reset`, status: i % 3 === 0 ? "closed" : "open" });
    }
    return {
        query,
        tickets,
        next_cursor: null,
        completeness: {
            disposition: "complete",
            returned_count: limit,
            total_known: limit,
            pagination_complete: true,
            truncation: "none",
            limitations: [],
        },
    };
}

const server = new McpServer({ name: "peers-ts", version: "1.0.0" });
server.registerTool(
    "search_tickets_page",
    {
        description: "A page of `limit` generated tickets.",
        inputSchema: { query: z.string().min(1), limit: z.number().int().min(1).max(100000) },
        outputSchema: ticketPage,
    },
    async ({ query, limit }) => {
        const result = page(query, limit);
        return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
    },
);
await server.connect(new StdioServerTransport());
