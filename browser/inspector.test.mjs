// Headless Chromium drives `ferromcp inspect --web` (S78): the page connects to the demo
// server (`ferromcp serve`) in both protocol eras, fills and submits tool forms, answers an
// elicitation, and shows the resources, prompts and the message log. With SCREENSHOTS=1,
// a screenshot of each view goes to docs/screenshots/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, delimiter } from 'node:path';
import { chromium } from 'playwright-core';

const BIN = process.env.FERROMCP_BIN || 'ferromcp';
const SHOTS = process.env.SCREENSHOTS === '1';
const SERVE = 'ferromcp serve';
const SHOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'screenshots');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Starts the inspector; resolves with its URL (the first line on stdout) and the process.
function startInspector(cwd) {
  // The binary's directory first on PATH: the page starts `ferromcp serve` by that name (and
  // node's, for `node …` servers).
  const env = { ...process.env, PATH: `${dirname(BIN)}${delimiter}${dirname(process.execPath)}${delimiter}${process.env.PATH || ''}` };
  const child = spawn(BIN, ['inspect', '--web', '--no-open', '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'], env, cwd });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no URL from the inspector within 10 s')), 10000);
    child.on('error', reject);
    createInterface({ input: child.stdout }).once('line', (url) => { clearTimeout(timer); resolve({ child, url }); });
  });
}

async function shot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SHOT_DIR, `${name}.png`), fullPage: false });
}

test('the page connects, calls tools, answers an elicitation, in both eras', { timeout: 120000 }, async () => {
  const { child, url } = await startInspector();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(20000);
    await page.goto(url);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);

    // Connect from the page (a stdio command), modern era by default (auto).
    await page.getByLabel('Server', { exact: true }).fill(SERVE);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    const info = page.getByRole('region', { name: 'Server info' });
    await info.getByText('ferromcp-demo').waitFor();
    await info.getByText('2026-07-28 (modern era)').waitFor();

    // A tool form: echo's `text`, then the result rendered as text.
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    await page.getByRole('button', { name: 'echo', exact: true }).click();
    await page.getByLabel('text', { exact: true }).fill('hello from Chromium');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const result = page.getByRole('region', { name: 'Call result' });
    await result.getByText('hello from Chromium').first().waitFor();

    // Numbers: add.
    await page.getByRole('button', { name: 'add', exact: true }).click();
    await page.getByLabel('a', { exact: true }).fill('2');
    await page.getByLabel('b', { exact: true }).fill('40');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await result.getByText('42', { exact: true }).waitFor();
    await shot(page, 'tools');

    // An elicitation answered in the page (a multi-round call at 2026-07-28).
    await page.getByRole('button', { name: 'test_elicitation', exact: true }).click();
    await page.getByLabel('message', { exact: true }).fill('Please sign up');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const ask = page.getByRole('region', { name: /elicitation request/ });
    await ask.getByText('Please sign up', { exact: true }).waitFor();
    await ask.getByLabel('username', { exact: true }).fill('ada');
    await ask.getByLabel('email', { exact: true }).fill('ada@example.com');
    await shot(page, 'elicitation');
    await ask.getByRole('button', { name: 'Accept' }).click();
    await result.getByText('action=accept').first().waitFor();
    assert.match(await result.innerText(), /ada@example\.com/);

    // An image result.
    await page.getByRole('button', { name: 'test_image_content', exact: true }).click();
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await result.getByRole('img').waitFor();

    // Resources and prompts.
    await page.getByRole('button', { name: 'Resources', exact: true }).click();
    await page.getByRole('button', { name: 'demo://readme', exact: true }).click();
    await page.getByRole('heading', { name: 'demo://readme' }).waitFor();
    await shot(page, 'resources');
    await page.getByRole('button', { name: 'Prompts', exact: true }).click();
    await page.getByRole('list', { name: 'Prompt list' }).getByRole('button', { name: 'greet', exact: true }).click();
    // Completion: the names the server offers for what is typed.
    await page.getByLabel('name', { exact: true }).pressSequentially('a');
    await page.locator('datalist option[value="Ada"]').waitFor({ state: 'attached' });
    assert.equal(await page.locator('datalist option[value="Grace"]').count(), 0);
    await page.getByLabel('name', { exact: true }).fill('Ada');
    await page.getByRole('button', { name: 'Get prompt' }).click();
    await page.locator('#prompt-detail').getByText('Ada').first().waitFor();
    await shot(page, 'prompts');

    // The log: both directions, with durations.
    await page.getByRole('button', { name: 'Log', exact: true }).click();
    const log = page.getByRole('table', { name: 'Message log' });
    await log.getByText('tools/call').first().waitFor();
    await log.getByText('← server').first().waitFor();
    await log.getByText('→ server').first().waitFor();
    await shot(page, 'log');

    // The handshake era: a second server, elicitation answered with decline.
    await page.getByLabel('Protocol').selectOption('2025-11-25');
    await page.getByLabel('Server', { exact: true }).fill(SERVE);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await info.getByText('2025-11-25 (handshake era)').waitFor();
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    await page.getByRole('button', { name: 'test_elicitation', exact: true }).click();
    await page.getByLabel('message', { exact: true }).fill('Handshake-era sign up');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const ask2 = page.getByRole('region', { name: /elicitation request/ });
    await ask2.getByText('Handshake-era sign up', { exact: true }).waitFor();
    await ask2.getByRole('button', { name: 'Decline' }).click();
    await result.getByText('action=decline').first().waitFor();

    // Disconnect.
    await page.getByRole('button', { name: 'Disconnect', exact: true }).click();
    await page.getByRole('button', { name: /#2$/ }).waitFor({ state: 'detached' });
  } finally {
    await browser.close();
    child.kill();
  }
});

