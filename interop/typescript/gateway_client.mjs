#!/usr/bin/env node
// Interop through `ferromcp gateway`: the TypeScript MCP SDK's client (v1, handshake era) on
// stdio in front of a gateway that mounts `ferromcp serve` as [servers.demo] (the config is
// written by interop/gateway_front.py, which runs this script).
//
// Usage: MCP_SDK_NODE_MODULES=DIR node gateway_client.mjs CMD [ARG...]
//
// Every check prints `ok   <id>` or `FAIL <id>: <why>`; exit status 0 if every check passed.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.MCP_SDK_NODE_MODULES;
if (!modules) {
  console.log('FAIL run: set MCP_SDK_NODE_MODULES to the node_modules directory with @modelcontextprotocol/sdk');
  process.exit(1);
}
const sdk = (p) => import(pathToFileURL(join(modules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.log('FAIL run: usage: gateway_client.mjs CMD [ARG...]');
  process.exit(1);
}
let failed = 0;
function check(id, cond, why) {
  if (cond) {
    console.log(`ok   ${id}`);
  } else {
    failed += 1;
    console.log(`FAIL ${id}: ${why}`);
  }
}
const client = new Client({ name: 'ferromcp-interop-gateway', version: '0' });
try {
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check('gateway-tools-list', names.includes('demo_add') && names.includes('demo_echo'), JSON.stringify(names));
  const r = await client.callTool({ name: 'demo_add', arguments: { a: 2, b: 3 } });
  const texts = (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
  check('gateway-tool-add', !r.isError && JSON.stringify(texts) === '["5"]', JSON.stringify(r));
} catch (e) {
  check('gateway-connect', false, `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`);
} finally {
  await client.close().catch(() => {});
}
process.exit(failed ? 1 : 0);
