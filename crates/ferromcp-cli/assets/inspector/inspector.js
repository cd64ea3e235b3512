// The ferromcp web inspector's page: talks to the inspector's API (token on every
// request) and shows servers, tools, resources, prompts, tasks, roots, the message log,
// and the requests servers make of the user.
'use strict';
(function () {
  const { el, toolForm, build, validate } = window.FerromcpForms;
  const TOKEN = new URLSearchParams(location.search).get('token') || '';
  const $ = (id) => document.getElementById(id);
  const state = { servers: new Map(), current: null, view: 'tools', config: {}, pending: new Map(), calls: 0 };

  async function api(path, body) {
    const init = { headers: { 'X-Inspector-Token': TOKEN } };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(path, init);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((data.error && data.error.message) || `HTTP ${r.status}`);
    return data;
  }
  const status = (text) => { $('status').textContent = text; };

  // A request to the current server: {result} | {error} | {cancelled}.
  async function request(method, params, callId) {
    return api('/api/request', { server: state.current, method, params: params || {}, callId: callId || '' });
  }
  const json = (v) => el('pre', { text: JSON.stringify(v, null, 2) });

  // ---- servers ----
  function addServer(info) {
    state.servers.set(info.id, info);
    renderServers();
    if (state.current === null) select(info.id);
  }
  function renderServers() {
    const nav = $('servers');
    nav.replaceChildren();
    for (const [id, s] of state.servers) {
      const name = (s.serverInfo && s.serverInfo.name) || s.target;
      const b = el('button', { type: 'button', class: 'server', 'aria-pressed': String(id === state.current), text: `${name} #${id}` });
      b.addEventListener('click', () => select(id));
      nav.append(b);
    }
  }
  function select(id) {
    if (state.current !== id) { teardownApp(); $('tool-detail').replaceChildren(); }
    state.current = id;
    renderServers();
    const s = state.servers.get(id);
    const info = $('server-info');
    info.hidden = !s;
    $('views').hidden = !s;
    if (!s) { for (const v of document.querySelectorAll('.view')) v.hidden = true; return; }
    const si = s.serverInfo || {};
    const caps = Object.keys(s.capabilities || {}).filter((k) => s.capabilities[k] !== null);
    const dl = el('dl');
    const row = (k, v) => dl.append(el('dt', { text: k }), el('dd', { text: v }));
    row('Server', `${si.name || '?'} ${si.version || ''}${si.title ? ` (${si.title})` : ''}`);
    row('Target', s.target);
    row('Protocol', `${s.protocolVersion} (${s.era} era)`);
    row('Capabilities', caps.join(', ') || '(none)');
    if (s.instructions) row('Instructions', s.instructions);
    const disc = el('button', { type: 'button', text: 'Disconnect' });
    disc.addEventListener('click', async () => {
      try { await api('/api/disconnect', { server: id }); } catch (e) { status(e.message); }
    });
    info.replaceChildren(el('h2', { text: `Server #${id}` }), dl, disc,
      el('details', {}, el('summary', { text: 'Capabilities (JSON)' }), json(s.capabilities)));
    show(state.view);
  }
  function dropServer(id) {
    state.servers.delete(id);
    if (state.current === id) { state.current = null; const next = state.servers.keys().next(); select(next.done ? null : next.value); }
    renderServers();
  }

  $('connect-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const target = $('connect-target').value.trim();
    if (!target) return;
    status(`connecting to ${target}…`);
    try {
      const headers = $('connect-headers').value.split('\n').filter((h) => h.trim());
      const r = await api('/api/connect', { target, headers, protocol: $('connect-protocol').value, oauth: $('connect-oauth').checked });
      status(`connected to ${target} (${r.server.era} era, ${r.server.protocolVersion})`);
      addServer(r.server);
      select(r.server.id);
    } catch (e) { status(e.message); }
  });

  // ---- views ----
  for (const b of document.querySelectorAll('#views button')) b.addEventListener('click', () => show(b.dataset.view));
  function show(view) {
    state.view = view;
    for (const b of document.querySelectorAll('#views button')) b.setAttribute('aria-pressed', String(b.dataset.view === view));
    for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== `view-${view}`;
    if (view === 'tools') loadTools();
    if (view === 'resources') loadResources();
    if (view === 'prompts') loadPrompts();
    if (view === 'tasks') loadTasks();
    if (view === 'log') renderLog();
  }

  async function listAll(method, key) {
    let items = []; let cursor;
    for (let page = 0; page < 100; page++) {
      const r = await request(method, cursor ? { cursor } : {});
      if (!r.result) throw new Error(r.error ? r.error.message : 'cancelled');
      items = items.concat(r.result[key] || []);
      cursor = r.result.nextCursor;
      if (!cursor) break;
    }
    return items;
  }
  function itemList(ul, items, label, onPick) {
    ul.replaceChildren();
    for (const it of items) {
      const b = el('button', { type: 'button', text: label(it) });
      b.addEventListener('click', () => {
        for (const o of ul.querySelectorAll('button')) o.removeAttribute('aria-current');
        b.setAttribute('aria-current', 'true');
        onPick(it);
      });
      ul.append(el('li', {}, b));
    }
  }

  // ---- tools ----
  async function loadTools() {
    try {
      const tools = await listAll('tools/list', 'tools');
      state.tools = tools;
      itemList($('tool-list'), tools, (t) => t.name, showTool);
    } catch (e) { $('tool-detail').replaceChildren(el('p', { class: 'bad', text: e.message })); }
  }

  // The mounted MCP App, torn down when another tool is shown or the server changes.
  async function teardownApp() {
    const app = state.app;
    state.app = null;
    const handle = app && await app.catch(() => null);
    if (handle && handle.teardown) { try { handle.teardown(); } catch (e) { status(`App: ${e.message}`); } }
  }

  function showTool(tool) {
    teardownApp();
    const d = $('tool-detail');
    d.replaceChildren(el('h2', { text: tool.title || tool.name }));
    if (tool.description) d.append(el('p', { text: tool.description }));
    const formBox = el('form', { 'aria-label': `Arguments of ${tool.name}` });
    const form = toolForm(tool.inputSchema, formBox, 'tool');
    const taskSupport = tool.execution && tool.execution.taskSupport;
    let asTask = null;
    if (taskSupport === 'required' || taskSupport === 'optional') {
      asTask = el('input', { type: 'checkbox', id: `as-task-${tool.name}` });
      asTask.checked = taskSupport === 'required';
      formBox.append(el('div', {}, asTask, el('label', { for: asTask.id, text: 'Run as a task' })));
    }
    const call = el('button', { type: 'submit', text: 'Call' });
    const cancel = el('button', { type: 'button', text: 'Cancel', disabled: true });
    const prog = el('progress', { hidden: true, 'aria-label': 'Progress' });
    const progText = el('span', { role: 'status' });
    formBox.append(call, ' ', cancel, ' ', prog, ' ', progText);
    const out = el('div', { id: 'tool-result', 'aria-label': 'Result' });
    d.append(formBox);
    const uri = tool._meta && tool._meta.ui && tool._meta.ui.resourceUri;
    let app = null;
    if (uri) {
      const view = el('div', { id: 'app-view', 'aria-label': 'App' }, el('p', { text: `App: ${uri}` }));
      d.append(el('h3', { text: 'App' }), view);
      app = mountApp(view, tool, uri);
      state.app = app;
    }
    d.append(out, el('details', {}, el('summary', { text: 'Tool definition (JSON)' }), json(tool)));
    formBox.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      let args;
      try { args = form.value(); } catch (e) { out.replaceChildren(el('p', { class: 'bad', text: `arguments: ${e.message}` })); return; }
      const callId = `call-${++state.calls}`;
      state.progress = (p) => {
        if (p.callId !== callId) return;
        prog.hidden = false;
        if (p.total) { prog.max = p.total; prog.value = p.progress; } else prog.removeAttribute('value');
        progText.textContent = `${p.progress}${p.total ? '/' + p.total : ''} ${p.message || ''}`;
      };
      state.roundsSince = state.pendingSeen;
      call.disabled = true; cancel.disabled = false;
      cancel.onclick = () => api('/api/cancel', { callId }).catch(() => {});
      out.replaceChildren(el('p', { text: 'Calling…' }));
      const handle = await app;
      if (handle && handle.sendToolInput) handle.sendToolInput(args);
      const t0 = performance.now();
      try {
        const params = { name: tool.name, arguments: args };
        if (asTask && asTask.checked) params.task = { ttl: 300000 };
        const r = await request('tools/call', params, callId);
        const ms = Math.round(performance.now() - t0);
        out.replaceChildren(renderOutcome(r, tool, ms));
        if (handle && handle.sendToolResult && r.result) handle.sendToolResult(r.result);
      } catch (e) { out.replaceChildren(el('p', { class: 'bad', text: e.message })); }
      call.disabled = false; cancel.disabled = true; prog.hidden = true; progText.textContent = '';
    });
  }

  function renderOutcome(r, tool, ms) {
    if (r.cancelled) return el('div', { class: 'result error', role: 'region', 'aria-label': 'Call result' }, el('p', { text: 'Cancelled.' }));
    if (r.error) return el('div', { class: 'result error', role: 'region', 'aria-label': 'Call result' }, el('p', { class: 'bad', text: `Error ${r.error.code || ''} ${r.error.message}` }), json(r.error));
    const res = r.result;
    const box = el('div', { class: `result${res.isError ? ' error' : ''}`, role: 'region', 'aria-label': 'Call result' });
    box.append(el('p', { text: `${res.isError ? 'Tool error' : 'Result'} in ${ms} ms` }));
    for (const c of res.content || []) box.append(renderContent(c));
    if (res.structuredContent !== undefined) {
      box.append(el('h4', { text: 'Structured content' }), json(res.structuredContent));
      if (tool && tool.outputSchema) {
        const problems = validate(res.structuredContent, tool.outputSchema);
        box.append(problems.length
          ? el('p', { class: 'bad', text: `Does not match the output schema: ${problems.join('; ')}` })
          : el('p', { class: 'ok', text: 'Matches the output schema.' }));
      }
    }
    if (res.task) {
      const open = el('button', { type: 'button', text: 'Show tasks' });
      open.addEventListener('click', () => show('tasks'));
      box.append(el('p', { text: `Task ${res.task.taskId}: ${res.task.status}` }), open);
    }
    box.append(el('details', {}, el('summary', { text: 'Raw result' }), json(res)));
    return box;
  }

  function dataUrl(mime, b64) { return `data:${mime};base64,${b64}`; }
  function renderContent(c) {
    switch (c.type) {
      case 'text': return el('pre', { class: 'text', text: c.text });
      case 'image': return el('img', { src: dataUrl(c.mimeType, c.data), alt: `image (${c.mimeType})`, style: 'max-width: 20rem' });
      case 'audio': { const a = el('audio', { controls: true, src: dataUrl(c.mimeType, c.data), 'aria-label': `audio (${c.mimeType})` }); return a; }
      case 'resource': {
        const r = c.resource || {};
        const body = r.text !== undefined ? el('pre', { text: r.text }) : el('p', { text: `${(r.blob || '').length} base64 characters (${r.mimeType || 'binary'})` });
        return el('div', { class: 'resource' }, el('p', { text: `Embedded resource ${r.uri} ${r.mimeType || ''}` }), body);
      }
      case 'resource_link': {
        const b = el('button', { type: 'button', text: `Read ${c.uri}` });
        b.addEventListener('click', () => readResource(c.uri));
        return el('div', { class: 'resource-link' }, el('span', { text: `Resource link: ${c.name || ''} ${c.uri} ` }), b);
      }
      default: return json(c);
    }
  }

  // MCP Apps: the app of a tool, rendered by window.FerromcpApps when present.
  async function mountApp(container, tool, uri) {
    if (!window.FerromcpApps || !window.FerromcpApps.mount) {
      container.append(el('p', { text: 'The MCP Apps host is not loaded.' }));
      return null;
    }
    try {
      const r = await request('resources/read', { uri });
      if (!r.result) throw new Error(r.error ? r.error.message : 'cancelled');
      const content = (r.result.contents || [])[0] || {};
      const html = content.text !== undefined ? content.text : atob(content.blob || '');
      container.replaceChildren();
      const cfg = state.config;
      // A sandbox bound to every address (0.0.0.0, [::]) is reached by the name the page was.
      const sb = new URL(cfg.sandboxOrigin);
      const sandboxOrigin = (sb.hostname === '0.0.0.0' || sb.hostname === '[::]')
        ? `${location.protocol}//${location.hostname}:${sb.port}` : sb.origin;
      const uiMeta = (content._meta && content._meta.ui) || {};
      return window.FerromcpApps.mount(container, {
        ...(cfg.appLimits || {}),
        sandboxOrigin, sandboxPath: cfg.sandboxPath || '/sandbox.html',
        html, resourceUri: uri, resourceMeta: uiMeta, tool, toolInput: undefined,
        tools: state.tools,
        listTools: () => listAll('tools/list', 'tools'),
        callTool: async (name, args) => {
          const x = await request('tools/call', { name, arguments: args || {} });
          if (x.error) throw new Error(x.error.message);
          return x.result;
        },
        readResource: async (u) => {
          const x = await request('resources/read', { uri: u });
          if (x.error) throw new Error(x.error.message);
          return x.result;
        },
        openLink: (url) => { if (/^https?:/i.test(url)) window.open(url, '_blank', 'noopener,noreferrer'); },
        onLog: (direction, msg) => addLogRow({ kind: 'message', server: state.current, dir: direction, type: 'app', method: msg.method || '', body: JSON.stringify(msg), t: performance.now() }),
      });
    } catch (e) { container.append(el('p', { class: 'bad', text: `App: ${e.message}` })); return null; }
  }

  // ---- resources ----
  async function loadResources() {
    const detail = $('resource-detail');
    try {
      const [res, tpl] = await Promise.all([listAll('resources/list', 'resources'), listAll('resources/templates/list', 'resourceTemplates')]);
      itemList($('resource-list'), res, (r) => r.uri, (r) => readResource(r.uri));
      itemList($('template-list'), tpl, (t) => t.uriTemplate, showTemplate);
    } catch (e) { detail.replaceChildren(el('p', { class: 'bad', text: e.message })); }
  }
  async function readResource(uri) {
    show('resources');
    const d = $('resource-detail');
    const r = await request('resources/read', { uri });
    d.replaceChildren(el('h2', { text: uri }));
    const subscribe = el('button', { type: 'button', text: 'Subscribe' });
    const unsubscribe = el('button', { type: 'button', text: 'Unsubscribe' });
    subscribe.onclick = async () => { const x = await request('resources/subscribe', { uri }); status(x.error ? x.error.message : `subscribed to ${uri}`); };
    unsubscribe.onclick = async () => { const x = await request('resources/unsubscribe', { uri }); status(x.error ? x.error.message : `unsubscribed from ${uri}`); };
    d.append(subscribe, ' ', unsubscribe);
    if (r.error) { d.append(el('p', { class: 'bad', text: r.error.message })); return; }
    for (const c of r.result.contents || []) {
      if (c.text !== undefined) d.append(el('p', { text: c.mimeType || '' }), el('pre', { text: c.text }));
      else if ((c.mimeType || '').startsWith('image/')) d.append(el('img', { src: dataUrl(c.mimeType, c.blob), alt: c.uri }));
      else d.append(el('p', { text: `${(c.blob || '').length} base64 characters (${c.mimeType || 'binary'})` }));
    }
  }
  // Completion: a datalist filled by completion/complete as the user types.
  function completing(input, ref, argName, others) {
    const list = el('datalist', { id: `${input.id}-list` });
    input.setAttribute('list', list.id);
    input.addEventListener('input', async () => {
      const params = { ref, argument: { name: argName, value: input.value } };
      const ctx = others ? others() : {};
      if (Object.keys(ctx).length) params.context = { arguments: ctx };
      const r = await request('completion/complete', params);
      list.replaceChildren(...((r.result && r.result.completion && r.result.completion.values) || []).map((v) => el('option', { value: v })));
    });
    return list;
  }
  function varsOf(template) { return [...template.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(',').map((v) => v.replace(/\*$|:\d+$/, ''))); }
  function showTemplate(t) {
    const d = $('resource-detail');
    d.replaceChildren(el('h2', { text: t.uriTemplate }));
    if (t.description) d.append(el('p', { text: t.description }));
    const inputs = {};
    const values = () => Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]));
    for (const v of varsOf(t.uriTemplate)) {
      const id = `tpl-${v}`;
      const input = el('input', { id });
      inputs[v] = input;
      d.append(el('div', { class: 'field' }, el('label', { for: id, text: v }), input, completing(input, { type: 'ref/resource', uri: t.uriTemplate }, v, values)));
    }
    const read = el('button', { type: 'button', text: 'Read' });
    read.onclick = () => {
      const uri = t.uriTemplate.replace(/\{[+#./;?&]?([^}]+)\}/g, (_, names) => names.split(',').map((n) => encodeURIComponent(inputs[n.replace(/\*$|:\d+$/, '')].value)).join(','));
      readResource(uri);
    };
    d.append(read);
  }

  // ---- prompts ----
  async function loadPrompts() {
    try { itemList($('prompt-list'), await listAll('prompts/list', 'prompts'), (p) => p.name, showPrompt); } catch (e) { $('prompt-detail').replaceChildren(el('p', { class: 'bad', text: e.message })); }
  }
  function showPrompt(p) {
    const d = $('prompt-detail');
    d.replaceChildren(el('h2', { text: p.title || p.name }));
    if (p.description) d.append(el('p', { text: p.description }));
    const inputs = {};
    const values = () => Object.fromEntries(Object.entries(inputs).filter(([, i]) => i.value).map(([k, i]) => [k, i.value]));
    for (const a of p.arguments || []) {
      const id = `prompt-arg-${a.name}`;
      const input = el('input', { id, required: !!a.required });
      inputs[a.name] = input;
      d.append(el('div', { class: 'field' }, el('label', { for: id, text: a.name }), input,
        a.description ? el('span', { class: 'desc', text: a.description }) : null,
        completing(input, { type: 'ref/prompt', name: p.name }, a.name, values)));
    }
    const get = el('button', { type: 'button', text: 'Get prompt' });
    const out = el('div');
    get.onclick = async () => {
      const r = await request('prompts/get', { name: p.name, arguments: values() });
      out.replaceChildren();
      if (r.error) { out.append(el('p', { class: 'bad', text: r.error.message })); return; }
      for (const m of r.result.messages || []) out.append(el('h4', { text: m.role }), renderContent(m.content));
    };
    d.append(get, out);
  }

  // ---- tasks ----
  async function loadTasks() {
    const body = $('task-table').tBodies[0];
    const r = await request('tasks/list', {});
    body.replaceChildren();
    if (r.error) {
      const note = state.servers.get(state.current) && state.servers.get(state.current).era === 'modern'
        ? ' (at 2026-07-28 the client waits for each task itself: its result is the call\'s result)' : '';
      body.append(el('tr', {}, el('td', { colspan: 4, text: `tasks/list: ${r.error.message}${note}` })));
      return;
    }
    for (const t of r.result.tasks || []) {
      const result = el('button', { type: 'button', text: 'Result' });
      const cancel = el('button', { type: 'button', text: 'Cancel task', disabled: ['completed', 'failed', 'cancelled'].includes(t.status) });
      const out = el('td', { class: 'body' });
      result.addEventListener('click', async () => {
        const x = await request('tasks/result', { taskId: t.taskId });
        out.replaceChildren(x.result ? renderOutcome({ result: x.result }, null, 0) : json(x.error));
      });
      cancel.addEventListener('click', async () => { await request('tasks/cancel', { taskId: t.taskId }); loadTasks(); });
      body.append(el('tr', {}, el('td', { text: t.taskId }), el('td', { text: t.status }), el('td', { text: t.statusMessage || '' }),
        el('td', { text: t.createdAt || '' }), el('td', {}, result, ' ', cancel), out));
    }
    if (!(r.result.tasks || []).length) body.append(el('tr', {}, el('td', { colspan: 4, text: '(no tasks)' })));
  }
  $('tasks-refresh').addEventListener('click', loadTasks);

  // ---- roots ----
  $('roots-set').addEventListener('click', async () => {
    const roots = $('roots-input').value.split('\n').map((x) => x.trim()).filter(Boolean).map((uri) => ({ uri, name: uri.split('/').filter(Boolean).pop() }));
    try { await api('/api/roots', { roots }); status(`roots set: ${roots.length}`); } catch (e) { status(e.message); }
  });

  // ---- the log ----
  const log = [];
  const MAX_ROWS = 2000;
  function addLogRow(e) {
    log.push(e);
    if (log.length > MAX_ROWS) log.shift();
    if (state.view === 'log' && !$('view-log').hidden) appendRow(e);
  }
  function appendRow(e) {
    if (!$('log-all-servers').checked && e.server !== state.current) return;
    const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    const tr = el('tr', { class: `dir-${e.dir}` }, el('td', { text: (e.t / 1000).toFixed(3) }), el('td', { text: String(e.server) }),
      el('td', { text: e.dir === 'out' ? '→ server' : '← server' }), el('td', { text: e.type }), el('td', { text: e.method }),
      el('td', { text: e.durationMs !== undefined ? e.durationMs.toFixed(1) : '' }), el('td', { class: 'body', text: body && body.length > 400 ? body.slice(0, 400) + '…' : body }));
    $('log-table').tBodies[0].append(tr);
  }
  function renderLog() { $('log-table').tBodies[0].replaceChildren(); log.forEach(appendRow); }
  $('log-all-servers').addEventListener('change', renderLog);
  $('log-clear').addEventListener('click', () => { log.length = 0; renderLog(); });

  // ---- requests from servers ----
  state.pendingSeen = 0;
  function addPending(p) {
    state.pendingSeen++;
    const round = state.roundsSince !== undefined ? state.pendingSeen - state.roundsSince : 1;
    const box = el('section', { class: 'pending', 'aria-label': `${p.request} request ${p.id}` });
    const who = state.servers.get(p.server);
    box.append(el('h3', { text: `${p.request} from #${p.server} ${who && who.serverInfo ? who.serverInfo.name : ''} (round ${round})` }));
    const answer = async (payload) => {
      try { await api('/api/answer', { id: p.id, ...payload }); } catch (e) { status(e.message); }
    };
    const btn = (text, f) => { const b = el('button', { type: 'button', text }); b.addEventListener('click', f); return b; };
    const q = p.params || {};
    if (p.request === 'elicitation' && (q.mode === 'url' || q.url)) {
      box.append(el('p', { text: q.message || '' }), el('p', {}, el('span', { text: 'The server asks you to open: ' }), el('code', { text: q.url })));
      const open = btn('Open link', () => { if (/^https?:/i.test(q.url)) window.open(q.url, '_blank', 'noopener,noreferrer'); });
      box.append(open, btn('Accept', () => answer({ result: { action: 'accept' } })), btn('Decline', () => answer({ result: { action: 'decline' } })), btn('Cancel', () => answer({ result: { action: 'cancel' } })));
    } else if (p.request === 'elicitation') {
      box.append(el('p', { text: q.message || '' }));
      const form = el('form', { 'aria-label': 'Elicitation form' });
      const f = build(q.requestedSchema || { type: 'object' }, form, `el${p.id}`);
      box.append(form, btn('Accept', () => answer({ result: { action: 'accept', content: f.value() } })), btn('Decline', () => answer({ result: { action: 'decline' } })), btn('Cancel', () => answer({ result: { action: 'cancel' } })));
    } else if (p.request === 'sampling') {
      for (const m of q.messages || []) box.append(el('h4', { text: m.role }), ...[].concat(m.content).map(renderContent));
      if (q.systemPrompt) box.append(el('p', { text: `System: ${q.systemPrompt}` }));
      const id = `sample-${p.id}`;
      const ta = el('textarea', { id, rows: 3, cols: 30 });
      box.append(el('div', { class: 'field' }, el('label', { for: id, text: 'Reply' }), ta));
      box.append(btn('Send reply', () => answer({ result: { role: 'assistant', content: { type: 'text', text: ta.value }, model: 'inspector-user', stopReason: 'endTurn' } })),
        btn('Reject', () => answer({ error: { code: -1, message: 'The user rejected the sampling request.' } })));
    } else box.append(json(q));
    box.append(el('details', {}, el('summary', { text: 'Request (JSON)' }), json(q)));
    state.pending.set(p.id, box);
    $('pending').append(box);
    $('pending-none').hidden = true;
  }
  // OAuth in the browser: the user opens the authorization URL in a new tab; the
  // authorization server sends that tab back to the inspector, which finishes the flow.
  function addSignIn(e) {
    const key = `oauth-${e.server}`;
    const box = el('section', { class: 'pending', 'aria-label': `sign-in request ${e.server}` });
    box.append(el('h3', { text: `Server #${e.server} asks you to sign in (OAuth)` }), el('p', {}, el('code', { text: e.url })));
    const b = el('button', { type: 'button', text: 'Sign in' });
    b.addEventListener('click', () => { if (/^https?:/i.test(e.url)) window.open(e.url, '_blank', 'noopener,noreferrer'); });
    box.append(b);
    state.pending.set(key, box);
    $('pending').append(box);
    $('pending-none').hidden = true;
  }
  function settle(id) {
    const box = state.pending.get(id);
    if (box) box.remove();
    state.pending.delete(id);
    $('pending-none').hidden = state.pending.size > 0;
  }

  // ---- the event stream ----
  function events() {
    const es = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`);
    es.onmessage = (m) => {
      let e; try { e = JSON.parse(m.data); } catch { return; }
      switch (e.kind) {
        case 'message': addLogRow(e); break;
        case 'progress': if (state.progress) state.progress(e); break;
        case 'pending': addPending(e); break;
        case 'settled': settle(e.id); break;
        case 'oauth': addSignIn(e); break;
        case 'oauth-done': settle(`oauth-${e.server}`); break;
        case 'connected': if (!state.servers.has(e.server.id)) addServer(e.server); break;
        case 'disconnected': dropServer(e.server); break;
        case 'refused': case 'error': status(e.message); break;
        default: break;
      }
    };
  }

  (async () => {
    try {
      state.config = await api('/api/config');
      events();
      for (const s of state.config.servers || []) addServer(s);
    } catch (e) { status(`cannot reach the inspector: ${e.message}`); }
  })();
})();
