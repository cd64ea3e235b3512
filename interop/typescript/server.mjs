#!/usr/bin/env node
// Interop peer: a tiny MCP server written with the TypeScript SDK (@modelcontextprotocol/sdk
// 1.32.2), for ferromcp's client. The TS SDK v1 serves the handshake era only (initialize;
// 2025-11-25 and older).
//
// Usage: MCP_SDK_NODE_MODULES=DIR node server.mjs              stdio
//        MCP_SDK_NODE_MODULES=DIR node server.mjs --http PORT  Streamable HTTP at
//                                    http://127.0.0.1:PORT/mcp (stateless: no sessions)
//        MCP_SDK_NODE_MODULES=DIR node server.mjs --sse PORT   the 2024-11-05 HTTP+SSE
//                                    transport (SSEServerTransport on a plain node server): the
//                                    stream at http://127.0.0.1:PORT/sse, POSTs to /messages
//
// Contents, the same in every interop peer server: tools `add` (a + b), `echo` (text), `fail`
// (an error result); resource `interop://hello` (text); prompt `greet` (argument `name`).

import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.MCP_SDK_NODE_MODULES;
if (!modules) {
  console.error('server.mjs: set MCP_SDK_NODE_MODULES to the node_modules directory with @modelcontextprotocol/sdk');
  process.exit(1);
}
const load = (p) => import(pathToFileURL(join(modules, p)).href);
const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { SSEServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/sse.js');
const { z } = await load('zod/index.js');

function build() {
  const server = new McpServer({ name: 'typescript-interop-peer', version: '1.0.0' });

  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'echo',
    { description: 'Returns its text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'fail',
    { description: 'Always returns an error result.' },
    async () => ({ content: [{ type: 'text', text: 'typescript peer: intended failure' }], isError: true }),
  );
  server.registerResource(
    'hello',
    'interop://hello',
    { mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from typescript' }] }),
  );
  server.registerPrompt(
    'greet',
    { description: 'Greets someone.', argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }] }),
  );

  return server;
}

if (process.argv[2] === '--http') {
  const port = Number(process.argv[3]);
  // Stateless: a fresh server and transport for every request (the SDK's documented pattern).
  const http = createServer(async (req, res) => {
    if (new URL(req.url, 'http://127.0.0.1').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST' }).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(port, '127.0.0.1');
} else if (process.argv[2] === '--sse') {
  const port = Number(process.argv[3]);
  // One server and transport per stream, found again by the session id of the POSTs.
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      const server = build();
      sessions.set(transport.sessionId, transport);
      res.on('close', () => { sessions.delete(transport.sessionId); server.close(); });
      await server.connect(transport);
    } else if (url.pathname === '/messages' && req.method === 'POST') {
      const transport = sessions.get(url.searchParams.get('sessionId'));
      if (!transport) {
        res.writeHead(404).end('unknown session');
        return;
      }
      await transport.handlePostMessage(req, res);
    } else if (url.pathname === '/sse' || url.pathname === '/messages') {
      res.writeHead(405, { Allow: url.pathname === '/sse' ? 'GET' : 'POST' }).end();
    } else {
      res.writeHead(404).end();
    }
  });
  http.listen(port, '127.0.0.1');
} else {
  await build().connect(new StdioServerTransport());
}
