// The peers benchmark's TypeScript server (examples/qe-server/examples/peers.rs drives it):
// the official SDK's `McpServer` serving `search_tickets_page`, with a zod output schema
// equivalent to the contract in schemas/search_tickets_page.json, so the SDK validates every
// structured result as our server does.
//
//   node ts_server.mjs                    stdio
//   node ts_server.mjs --http HOST:PORT   streamable HTTP at /mcp (StreamableHTTPServerTransport,
//                                         a session per client, JSON responses); prints
//                                         `listening on http://ADDR/mcp` once bound (port 0 picks one)
//
// The query `invalid` makes the recipe leave `title` out of the first ticket: a result that
// breaks the output schema, to show what the SDK does with one.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
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

// One `McpServer` per transport: the SDK connects a server to one transport at a time.
function makeServer() {
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
            if (query === "invalid") delete result.tickets[0]?.title;
            return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
        },
    );
    return server;
}

const args = process.argv.slice(2);
if (args.length === 0) {
    await makeServer().connect(new StdioServerTransport());
} else if (args.length === 2 && args[0] === "--http") {
    const split = args[1].lastIndexOf(":");
    const host = args[1].slice(0, split);
    const port = Number(args[1].slice(split + 1));
    const sessions = new Map();
    const http = createServer(async (req, res) => {
        if (req.url !== "/mcp") {
            res.writeHead(404).end("Not Found: the MCP endpoint is /mcp");
            return;
        }
        let body;
        if (req.method === "POST") {
            const chunks = [];
            for await (const chunk of req) chunks.push(chunk);
            try {
                body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
                res.writeHead(400, { "content-type": "application/json" });
                res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
                return;
            }
        }
        const id = req.headers["mcp-session-id"];
        let transport = id === undefined ? undefined : sessions.get(id);
        if (transport === undefined) {
            if (id !== undefined) {
                res.writeHead(404, { "content-type": "application/json" });
                res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }));
                return;
            }
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                enableJsonResponse: true,
                onsessioninitialized: (session) => sessions.set(session, transport),
            });
            transport.onclose = () => sessions.delete(transport.sessionId);
            await makeServer().connect(transport);
        }
        await transport.handleRequest(req, res, body);
    });
    http.listen(port, host, () => {
        const bound = http.address();
        const shown = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
        console.log(`listening on http://${shown}:${bound.port}/mcp`);
    });
} else {
    console.error("usage: node ts_server.mjs [--http HOST:PORT]");
    process.exit(2);
}
