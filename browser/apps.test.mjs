// Headless Chromium test of ferromcp's MCP Apps host (crates/ferromcp-cli/assets/apps_host/):
// a harness page on one loopback port loads apps-host.js, the sandbox page is served from a
// second port (another origin), and the host's callTool/readResource go to a real MCP client
// in node, connected to
//   1. the official example app server @modelcontextprotocol/server-basic-vanillajs (stdio),
//   2. `ferromcp serve` (the demo's counter app; FERROMCP_BIN),
//   3. `ferromcp serve` again behind a probe app written here that tries what a hostile app
//      would (undeclared fetch, hidden tools, over-size and over-rate calls, posting to the
//      top window, replacing itself through the proxy, javascript: links).
// Run from the repository root:
//   FERROMCP_BIN=target/debug/ferromcp CHROMIUM=/usr/bin/chromium node browser/apps.test.mjs
// SCREENSHOTS=1 writes docs/screenshots/apps-*.png. Exit status 0 on success.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ASSETS = path.join(ROOT, "crates/ferromcp-cli/assets/apps_host");
const BASIC_SERVER = path.join(
  ROOT, "browser/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
const FERROMCP_BIN = process.env.FERROMCP_BIN || path.join(ROOT, "target/debug/ferromcp");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SCREENSHOTS = process.env.SCREENSHOTS === "1";
const TIMEOUT_MS = 120_000;

const cleanups = [];
let failures = 0;
function check(cond, what, detail) {
  if (cond) {
    console.log(`ok   ${what}`);
  } else {
    failures++;
    console.log(`FAIL ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
  }
}
async function cleanup() {
  while (cleanups.length) {
    try { await cleanups.pop()(); } catch { /* best effort */ }
  }
}
const deadline = setTimeout(async () => {
  console.error(`apps.test.mjs: timed out after ${TIMEOUT_MS} ms`);
  await cleanup();
  process.exit(1);
}, TIMEOUT_MS);

// ---- servers --------------------------------------------------------------------------------

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, "127.0.0.1", () => {
      cleanups.push(() => new Promise((r) => { server.closeAllConnections(); server.close(r); }));
      resolve(`http://127.0.0.1:${server.address().port}`);
    });
  });
}

// The sandbox page's headers: the same as `apps_host::sandbox_headers` (Rust) sends.
function sandboxCsp(hostOrigin) {
  return "default-src 'none'; script-src 'self' 'unsafe-inline' http: https:; " +
    "style-src 'self' 'unsafe-inline' http: https:; img-src 'self' data: http: https:; " +
    "font-src 'self' data: http: https:; media-src 'self' data: http: https:; " +
    "connect-src http: https: ws: wss:; frame-src http: https:; base-uri 'self' http: https:; " +
    `object-src 'none'; form-action 'none'; frame-ancestors ${hostOrigin}`;
}

const HARNESS = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps host harness</title>
<script src="/apps-host.js"></script>
<style>body{font-family:system-ui,sans-serif;margin:16px;max-width:720px}</style></head>
<body><h1 id="heading">MCP Apps host</h1><div id="app"></div></body></html>`;

const hits = { allowed: 0, forbidden: 0 };
const api = (name) => (req, res) => {
  if (req.url.startsWith("/framer.html?sandbox=")) {
    // A foreign page that frames the sandbox page, naming itself as the host.
    const sandbox = decodeURIComponent(req.url.slice("/framer.html?sandbox=".length));
    const self = `http://${req.headers.host}`;
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(`<!DOCTYPE html><title>framer</title><script>
      window.got = [];
      addEventListener("message", function (e) { window.got.push(e.data); });
    </script><iframe src="${sandbox}/sandbox.html?host=${encodeURIComponent(self)}"></iframe>`);
    return;
  }
  hits[name]++;
  res.writeHead(200, { "Content-Type": "application/json", "Access-Control-Allow-Origin": "*" });
  res.end(JSON.stringify({ from: name }));
};

// ---- MCP clients ----------------------------------------------------------------------------

async function connect(command, args) {
  const client = new Client({ name: "ferromcp-apps-test", version: "1.0.0" });
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}
function toolApp(tool) {
  const meta = tool._meta || {};
  return (meta.ui && meta.ui.resourceUri) || meta["ui/resourceUri"];
}
async function appOf(client, toolName) {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === toolName);
  const uri = toolApp(tool);
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  return { tools, tool, uri, html: content.text, meta: (content._meta && content._meta.ui) || {} };
}

