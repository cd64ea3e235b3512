#!/usr/bin/env node
// Interop peer: a tiny MCP server written with the TypeScript SDK v2 (@modelcontextprotocol/server,
// pinned in package.json/package-lock.json beside this file), for ferromcp's client. It uses the
// SDK's dual-era entries, which serve 2025-11-25 through `initialize` and 2026-07-28 through
// `server/discover` and the per-request envelope, from one factory:
//   stdio:  serveStdio(factory)
//   HTTP:   createMcpHandler(factory) (2026-07-28 per request; 2025-era requests through its
//           stateless legacy fallback), behind a small node:http adapter.
//
// Usage: MCP_SDK_V2_NODE_MODULES=DIR node server.mjs              stdio
//        MCP_SDK_V2_NODE_MODULES=DIR node server.mjs --http PORT  Streamable HTTP at
//                                       http://127.0.0.1:PORT/mcp
//
// Contents, the same in every interop peer server: tools `add` (a + b, with structured output),
// `echo` (text), `fail` (an error result); resource `interop://hello` (text); prompt `greet`
// (argument `name`). Besides: `protocol_info`, structured output naming the era this server
// instance serves and the revision it negotiated, so the client can check the server's side.

import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { load } from './modules.mjs';

const { McpServer } = await load('@modelcontextprotocol/server');
const { serveStdio } = await load('@modelcontextprotocol/server', './stdio');
const { createMcpHandler } = await load('@modelcontextprotocol/server');
const { z } = await load('zod');

function build(ctx) {
  const server = new McpServer({ name: 'typescript-v2-interop-peer', version: '1.0.0' });

  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ result: z.number() }),
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { result: a + b } }),
  );
  server.registerTool(
    'echo',
    { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'fail',
    { description: 'Always returns an error result.' },
    async () => ({ content: [{ type: 'text', text: 'typescript v2 peer: intended failure' }], isError: true }),
  );
  server.registerTool(
    'protocol_info',
    {
      description: 'Reports the era and revision this server instance serves.',
      outputSchema: z.object({ era: z.string(), protocolVersion: z.string() }),
    },
    async () => {
      // A stateless legacy HTTP instance serves one request and saw no initialize: its
      // revision is the request's MCP-Protocol-Version header.
      const version = server.server.getNegotiatedProtocolVersion() ?? ctx?.requestInfo?.headers.get('mcp-protocol-version');
      const info = { era: ctx?.era === 'modern' ? 'modern' : 'handshake', protocolVersion: version ?? '' };
      return { content: [{ type: 'text', text: JSON.stringify(info) }], structuredContent: info };
    },
  );
  server.registerResource(
    'hello',
    'interop://hello',
    { mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello from typescript v2' }] }),
  );
  server.registerPrompt(
    'greet',
    { description: 'Greets someone.', argsSchema: z.object({ name: z.string() }) },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}.` } }] }),
  );
  return server;
}

if (process.argv[2] === '--http') {
  const port = Number(process.argv[3]);
  const handler = createMcpHandler(build, { onerror: (e) => console.error('server.mjs:', e?.message ?? e) });
  // node:http <-> the handler's web-standard fetch face.
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, `http://127.0.0.1:${port}`);
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const request = new Request(url, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
        body: ['GET', 'HEAD'].includes(req.method) ? undefined : Buffer.concat(chunks),
        signal: controller.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        Readable.fromWeb(response.body).on('error', () => res.destroy()).pipe(res);
      } else {
        res.end();
      }
    } catch (e) {
      console.error('server.mjs:', e?.message ?? e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  http.listen(port, '127.0.0.1');
} else {
  serveStdio(build, { onerror: (e) => console.error('server.mjs:', e?.message ?? e) });
}
