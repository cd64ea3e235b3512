#!/usr/bin/env node
// Interop client: the TypeScript MCP SDK v2 (@modelcontextprotocol/client, pinned in
// package.json/package-lock.json beside this file) against ferromcp's demo server, in each of the
// SDK's version-negotiation modes:
//   --mode legacy      the SDK's default: the 2025-11-25 `initialize` handshake, no probe
//   --mode auto        opt-in `versionNegotiation: { mode: 'auto' }`: the `server/discover` probe,
//                      must land on 2026-07-28 (ferromcp speaks it)
//   --mode 2026-07-28  opt-in `versionNegotiation: { mode: { pin: '2026-07-28' } }`
//
// Usage:
//   MCP_SDK_V2_NODE_MODULES=DIR node client.mjs [--mode M] [--deadline SECONDS] stdio CMD [ARG...]
//   MCP_SDK_V2_NODE_MODULES=DIR node client.mjs [--mode M] [--deadline SECONDS] http URL
//
// Every check prints `ok   <id>`, `FAIL <id>: <why>` or `skip <id>: <why>`; exit status 0 if
// every check passed, 1 otherwise. `.ci/interop.sh` compares the failed ids with
// interop/expected-failures.txt.

import { load, versionOf } from './modules.mjs';

const sdk = await load('@modelcontextprotocol/client');
const { StdioClientTransport } = await load('@modelcontextprotocol/client', './stdio');
const { Client, StreamableHTTPClientTransport, LOG_LEVEL_META_KEY } = sdk;

// --- arguments ---------------------------------------------------------------------------
const argv = process.argv.slice(2);
let deadline = 60;
let mode = 'legacy';
while (argv[0]?.startsWith('--')) {
  const [flag, value] = argv.splice(0, 2);
  if (flag === '--deadline') deadline = Number(value);
  else if (flag === '--mode') mode = value;
  else argv.unshift('?');
}
const [transportKind, ...target] = argv;
if (!['stdio', 'http'].includes(transportKind) || target.length === 0 || !['legacy', 'auto', '2026-07-28'].includes(mode)) {
  console.log('FAIL run: usage: client.mjs [--mode legacy|auto|2026-07-28] [--deadline S] stdio CMD [ARG...] | http URL');
  process.exit(1);
}
const modern = mode !== 'legacy';
const EXPECTED_VERSION = modern ? '2026-07-28' : '2025-11-25';
console.log(`     @modelcontextprotocol/client ${versionOf('@modelcontextprotocol/client')}, mode ${mode}, ${transportKind}`);

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
const errorCode = (e) => e?.code ?? e?.data?.code;

// --- recording the wire: the SDK's own transport, tapped in place ---------------------------
// The client keeps its real transport (so the SDK takes its own paths, such as the stdio probe on
// a sibling process); `send` and the `onmessage` the SDK installs are wrapped to log each message.
function tap(transport) {
  const log = [];
  const send = transport.send.bind(transport);
  transport.send = (m, options) => {
    log.push(['out', m]);
    return send(m, options);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler,
    set: (h) => {
      handler = h && ((m, extra) => {
        log.push(['in', m]);
        return h(m, extra);
      });
    },
  });
  return {
    log,
    sent: (method) => log.filter(([d, m]) => d === 'out' && m.method === method).map(([, m]) => m),
    answersTo: (id) => log.filter(([d, m]) => d === 'in' && m.id === id && !m.method).map(([, m]) => m),
  };
}

const SAMPLED_TEXT = 'interop sampled answer';
const ELICITED_NAME = 'interop-user';

