#!/usr/bin/env node
// Interop client: the TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.2) against ferromcp's
// demo server. The TS SDK v1 speaks the handshake era only (initialize, 2025-11-25).
//
// Usage:
//   MCP_SDK_NODE_MODULES=DIR node client.mjs [--deadline SECONDS] stdio CMD [ARG...]
//   MCP_SDK_NODE_MODULES=DIR node client.mjs [--deadline SECONDS] http URL
//   MCP_SDK_NODE_MODULES=DIR node client.mjs [--deadline SECONDS] sse URL   (2024-11-05 HTTP+SSE)
//
// MCP_SDK_NODE_MODULES is the node_modules directory holding @modelcontextprotocol/sdk (plain
// ESM, no build step). Every check prints `ok   <id>`, `FAIL <id>: <why>` or `skip <id>: <why>`;
// exit status 0 if every check passed, 1 otherwise. `.ci/interop.sh` compares the failed ids
// with interop/expected-failures.txt.

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
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { SSEClientTransport } = await sdk('client/sse.js');
const types = await sdk('types.js');

// --- arguments ---------------------------------------------------------------------------
const argv = process.argv.slice(2);
let deadline = 60;
if (argv[0] === '--deadline') {
  deadline = Number(argv[1]);
  argv.splice(0, 2);
}
const [transportKind, ...target] = argv;
if (!['stdio', 'http', 'sse'].includes(transportKind) || target.length === 0) {
  console.log('FAIL run: usage: client.mjs [--deadline S] stdio CMD [ARG...] | http URL | sse URL');
  process.exit(1);
}

// --- checks ------------------------------------------------------------------------------
const failed = [];
class CheckFailed extends Error {}
function check(cond, what, why = '') {
  if (!cond) throw new CheckFailed(`${what}: ${why}`);
}
async function step(id, body) {
  try {
    await body();
    console.log(`ok   ${id}`);
  } catch (e) {
    failed.push(id);
    const why = e instanceof CheckFailed ? e.message : `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`;
    console.log(`FAIL ${id}: ${why}`);
  }
}
const texts = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const show = (v) => JSON.stringify(v);

// --- a transport wrapper that records every JSON-RPC message in both directions ------------
class WireTap {
  constructor(inner) {
    this.inner = inner;
    this.log = [];
    inner.onmessage = (m, extra) => {
      this.log.push(['in', m]);
      this.onmessage?.(m, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }
  start() { return this.inner.start(); }
  close() { return this.inner.close(); }
  send(m, options) {
    this.log.push(['out', m]);
    return this.inner.send(m, options);
  }
  get sessionId() { return this.inner.sessionId; }
  setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
  sent(method) { return this.log.filter(([d, m]) => d === 'out' && m.method === method).map(([, m]) => m); }
  answersTo(id) {
    return this.log.filter(([d, m]) => d === 'in' && m.id === id && !m.method).map(([, m]) => m);
  }
}

const SAMPLED_TEXT = 'interop sampled answer';
const ELICITED_NAME = 'interop-user';

async function main() {
  const inner = transportKind === 'stdio'
    ? new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' })
    : transportKind === 'sse'
      ? new SSEClientTransport(new URL(target[0]))
      : new StreamableHTTPClientTransport(new URL(target[0]));
  const wire = new WireTap(inner);
  const client = new Client(
    { name: 'ferromcp-interop-ts', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(types.CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: SAMPLED_TEXT },
    model: 'interop-model',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
    const content = {};
    const props = request.params?.requestedSchema?.properties ?? {};
    for (const [key, prop] of Object.entries(props)) {
      if (prop.type === 'string') content[key] = key.includes('mail') ? `${ELICITED_NAME}@example.com` : ELICITED_NAME;
      else if (prop.type === 'number' || prop.type === 'integer') content[key] = 1;
      else if (prop.type === 'boolean') content[key] = true;
    }
    return { action: 'accept', content };
  });
  const logs = [];
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => { logs.push(n.params); });
  const listChanged = [];
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, (n) => { listChanged.push(n); });

  let connected = false;
  await step('negotiate', async () => {
    await client.connect(wire);
    connected = true;
    const init = wire.log.find(([d, m]) => d === 'in' && m.id !== undefined && m.result?.protocolVersion);
    check(init?.[1].result.protocolVersion === '2025-11-25', 'protocol', show(init?.[1]));
    check(client.getServerVersion()?.name === 'ferromcp-demo', 'serverInfo', show(client.getServerVersion()));
  });
  if (!connected) return;