// ---- the page -------------------------------------------------------------------------------

const calls = []; // every tools/call the host forwarded: { name, args }
const consoleLines = []; // console output of every frame (the basic app logs what it gets)
const links = []; // every link the host asked the page to open
let current = null; // the MCP client behind the mounted app

async function mount(page, sandboxOrigin, app, extra) {
  await page.evaluate(([sandboxOrigin, app, extra]) => {
    window.__log = [];
    window.__sizes = [];
    window.__handle = window.FerromcpApps.mount(document.getElementById("app"), Object.assign({
      sandboxOrigin,
      html: app.html,
      resourceUri: app.uri,
      resourceMeta: app.meta,
      tool: app.tool,
      tools: app.tools,
      toolInput: {},
      callTool: (name, args) => window.hostCallTool(name, args),
      readResource: (uri) => window.hostReadResource(uri),
      openLink: (url) => window.hostOpenLink(url),
      onLog: (direction, msg) => window.__log.push({ direction, msg: JSON.parse(JSON.stringify(msg ?? null)) }),
      onSizeChange: (size) => window.__sizes.push(size)
    }, extra || {}));
  }, [sandboxOrigin, app, extra]);
}
const logOf = (page) => page.evaluate(() => window.__log);
const hasLog = (log, direction, method) =>
  log.some((e) => e.direction === direction && e.msg && e.msg.method === method);
const appFrame = (page) => page.frameLocator('iframe[title^="MCP App"]').frameLocator("iframe");
async function waitFor(what, fn, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value) { return value; }
    if (Date.now() > until) { throw new Error(`timed out waiting for ${what}`); }
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function screenshot(page, name) {
  if (!SCREENSHOTS) { return; }
  const dir = path.join(ROOT, "docs/screenshots");
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, name), fullPage: true });
  console.log(`     wrote docs/screenshots/${name}`);
}
async function teardown(page) {
  await page.evaluate(() => window.__handle.teardown());
  const log = await logOf(page);
  const t = log.find((e) => e.direction === "teardown");
  check(t && t.msg.answered === true, "teardown: the app answered ui/resource-teardown", t);
  check(await page.locator('iframe[title^="MCP App"]').count() === 0, "teardown: the frame is gone");
}

// ---- scenarios ------------------------------------------------------------------------------

async function basicVanillaJs(page, sandboxOrigin) {
  current = await connect(process.execPath, [BASIC_SERVER, "--stdio"]);
  const app = await appOf(current, "get-time");
  check(app.uri === "ui://get-time/mcp-app.html", "basic: get-time links to its app", app.uri);
  const first = await current.callTool({ name: "get-time", arguments: {} });
  await mount(page, sandboxOrigin, app);
  await page.evaluate((r) => window.__handle.sendToolResult(r), first);
  const frame = appFrame(page);
  await frame.locator("#server-time").filter({ hasText: first.structuredContent.time })
    .waitFor({ timeout: 15_000 });
  check(true, "basic: the app rendered and shows the tool result it was sent");
  let log = await logOf(page);
  check(hasLog(log, "in", "ui/initialize") && hasLog(log, "in", "ui/notifications/initialized"),
    "basic: ui/initialize then ui/notifications/initialized");
  const init = log.find((e) => e.direction === "out" && e.msg.result && e.msg.result.protocolVersion);
  check(init && init.msg.result.protocolVersion === "2026-01-26", "basic: answered with the host's protocol version");
  check(hasLog(log, "out", "ui/notifications/tool-input") &&
    consoleLines.some((l) => l.startsWith("Received tool call input")), "basic: tool input delivered to the app");
  const before = calls.length;
  await new Promise((r) => setTimeout(r, 20));
  await frame.getByRole("button", { name: "Get Server Time" }).click();
  await waitFor("the app's tools/call", async () => calls.length > before);
  check(calls[calls.length - 1].name === "get-time", "basic: the app called get-time through the host");
  await waitFor("a new time", async () =>
    (await frame.locator("#server-time").textContent()) !== first.structuredContent.time);
  check(/^\d{4}-\d\d-\d\dT/.test(await frame.locator("#server-time").textContent()),
    "basic: the app shows the answer of its call");
  await frame.getByRole("button", { name: "Send Log" }).click();
  await frame.getByRole("button", { name: "Open Link" }).click();
  await waitFor("the link request", async () => links.length > 0);
  check(links[0] === "https://modelcontextprotocol.io/", "basic: ui/open-link reached the page's openLink", links);
  log = await waitFor("the app's log", async () => {
    const l = await logOf(page);
    return l.some((e) => e.direction === "app-log") ? l : null;
  });
  check(log.find((e) => e.direction === "app-log").msg.data === "This is log text.", "basic: notifications/message reached onLog");
  const sizes = await page.evaluate(() => window.__sizes);
  const height = await page.evaluate(() => window.__handle.iframe.style.height);
  check(sizes.length > 0 && height !== "120px", "basic: size changes reached the host and resized the frame", { sizes, height });
  await screenshot(page, "apps-basic-vanillajs.png");
  await teardown(page);
}

