// The peers benchmark's TypeScript SDK v2 server (examples/qe-server/examples/peers drives it):
// `McpServer` from @modelcontextprotocol/server serving `search_tickets_page`, with a zod v4
// output schema (a Standard Schema, which v2 validates every structured result against)
// equivalent to the contract in schemas/search_tickets_page.json.
//
//   node ts2_server.mjs                    stdio: `serveStdio` (the connection's first message
//                                          picks the era; a 2025 `initialize` pins it)
//   node ts2_server.mjs --http HOST:PORT   streamable HTTP at /mcp on node:http; prints
//                                          `listening on http://ADDR/mcp` once bound (port 0
//                                          picks one)
//
// Over HTTP the two eras are served as the v2 docs show for keeping sessions next to the
// modern entry: `isLegacyRequest` routes 2025-era traffic to a sessionful
// `NodeStreamableHTTPServerTransport` (@modelcontextprotocol/node; a session per client, JSON
// responses), and 2026-07-28 traffic to `createMcpHandler(factory, { legacy: "reject" })`
// behind `toNodeHandler`, which builds a fresh `McpServer` per request. The Host and Origin
// guards of @modelcontextprotocol/node stand in front of both, as its docs ask of node:http.
//
// The query `invalid` makes the recipe leave `title` out of the first ticket: a result that
// breaks the output schema, to show what the SDK does with one.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import {
    localhostHostValidation,
    localhostOriginValidation,
    NodeStreamableHTTPServerTransport,
    toNodeHandler,
    toWebRequest,
} from "@modelcontextprotocol/node";
import { createMcpHandler, isLegacyRequest, McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod";

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
const searchArguments = z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(100000) });

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

// The factory both serving entries call: one `McpServer` per stdio connection, per HTTP
// session (2025 era) or per HTTP request (2026-07-28).
function makeServer() {
    const server = new McpServer({ name: "peers-ts2", version: "1.0.0" });
    server.registerTool(
        "search_tickets_page",
        {
            description: "A page of `limit` generated tickets.",
            inputSchema: searchArguments,
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

function reply(res, status, id, code, message) {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
}

function serveHttp(host, port) {
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    const modern = toNodeHandler(createMcpHandler(makeServer, { legacy: "reject" }));
    const sessions = new Map();
    const legacy = async (req, res, body) => {
        const id = req.headers["mcp-session-id"];
        let transport = id === undefined ? undefined : sessions.get(id);
        if (transport === undefined) {
            if (id !== undefined) {
                reply(res, 404, null, -32001, "Session not found");
                return;
            }
            transport = new NodeStreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                enableJsonResponse: true,
                onsessioninitialized: (session) => sessions.set(session, transport),
            });
            transport.onclose = () => sessions.delete(transport.sessionId);
            await makeServer().connect(transport);
        }
        await transport.handleRequest(req, res, body);
    };
    const http = createServer(async (req, res) => {
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
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
                reply(res, 400, null, -32700, "Parse error");
                return;
            }
        }
        if (await isLegacyRequest(await toWebRequest(req, body), body)) {
            await legacy(req, res, body);
        } else {
            await modern(req, res, body);
        }
    });
    http.listen(port, host, () => {
        const bound = http.address();
        const shown = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
        console.log(`listening on http://${shown}:${bound.port}/mcp`);
    });
}

const args = process.argv.slice(2);
if (args.length === 0) {
    serveStdio(makeServer);
} else if (args.length === 2 && args[0] === "--http") {
    const split = args[1].lastIndexOf(":");
    serveHttp(args[1].slice(0, split), Number(args[1].slice(split + 1)));
} else {
    console.error("usage: node ts2_server.mjs [--http HOST:PORT]");
    process.exit(2);
}