  let tools = {};
  await step('tools-list', async () => {
    tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
    for (const name of ['add', 'echo', 'countdown', 'test_simple_text', 'test_error_handling']) {
      check(name in tools, 'tools/list', `missing ${name}; got ${Object.keys(tools)}`);
    }
  });

  await step('tools-call-text', async () => {
    let r = await client.callTool({ name: 'test_simple_text', arguments: {} });
    check(!r.isError && show(texts(r)) === show(['This is a simple text response for testing.']), 'test_simple_text', show(r));
    r = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    check(!r.isError && show(texts(r)) === '["5"]', 'add', show(r));
    r = await client.callTool({ name: 'echo', arguments: { text: 'héllo' } });
    check(!r.isError && show(texts(r)) === '["héllo"]', 'echo', show(r));
  });

  await step('tools-call-error-result', async () => {
    const r = await client.callTool({ name: 'test_error_handling', arguments: {} });
    check(r.isError === true && texts(r).length > 0, 'test_error_handling', show(r));
  });

  await step('tools-call-image', async () => {
    const r = await client.callTool({ name: 'test_image_content', arguments: {} });
    check(!r.isError && r.content?.[0]?.type === 'image' && r.content[0].mimeType === 'image/png', 'test_image_content', show(r));
  });

  await step('tools-call-invalid-arguments', async () => {
    // 2025-11-25 server/tools: input validation errors are tool execution errors.
    const r = await client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } });
    check(r.isError === true, 'add with a string', show(r));
  });

  await step('tools-call-unknown-tool', async () => {
    let r;
    try {
      r = await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      check(e.code === -32602, 'code', `${e.code} ${e.message}`);
      return;
    }
    throw new CheckFailed(`unknown tool: no JSON-RPC error but ${show(r)}`);
  });

  const structured = Object.values(tools).filter((t) => t.outputSchema);
  if (structured.length > 0) {
    await step('tools-call-structured', async () => {
      const r = await client.callTool({ name: structured[0].name, arguments: {} });
      check(r.structuredContent !== undefined, structured[0].name, show(r));
    });
  } else {
    console.log('skip tools-call-structured: no tool with an outputSchema');
  }

  await step('resources-list', async () => {
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    for (const uri of ['test://static-text', 'test://static-binary']) check(uris.includes(uri), 'resources/list', `missing ${uri}; got ${uris}`);
  });

  await step('resources-read-text', async () => {
    const rr = await client.readResource({ uri: 'test://static-text' });
    check(rr.contents?.[0]?.text === 'This is the content of the static text resource.', 'test://static-text', show(rr));
  });

  await step('resources-read-binary', async () => {
    const rr = await client.readResource({ uri: 'test://static-binary' });
    check(typeof rr.contents?.[0]?.blob === 'string' && rr.contents[0].blob.length > 0 && rr.contents[0].mimeType === 'image/png', 'test://static-binary', show(rr));
  });

  await step('resources-read-missing', async () => {
    let rr;
    try {
      rr = await client.readResource({ uri: 'test://no-such-resource' });
    } catch (e) {
      check(e.code === -32002, 'code', `${e.code} ${e.message}, expected -32002`);
      return;
    }
    throw new CheckFailed(`no error for a missing resource: ${show(rr)}`);
  });

  await step('resources-templates', async () => {
    const t = (await client.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate);
    check(t.includes('test://template/{id}/data'), 'resources/templates/list', show(t));
    const rr = await client.readResource({ uri: 'test://template/123/data' });
    check((rr.contents?.[0]?.text ?? '').includes('123'), 'read through the template', show(rr));
  });

  await step('prompts-list', async () => {
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    for (const n of ['greet', 'test_prompt_with_arguments']) check(names.includes(n), 'prompts/list', `missing ${n}; got ${names}`);
  });

  await step('prompts-get-arguments', async () => {
    let gp = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha', arg2: 'beta' } });
    let text = gp.messages.map((m) => m.content?.text ?? '').join(' ');
    check(text.includes('alpha') && text.includes('beta'), 'test_prompt_with_arguments', show(gp));
    gp = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
    text = gp.messages.map((m) => m.content?.text ?? '').join(' ');
    check(text.includes('Ada'), 'greet', show(gp));
  });

  await step('completion', async () => {
    const cr = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } });
    check(show([...cr.completion.values].sort()) === '["Ada","Alan"]', 'completion/complete', show(cr));
  });

  await step('progress', async () => {
    const progress = [];
    const r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    check(!r.isError, 'test_tool_with_progress', show(r));
    check(progress.length >= 3, 'notifications', `${progress.length} progress notifications: ${show(progress)}`);
    check(progress.every((p, i) => i === 0 || p > progress[i - 1]), 'increasing', show(progress));
  });

  await step('logging-set-level', async () => {
    await client.setLoggingLevel('debug');
  });

  await step('logging-notifications', async () => {
    logs.length = 0;
    const r = await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    check(!r.isError, 'test_tool_with_logging', show(r));
    for (let i = 0; i < 20 && logs.length < 3; i++) await sleep(50);
    check(logs.length >= 3, 'notifications/message', `${logs.length} log notifications: ${show(logs)}`);
  });

  await step('ping', async () => {
    await client.ping();
  });

  await step('list-changed', async () => {
    // The trigger adds a tool, announced with notifications/tools/list_changed.
    listChanged.length = 0;
    const r = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    check(!r.isError, 'test_trigger_tool_change', show(r));
    const names = (await client.listTools()).tools.map((t) => t.name);
    check(names.includes('test_dynamic_tool'), 'tools/list after the change', show(names));
    for (let i = 0; i < 20 && listChanged.length === 0; i++) await sleep(50);
    check(listChanged.length > 0, 'notifications/tools/list_changed', 'none arrived');
  });

  await step('cancellation', async () => {
    // Start countdown(5), cancel it after its first progress notification.
    const controller = new AbortController();
    const seen = [];
    let first;
    const started = new Promise((resolve) => { first = resolve; });
    const call = client.callTool({ name: 'countdown', arguments: { seconds: 5 } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => { seen.push(p.progress); first(); },
    });
    const outcome = call.then((r) => ({ result: r }), (e) => ({ error: e }));
    await Promise.race([started, sleep(5000)]);
    check(seen.length > 0, 'countdown', 'no progress within 5 s');
    controller.abort('interop cancels the countdown');
    const settled = await outcome;
    check(settled.error !== undefined, 'countdown', `finished before it was cancelled: ${show(settled.result)}`);
    const req = wire.sent('tools/call').find((m) => m.params?.name === 'countdown');
    const cancels = wire.sent('notifications/cancelled').filter((m) => m.params?.requestId === req.id);
    check(cancels.length === 1, 'notifications/cancelled', `${cancels.length} sent for the countdown`);
    const atCancel = seen.length;
    let r = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    check(show(texts(r)) === '["2"]', 'keeps serving', show(r));
    await sleep(2500);
    // The handshake-era HTTP wire can end a POST stream only with a response, so there the
    // server answers a cancelled request -32800 (as the reference Python server does);
    // anything else is an answer it must not send.
    const answers = wire.answersTo(req.id).filter((m) => !(transportKind === 'http' && m.error?.code === -32800));
    check(answers.length === 0, 'not answered', `the server answered the cancelled request: ${show(answers)}`);
    check(seen.length <= atCancel + 1, 'stops', `countdown kept reporting progress: ${show(seen)}`);
    r = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    check(show(texts(r)) === '["still here"]', 'keeps serving', show(r));
  });

  if ('test_sampling' in tools) {
    await step('sampling', async () => {
      const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 2+2?' } });
      check(!r.isError && texts(r).some((t) => t.includes(SAMPLED_TEXT)), 'test_sampling', show(r));
    });
  } else {
    console.log('skip sampling: the server lists no test_sampling tool');
  }
  if ('test_elicitation' in tools) {
    await step('elicitation', async () => {
      const r = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      check(!r.isError && texts(r).some((t) => t.includes(ELICITED_NAME)), 'test_elicitation', show(r));
    });
  } else {
    console.log('skip elicitation: the server lists no test_elicitation tool');
  }

  await client.close();
}

const timer = setTimeout(() => {
  failed.push('run');
  console.log(`FAIL run: the run took longer than ${deadline} s`);
  process.exit(1);
}, deadline * 1000);
try {
  await main();
} catch (e) {
  failed.push('run');
  console.log(`FAIL run: ${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`);
}
clearTimeout(timer);
process.exit(failed.length > 0 ? 1 : 0);