async function ferromcpCounter(page, sandboxOrigin) {
  current = await connect(FERROMCP_BIN, ["serve"]);
  const app = await appOf(current, "counter");
  check(app.meta.prefersBorder === true, "counter: the resource's _meta.ui reached the host", app.meta);
  const result = await current.callTool({ name: "counter", arguments: {} });
  await mount(page, sandboxOrigin, app, { toolInput: { from: "the test" } });
  await page.evaluate((r) => window.__handle.sendToolResult(r), result);
  const frame = appFrame(page);
  await frame.locator("#count").filter({ hasText: "0" }).waitFor({ timeout: 15_000 });
  check(/the test/.test(await frame.locator("#input").textContent()), "counter: tool input shown");
  check(true, "counter: the tool result shown");
  await frame.getByRole("button", { name: "Increment" }).click();
  await frame.locator("#count").filter({ hasText: "1" }).waitFor({ timeout: 10_000 });
  check(calls[calls.length - 1].name === "increment_counter",
    "counter: the app-only tool increment_counter was called through the host and its answer shown");
  await screenshot(page, "apps-ferromcp-counter.png");
  await teardown(page);
}

// A probe app: does what a hostile app would and writes what happened into #results.
function probeHtml(allowed, forbidden) {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>probe</title></head>
<body><h1>Probe app</h1><pre id="results" style="white-space:pre-wrap;word-break:break-all">running</pre><script>
(async function () {
  var host = window.parent, next = 1, pending = {}, out = {};
  addEventListener("message", function (e) {
    if (e.source !== host) return;
    var m = e.data;
    if (m && m.id !== undefined && m.method === undefined && pending[m.id]) { pending[m.id](m); delete pending[m.id]; }
    else if (m && m.method === "ui/resource-teardown") host.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
  });
  function req(method, params) {
    var id = next++;
    return new Promise(function (r) { pending[id] = r; host.postMessage({ jsonrpc: "2.0", id: id, method: method, params: params }, "*"); });
  }
  function call(name, args) { return req("tools/call", { name: name, arguments: args || {} }); }
  async function tryFetch(u) { try { var r = await fetch(u); return "ok " + r.status; } catch (e) { return "blocked"; } }
  var init = await req("ui/initialize", { protocolVersion: "2025-11-21", appInfo: { name: "probe", version: "1" }, appCapabilities: {} });
  out.protocolVersion = init.result.protocolVersion;
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  out.allowedFetch = await tryFetch(${JSON.stringify(allowed)});
  out.forbiddenFetch = await tryFetch(${JSON.stringify(forbidden)});
  out.modelOnly = (await call("echo", { text: "leak" })).error;
  out.unknown = (await call("no_such_tool")).error;
  out.allowed = (await call("counter")).result;
  window.top.postMessage({ jsonrpc: "2.0", id: "sneaky", method: "tools/call", params: { name: "counter", arguments: { forged: "top" } } }, "*");
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { html: "<p id=replaced>replaced</p>" } }, "*");
  out.jsLink = (await req("ui/open-link", { url: "javascript:alert(1)" })).result;
  out.big = (await call("counter", { pad: "x".repeat(5000) })).error;
  var concurrent = await Promise.all([call("counter", { __delay: 400 }), call("counter", { __delay: 400 }), call("counter", { __delay: 400 })]);
  out.concurrent = concurrent.map(function (r) { return r.error ? r.error.message : "ok"; });
  out.sixth = (await call("counter")).error ? "refused" : "ok";
  out.seventh = (await call("counter")).error || "not refused";
  document.getElementById("results").textContent = JSON.stringify(out, null, 1);
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/size-changed",
    params: { height: document.documentElement.scrollHeight } }, "*");
})();
</script></body></html>`;
}

async function probe(page, sandboxOrigin, allowedOrigin, forbiddenOrigin) {
  current = await connect(FERROMCP_BIN, ["serve"]);
  const { tools } = await current.listTools();
  // The host is told `echo` is for the model only: the app must not get to call it.
  const hidden = tools.map((t) => t.name === "echo"
    ? Object.assign({}, t, { _meta: { ui: { visibility: ["model"] } } }) : t);
  const app = {
    tools: hidden, tool: tools.find((t) => t.name === "counter"), uri: "ui://test/probe",
    html: probeHtml(`${allowedOrigin}/data`, `${forbiddenOrigin}/data`),
    meta: { csp: { connectDomains: [allowedOrigin, "https://bad;source"] } }
  };
  const callsBefore = calls.length;
  await mount(page, sandboxOrigin, app, { maxMessageBytes: 2048, maxCallsPerMinute: 6, maxPendingCalls: 2 });
  // A foreign window (the host page itself) posting as if it were the app.
  await page.evaluate(() => window.postMessage(
    { jsonrpc: "2.0", id: "forged", method: "tools/call", params: { name: "counter", arguments: { forged: "page" } } }, "*"));
  const frame = appFrame(page);
  await frame.locator("#results").filter({ hasText: "seventh" }).waitFor({ timeout: 20_000 });
  const out = JSON.parse(await frame.locator("#results").textContent());
  const log = await logOf(page);
  check(out.protocolVersion === "2026-01-26", "probe: an app asking for another version gets the host's", out.protocolVersion);
  check(out.allowedFetch === "ok 200" && hits.allowed === 1, "probe: a fetch to a connectDomains origin works", out.allowedFetch);
  check(out.forbiddenFetch === "blocked" && hits.forbidden === 0,
    "probe: the CSP blocks a fetch to an origin not in connectDomains", { out: out.forbiddenFetch, hits });
  check(out.modelOnly && /not visible to apps/.test(out.modelOnly.message),
    "probe: a tool not visible to apps is refused with an error", out.modelOnly);
  check(out.unknown && /unknown tool/.test(out.unknown.message), "probe: an unknown tool is refused", out.unknown);
  check(out.allowed && out.allowed.structuredContent, "probe: a tool visible to apps is forwarded", out.allowed);
  check(out.jsLink && out.jsLink.isError === true && links.length === 1,
    "probe: a javascript: link is refused and never reaches openLink", { out: out.jsLink, links });
  check(out.big && /message over 2048 bytes/.test(out.big.message), "probe: an over-size message is refused (maxMessageBytes)", out.big);
  check(JSON.stringify(out.concurrent) === JSON.stringify(["ok", "ok", "refused by the host: more than 2 calls in flight"]),
    "probe: calls past maxPendingCalls in flight are refused", out.concurrent);
  check(out.sixth === "ok" && /rate limit/.test(out.seventh.message),
    "probe: calls past maxCallsPerMinute are refused", out.seventh);
  const forwarded = calls.slice(callsBefore).map((c) => c.name);
  check(!forwarded.includes("echo") && !forwarded.includes("no_such_tool"),
    "probe: refused tools never reached the server", forwarded);
  const forged = calls.slice(callsBefore).filter((c) => c.args && c.args.forged);
  check(forged.length === 0, "probe: messages from a foreign window (host page, the app's top post) were ignored", forged);
  const ignored = log.filter((e) => e.direction === "ignored" && e.msg.data && e.msg.data.method === "tools/call");
  check(ignored.length === 2, "probe: both forged tools/call were reported as ignored", ignored.length);
  check(!log.some((e) => e.msg && e.msg.method === "ui/notifications/sandbox-resource-ready" && e.direction === "in"),
    "probe: the app's sandbox-resource-ready was not relayed to the host");
  check(await frame.locator("#replaced").count() === 0, "probe: the app could not replace itself through the proxy");
  await screenshot(page, "apps-probe.png");
  await teardown(page);
}

// An app that navigates its own frame away: the sandbox closes it.
async function navigator_(page, sandboxOrigin, allowedOrigin) {
  const html = `<!DOCTYPE html><html><head><title>nav</title></head><body><p>leaving</p><script>
    window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize",
      params: { protocolVersion: "2026-01-26", appInfo: { name: "nav", version: "1" }, appCapabilities: {} } }, "*");
    setTimeout(function () { location.href = ${JSON.stringify(allowedOrigin + "/data")}; }, 200);
  </script></body></html>`;
  const app = { html, uri: "ui://test/nav", tool: { name: "counter", inputSchema: { type: "object" } }, tools: [], meta: {} };
  await mount(page, sandboxOrigin, app);
  const outer = page.frameLocator('iframe[title^="MCP App"]');
  await outer.locator("body").filter({ hasText: "navigated away" }).waitFor({ timeout: 10_000 })
    .then(() => check(true, "navigation: an app that navigates its frame away is closed by the sandbox"),
      (e) => check(false, "navigation: an app that navigates its frame away is closed by the sandbox", e.message));
  check(await outer.locator("iframe").count() === 0, "navigation: its frame is gone");
  await page.evaluate(() => window.__handle.teardown());
}

// A page of another origin framing the sandbox page (and naming itself as the host) gets
// nothing: the sandbox page may be framed only by the host origin.
async function foreignFramer(browser, sandboxOrigin, allowedOrigin) {
  const page = await browser.newPage();
  await page.goto(`${allowedOrigin}/framer.html?sandbox=${encodeURIComponent(sandboxOrigin)}`);
  await new Promise((r) => setTimeout(r, 1500));
  const got = await page.evaluate(() => window.got);
  check(got.length === 0, "framing: a foreign page framing the sandbox page gets no proxy-ready", got);
  await page.close();
}

async function main() {
  const hostOrigin = await listen((req, res) => {
    if (req.url === "/apps-host.js") {
      res.writeHead(200, { "Content-Type": "application/javascript" });
      res.end(fs.readFileSync(path.join(ASSETS, "apps-host.js")));
    } else {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(HARNESS);
    }
  });
  const sandboxOrigin = await listen((req, res) => {
    if (!req.url.startsWith("/sandbox.html")) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "Content-Security-Policy": sandboxCsp(hostOrigin),
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
      "Cache-Control": "no-store"
    });
    res.end(fs.readFileSync(path.join(ASSETS, "sandbox.html")));
  });
  const allowedOrigin = await listen(api("allowed"));
  const forbiddenOrigin = await listen(api("forbidden"));

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  });
  cleanups.push(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 760, height: 700 } });
  page.on("pageerror", (e) => console.log(`     page error: ${e.message}`));
  page.on("console", (m) => consoleLines.push(m.text()));
  await page.exposeFunction("hostCallTool", async (name, args) => {
    const { __delay, ...rest } = args || {};
    calls.push({ name, args: rest });
    if (__delay) { await new Promise((r) => setTimeout(r, __delay)); }
    return current.callTool({ name, arguments: rest });
  });
  await page.exposeFunction("hostReadResource", (uri) => current.readResource({ uri }));
  // The page decides: it records the link and declines to open it (no network here).
  await page.exposeFunction("hostOpenLink", (url) => { links.push(url); return false; });
  await page.goto(hostOrigin + "/");

  await basicVanillaJs(page, sandboxOrigin);
  await ferromcpCounter(page, sandboxOrigin);
  await probe(page, sandboxOrigin, allowedOrigin, forbiddenOrigin);
  await navigator_(page, sandboxOrigin, allowedOrigin);
  await foreignFramer(browser, sandboxOrigin, allowedOrigin);
}

try {
  await main();
} catch (e) {
  failures++;
  console.log(`FAIL ${e && e.stack ? e.stack : e}`);
}
await cleanup();
clearTimeout(deadline);
if (failures) {
  console.error(`apps.test.mjs: ${failures} check(s) failed`);
  process.exit(1);
}
console.log("apps.test.mjs: all checks passed");
process.exit(0);