async function main() {
  const transport = transportKind === 'stdio'
    ? new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' })
    : new StreamableHTTPClientTransport(new URL(target[0]));
  const wire = tap(transport);
  const options = { capabilities: { sampling: {}, elicitation: {} } };
  if (mode === 'auto') options.versionNegotiation = { mode: 'auto' };
  if (mode === '2026-07-28') options.versionNegotiation = { mode: { pin: '2026-07-28' } };
  const client = new Client({ name: 'ferromcp-interop-ts-v2', version: '1.0.0' }, options);
  // The same handlers answer live requests (2025-11-25) and the input requests of an
  // input_required result (2026-07-28, fulfilled by the SDK and retried).
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    content: { type: 'text', text: SAMPLED_TEXT },
    model: 'interop-model',
    stopReason: 'endTurn',
  }));
  client.setRequestHandler('elicitation/create', async (request) => {
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
  client.setNotificationHandler('notifications/message', (n) => { logs.push(n.params); });
  const listChanged = [];
  client.setNotificationHandler('notifications/tools/list_changed', (n) => { listChanged.push(n); });

  let connected = false;
  await step('negotiate', async () => {
    const started = Date.now();
    await client.connect(transport);
    connected = true;
    const took = (Date.now() - started) / 1000;
    // A server that sat on the auto probe would stall the connect until the probe's timeout.
    check(took < 5, 'connect time', `${took.toFixed(1)} s to connect`);
    check(client.getNegotiatedProtocolVersion() === EXPECTED_VERSION, 'protocol',
      `${client.getNegotiatedProtocolVersion()}, expected ${EXPECTED_VERSION}`);
    check(client.getProtocolEra() === (modern ? 'modern' : 'legacy'), 'era', client.getProtocolEra());
    check(client.getServerVersion()?.name === 'ferromcp-demo', 'serverInfo', show(client.getServerVersion()));
    if (modern) {
      const discover = client.getDiscoverResult();
      check(discover?.supportedVersions?.includes('2026-07-28'), 'server/discover', show(discover));
      check(wire.sent('initialize').length === 0, 'no handshake', 'initialize sent in the modern era');
    } else {
      check(wire.sent('initialize').length === 1, 'handshake', `${wire.sent('initialize').length} initialize requests`);
      check(wire.sent('server/discover').length === 0, 'no probe', 'server/discover sent in legacy mode');
    }
  });
  if (!connected) return;

  if (modern) {
    await step('envelope', async () => {
      // Every modern request carries the per-request `_meta` envelope with the revision.
      await client.listTools();
      const req = wire.sent('tools/list').at(-1);
      const v = req?.params?._meta?.['io.modelcontextprotocol/protocolVersion'];
      check(v === '2026-07-28', 'tools/list _meta', show(req));
    });
  }

  let tools = {};
  await step('tools-list', async () => {
    tools = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t]));
    for (const name of ['add', 'echo', 'countdown', 'protocol_info', 'test_simple_text', 'test_error_handling']) {
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

  await step('tools-call-structured', async () => {
    // protocol_info declares an outputSchema (the SDK validates structuredContent against it)
    // and reports the revision the server served the call at: the server's side of the
    // negotiation.
    check(tools.protocol_info?.outputSchema?.type === 'object', 'outputSchema', show(tools.protocol_info));
    const r = await client.callTool({ name: 'protocol_info', arguments: {} });
    const s = r.structuredContent;
    check(!r.isError && s?.protocolVersion === EXPECTED_VERSION, 'server protocolVersion', show(r));
    check(s.era === (modern ? 'modern' : 'handshake'), 'server era', show(s));
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
    // server/tools: input validation errors are tool execution errors.
    const r = await client.callTool({ name: 'add', arguments: { a: 'two', b: 3 } });
    check(r.isError === true, 'add with a string', show(r));
  });

  await step('tools-call-unknown-tool', async () => {
    let r;
    try {
      r = await client.callTool({ name: 'no_such_tool', arguments: {} });
    } catch (e) {
      check(errorCode(e) === -32602, 'code', `${errorCode(e)} ${e.message}`);
      return;
    }
    throw new CheckFailed(`unknown tool: no JSON-RPC error but ${show(r)}`);
  });

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
    // -32002 in the handshake era; SEP-2164 makes it -32602 at 2026-07-28. The SDK turns both
    // into a ResourceNotFoundError whose `code` is always -32602, so the code is read off the
    // wire.
    const want = modern ? -32602 : -32002;
    let rr;
    try {
      rr = await client.readResource({ uri: 'test://no-such-resource' });
    } catch (e) {
      check(e?.constructor?.name === 'ResourceNotFoundError' && e.uri === 'test://no-such-resource', 'error', `${e?.constructor?.name} ${e?.message}`);
      const req = wire.sent('resources/read').find((m) => m.params?.uri === 'test://no-such-resource');
      const answer = wire.answersTo(req?.id)[0];
      check(answer?.error?.code === want, 'code on the wire', `${show(answer)}, expected ${want}`);
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
    const r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
      onprogress: (p) => progress.push(p.progress),
    });
    check(!r.isError, 'test_tool_with_progress', show(r));
    check(progress.length >= 3, 'notifications', `${progress.length} progress notifications: ${show(progress)}`);
    check(progress.every((p, i) => i === 0 || p > progress[i - 1]), 'increasing', show(progress));
  });

  // The handshake era sets the level per connection (logging/setLevel); 2026-07-28 per request
  // (the envelope's logLevel).
  if (!modern) {
    await step('logging-set-level', async () => {
      await client.setLoggingLevel('debug');
    });
  }
  await step('logging-notifications', async () => {
    logs.length = 0;
    const params = { name: 'test_tool_with_logging', arguments: {} };
    if (modern) params._meta = { [LOG_LEVEL_META_KEY]: 'debug' };
    const r = await client.callTool(params);
    check(!r.isError, 'test_tool_with_logging', show(r));
    for (let i = 0; i < 20 && logs.length < 3; i++) await sleep(50);
    check(logs.length >= 3, 'notifications/message', `${logs.length} log notifications: ${show(logs)}`);
  });

  if (!modern) {
    await step('ping', async () => {
      await client.ping();
    });
  }

  await step('list-changed', async () => {
    // The trigger adds a tool. The handshake era announces it with
    // notifications/tools/list_changed; 2026-07-28 on a subscriptions/listen stream.
    listChanged.length = 0;
    const sub = modern ? await client.listen({ toolsListChanged: true }) : undefined;
    try {
      const r = await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      check(!r.isError, 'test_trigger_tool_change', show(r));
      for (let i = 0; i < 60 && listChanged.length === 0; i++) await sleep(50);
      check(listChanged.length > 0, 'notifications/tools/list_changed', 'none arrived');
    } finally {
      await sub?.close();
    }
    const names = (await client.listTools()).tools.map((t) => t.name);
    check(names.includes('test_dynamic_tool'), 'tools/list after the change', show(names));
  });

  await step('cancellation', async () => {
    // Start countdown(5), cancel it after its first progress notification.
    const controller = new AbortController();
    const seen = [];
    let first;
    const started = new Promise((resolve) => { first = resolve; });
    const call = client.callTool({ name: 'countdown', arguments: { seconds: 5 } }, {
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
    // At 2026-07-28 over HTTP the SDK cancels by closing the request's POST stream instead.
    const wantCancels = transportKind === 'http' && modern ? 0 : 1;
    check(cancels.length === wantCancels, 'notifications/cancelled', `${cancels.length} sent for the countdown, expected ${wantCancels}`);
    const atCancel = seen.length;
    let r = await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } });
    check(show(texts(r)) === '["2"]', 'keeps serving', show(r));
    await sleep(2500);
    // The handshake-era HTTP wire can end a POST stream only with a response, so there the
    // server answers a cancelled request -32800 (as the reference Python server does);
    // anything else is an answer it must not send.
    const answers = wire.answersTo(req.id).filter((m) => !(transportKind === 'http' && !modern && m.error?.code === -32800));
    check(answers.length === 0, 'not answered', `the server answered the cancelled request: ${show(answers)}`);
    check(seen.length <= atCancel + 1, 'stops', `countdown kept reporting progress: ${show(seen)}`);
    r = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    check(show(texts(r)) === '["still here"]', 'keeps serving', show(r));
  });

  // Live server-to-client requests in the handshake era; input_required rounds at 2026-07-28.
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