test('sampling, progress and cancellation, roots, tasks, enums', { timeout: 120000 }, async () => {
  const { child, url } = await startInspector();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(20000);
    await page.goto(url);
    await page.getByLabel('Protocol').selectOption('2025-11-25');
    await page.getByLabel('Server', { exact: true }).fill(SERVE);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    const info = page.getByRole('region', { name: 'Server info' });
    await info.getByText('2025-11-25 (handshake era)').waitFor();
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    const result = page.getByRole('region', { name: 'Call result' });

    // Sampling: the user writes the model's reply.
    await page.getByRole('button', { name: 'test_sampling', exact: true }).click();
    await page.getByLabel('prompt', { exact: true }).fill('What is the capital of France?');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const ask = page.getByRole('region', { name: /sampling request/ });
    await ask.getByLabel('Reply').fill('Paris');
    await shot(page, 'sampling');
    await ask.getByRole('button', { name: 'Send reply' }).click();
    await result.getByText('Paris').first().waitFor();

    // Progress, then Cancel.
    await page.getByRole('button', { name: 'countdown', exact: true }).click();
    await page.getByLabel('seconds', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByRole('progressbar', { name: 'Progress' }).waitFor();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await result.getByText('Cancelled.').waitFor();

    // Roots the user sets, read by the server.
    await page.getByRole('button', { name: 'Roots', exact: true }).click();
    await page.getByRole('textbox', { name: /^Roots/ }).fill('file:///tmp/project-one');
    await page.getByRole('button', { name: 'Set roots' }).click();
    await page.getByText('roots set: 1').waitFor();
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    await page.getByRole('button', { name: 'test_input_required_result_list_roots', exact: true }).click();
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await result.getByText('file:///tmp/project-one').first().waitFor();

    // Enums (SEP-1330): selects and multi-select checkboxes in the elicitation form.
    await page.getByRole('button', { name: 'test_elicitation_sep1330_enums', exact: true }).click();
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    const form = page.getByRole('region', { name: /elicitation request/ });
    await form.getByRole('button', { name: 'Accept' }).waitFor();
    const selects = form.getByRole('combobox');
    for (let i = 0; i < await selects.count(); i++) await selects.nth(i).selectOption({ index: 1 });
    const boxes = form.getByRole('checkbox');
    for (let i = 0; i < await boxes.count(); i++) await boxes.nth(i).check();
    await form.getByRole('button', { name: 'Accept' }).click();
    await result.getByText('Elicitation completed').first().waitFor();
    const answered = await result.innerText();
    assert.match(answered, /"action":"accept"/);
    assert.match(answered, /"untitledSingle":"option1"/);
    assert.match(answered, /"titledSingle":"value1"/);
    assert.match(answered, /"legacyEnum":"opt1"/);
    assert.match(answered, /"untitledMulti":\["option1","option2","option3"\]/);
    assert.match(answered, /"titledMulti":\["value1","value2","value3"\]/);

    // A task (handshake era: the call answers with the task; the Tasks view follows it).
    await page.getByRole('button', { name: 'slow_compute', exact: true }).click();
    await page.getByLabel('seconds', { exact: true }).fill('1');
    const asTask = page.getByLabel('Run as a task');
    if (!(await asTask.isChecked())) await asTask.check();
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await result.getByText(/^Task [0-9a-f]+: working$/).waitFor();
    await result.getByRole('button', { name: 'Show tasks' }).click();
    const tasks = page.getByRole('table', { name: 'Task list' });
    await tasks.getByText('working').first().waitFor();
    await shot(page, 'tasks');
    await page.waitForTimeout(1200);
    await page.getByRole('button', { name: 'Refresh tasks' }).click();
    await tasks.getByText('completed').first().waitFor();
    await tasks.getByRole('button', { name: 'Result' }).first().click();
    await tasks.getByText('Computed job').first().waitFor();
  } finally {
    await browser.close();
    child.kill();
  }
});

test('OAuth in the browser: sign in in a new tab', { timeout: 60000 }, async () => {
  const server = spawn(BIN, ['serve', '--http', '127.0.0.1:0', '--auth'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const line = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no address from ferromcp serve')), 10000);
    createInterface({ input: server.stderr }).once('line', (l) => { clearTimeout(timer); resolve(l); });
  });
  const mcp = line.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/)[1];
  const { child, url } = await startInspector();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(20000);
    await page.goto(url);
    await page.getByLabel('Server', { exact: true }).fill(mcp);
    await page.getByLabel('OAuth').check();
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    const signIn = page.getByRole('region', { name: /sign-in request/ });
    const popup = page.waitForEvent('popup');
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    const tab = await popup;
    await tab.getByText('Signed in').waitFor();
    await page.getByRole('region', { name: 'Server info' }).getByText('ferromcp-demo').waitFor();
    await signIn.waitFor({ state: 'detached' });
  } finally {
    await browser.close();
    child.kill();
    server.kill();
  }
});

// MCP Apps through the real page (S92): the tool's app renders inside the nested frames (the
// sandbox origin's proxy page, the app's own frame), its button calls a tool through the host
// (apps-host.js, the page's /api/request) to the server, and the call is in the message log.
// Started from browser/ (the inspector's working directory), by a relative path.
const BROWSER_DIR = dirname(fileURLToPath(import.meta.url));
const BASIC_SERVER = 'node node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js --stdio';

async function openTool(page, target, serverName, tool) {
  await page.getByLabel('Server', { exact: true }).fill(target);
  await page.getByRole('button', { name: 'Connect', exact: true }).click();
  if (serverName) await page.getByRole('region', { name: 'Server info' }).getByText(serverName).first().waitFor();
  await page.getByRole('button', { name: 'Tools', exact: true }).click();
  await page.getByRole('button', { name: tool, exact: true }).click();
  await page.locator('#app-view iframe[title^="MCP App"]').waitFor();
  return page.frameLocator('#app-view iframe[title^="MCP App"]').frameLocator('iframe');
}

async function logRows(page, text) {
  return page.evaluate((t) => [...document.querySelectorAll('#log-table tbody tr')]
    .filter((tr) => tr.textContent.includes(t)).length, text);
}

test('MCP Apps: the demo counter renders in the page and increments through the host', { timeout: 90000 }, async () => {
  const { child, url } = await startInspector();
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(20000);
    await page.goto(url);
    const app = await openTool(page, SERVE, 'ferromcp-demo', 'counter');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByRole('region', { name: 'Call result' }).waitFor();
    const count = app.locator('#count');
    await app.locator('#result').filter({ hasText: 'count' }).waitFor();
    const before = Number(await count.textContent());
    assert.ok(Number.isInteger(before), `a count: ${before}`);
    await app.getByRole('button', { name: 'Increment' }).click();
    await count.filter({ hasText: String(before + 1) }).waitFor();
    await app.getByRole('button', { name: 'Increment' }).click();
    await count.filter({ hasText: String(before + 2) }).waitFor();
    await page.locator('#app-view').scrollIntoViewIfNeeded();
    await shot(page, 'inspector-app-counter');
    // The app's calls went to the server: in the message log, both directions.
    await page.getByRole('button', { name: 'Log', exact: true }).click();
    await page.locator('#log-table tbody tr', { hasText: 'increment_counter' }).first().waitFor();
    assert.ok(await logRows(page, 'increment_counter') >= 2);
    // Another tool: the app is torn down.
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    await page.getByRole('button', { name: 'add', exact: true }).click();
    await page.locator('iframe[title^="MCP App"]').waitFor({ state: 'detached' });
    const config = await page.evaluate(async () => (await fetch('/api/config', { headers: { 'X-Inspector-Token': new URLSearchParams(location.search).get('token') } })).json());
    assert.notEqual(new URL(config.sandboxOrigin).port, new URL(url).port);
  } finally {
    await browser.close();
    child.kill();
  }
});

test('MCP Apps: the official basic-vanillajs app renders in the page and calls its tool', { timeout: 90000 }, async () => {
  const { child, url } = await startInspector(BROWSER_DIR);
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.setDefaultTimeout(20000);
    await page.goto(url);
    const app = await openTool(page, BASIC_SERVER, null, 'get-time');
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByRole('region', { name: 'Call result' }).waitFor();
    const time = app.locator('#server-time');
    await time.filter({ hasText: /^\d{4}-\d\d-\d\dT/ }).waitFor();
    const first = await time.textContent();
    await page.getByRole('button', { name: 'Log', exact: true }).click();
    const calls = await logRows(page, 'tools/call');
    await page.getByRole('button', { name: 'Tools', exact: true }).click();
    await new Promise((r) => setTimeout(r, 20));
    await app.getByRole('button', { name: 'Get Server Time' }).click();
    await time.filter({ hasText: /^\d{4}-\d\d-\d\dT/ }).filter({ hasNotText: first }).waitFor();
    await page.locator('#app-view').scrollIntoViewIfNeeded();
    await shot(page, 'inspector-app-basic-vanillajs');
    await page.getByRole('button', { name: 'Log', exact: true }).click();
    await page.waitForFunction((n) => [...document.querySelectorAll('#log-table tbody tr')]
      .filter((tr) => tr.textContent.includes('tools/call')).length > n, calls);
  } finally {
    await browser.close();
    child.kill();
  }
});
