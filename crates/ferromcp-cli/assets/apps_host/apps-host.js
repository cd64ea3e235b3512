// ferromcp's MCP Apps host (the `io.modelcontextprotocol/ui` extension, SEP-1865), host side,
// for a web page: plain JavaScript, no build step, no dependency.
//
//   var handle = window.FerromcpApps.mount(container, opts);
//
// renders a tool's app in an iframe of the sandbox proxy page (`sandbox.html`, served from a
// SEPARATE origin, `opts.sandboxOrigin`), which loads the app's HTML into an inner sandboxed
// iframe under a CSP built from the resource's `_meta.ui.csp`. This file speaks the host side
// of the apps dialect (JSON-RPC 2.0 over postMessage): `ui/initialize` (answered with the
// host's protocol version), tool input / partial input / result / cancellation, size changes,
// `ui/open-link`, `ui/message`, logs, `tools/call` and `resources/read` forwarded to the server
// after the host's checks, and `ui/resource-teardown`.
//
// Checks on everything the app sends (it is untrusted):
// - only messages whose `source` is our sandbox iframe's window AND whose `origin` is the
//   sandbox origin are read; anything else is ignored (and reported to `onLog("ignored")`);
// - a message over `maxMessageBytes` (JSON) is refused;
// - `tools/call` only for a tool of this server whose `_meta.ui.visibility` includes "app"
//   (absent = ["model", "app"]); unknown tools and model-only tools are refused;
// - app-initiated server requests (`tools/call`, `resources/read`) are rate limited
//   (`maxCallsPerMinute`) and bounded in flight (`maxPendingCalls`);
// - `ui/open-link` only for http(s) URLs, and only through `opts.openLink`, which decides
//   (its answer, or a promise of it, false = declined).
//
// opts: { sandboxOrigin, sandboxPath?, html, resourceUri, resourceMeta, tool, toolInput?,
//   tools?: Tool[] | listTools?: () => Promise<Tool[]>, callTool(name, args), readResource(uri),
//   openLink(url), onLog(direction, msg), onMessage?(params), onModelContext?(params),
//   onSizeChange?({width, height}), onRequestTeardown?(), hostContext?, hostInfo?,
//   maxMessageBytes?, maxCallsPerMinute?, maxPendingCalls?, teardownTimeoutMs?, maxHeight? }
// handle: { sendToolInput(args), sendToolInputPartial(args), sendToolResult(result),
//   sendToolCancelled(reason), setHostContext(partial), teardown(): Promise<void>, iframe }
(function () {
  "use strict";

  // The apps protocol version this host speaks (answered to every `ui/initialize`).
  var HOST_PROTOCOL_VERSION = "2026-01-26";
  // Defaults of the host's limits (mirrored in crates/ferromcp-cli/src/apps_host/mod.rs).
  var DEFAULTS = {
    maxMessageBytes: 1048576, // DEFAULT_APP_MAX_MESSAGE_BYTES: 1 MiB per app message
    maxCallsPerMinute: 60, // DEFAULT_APP_MAX_CALLS_PER_MINUTE: forwarded requests per app
    maxPendingCalls: 8, // DEFAULT_APP_MAX_PENDING_CALLS: forwarded requests in flight per app
    teardownTimeoutMs: 3000, // DEFAULT_APP_TEARDOWN_TIMEOUT_MS
    maxHeight: 4000, // the iframe never grows past this (px)
    sandboxPath: "/sandbox.html"
  };
  var INVALID_PARAMS = -32602;
  var METHOD_NOT_FOUND = -32601;
  var INTERNAL_ERROR = -32603;
  // Implementation-defined: the host refused the request (a check failed).
  var REFUSED = -32000;
  var SANDBOX_PREFIX = "ui/notifications/sandbox-";

  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  // Who may call the tool: `_meta.ui.visibility`, ["model", "app"] when absent.
  function toolVisibility(tool) {
    var ui = tool && isObject(tool._meta) ? tool._meta.ui : undefined;
    if (isObject(ui) && Array.isArray(ui.visibility)) {
      return ui.visibility.filter(function (v) { return typeof v === "string"; });
    }
    return ["model", "app"];
  }
  function appMayCall(tool) { return toolVisibility(tool).indexOf("app") !== -1; }

  // Only absolute http(s) URLs may be opened.
  function httpUrl(url) {
    if (typeof url !== "string") { return null; }
    try {
      var parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (e) { return null; }
  }

  // The JSON size of a message in bytes, or Infinity when it is not JSON or over `limit`.
  function jsonBytes(msg, limit) {
    var text;
    try { text = JSON.stringify(msg); } catch (e) { return Infinity; }
    if (typeof text !== "string") { return Infinity; }
    if (text.length > limit) { return Infinity; } // at least one byte per UTF-16 unit
    return new TextEncoder().encode(text).length;
  }

  function allowAttribute(permissions) {
    var map = { camera: "camera", microphone: "microphone", geolocation: "geolocation",
      clipboardWrite: "clipboard-write" };
    var out = [];
    if (isObject(permissions)) {
      Object.keys(map).forEach(function (k) { if (permissions[k]) { out.push(map[k]); } });
    }
    return out.join("; ");
  }

  function errorMessage(e) {
    if (e && typeof e.message === "string") { return e.message; }
    return String(e);
  }

  function mount(container, opts) {
    if (!container || !opts) { throw new Error("FerromcpApps.mount(container, opts)"); }
    var sandboxOrigin = new URL(opts.sandboxOrigin).origin;
    if (sandboxOrigin === window.location.origin) {
      throw new Error("the sandbox must be served from another origin than the host page");
    }
    var limits = {};
    Object.keys(DEFAULTS).forEach(function (k) {
      limits[k] = opts[k] !== undefined ? opts[k] : DEFAULTS[k];
    });
    var meta = isObject(opts.resourceMeta) ? opts.resourceMeta : {};
    var log = typeof opts.onLog === "function" ? opts.onLog : function () {};
    var hostContext = Object.assign({
      toolInfo: opts.tool ? { tool: opts.tool } : undefined,
      theme: "light",
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      platform: "web",
      locale: navigator.language,
      containerDimensions: { maxHeight: limits.maxHeight }
    }, isObject(opts.hostContext) ? opts.hostContext : {});

    var iframe = document.createElement("iframe");
    var name = opts.tool && (opts.tool.title || opts.tool.name);
    iframe.title = "MCP App" + (name ? ": " + name : "");
    // The proxy needs its own origin (allow-same-origin) to check and address messages; the
    // app inside it gets no origin of its own (sandbox.html builds that inner frame).
    iframe.setAttribute("sandbox", "allow-scripts allow-same-origin");
    var allow = allowAttribute(meta.permissions);
    if (allow) { iframe.setAttribute("allow", allow); }
    iframe.setAttribute("referrerpolicy", "origin");
    iframe.style.width = "100%";
    iframe.style.height = "120px";
    iframe.style.display = "block";
    iframe.style.border = meta.prefersBorder === false ? "0" : "1px solid #ccc";
    iframe.src = sandboxOrigin + limits.sandboxPath + "?host=" +
      encodeURIComponent(window.location.origin);

    var state = {
      proxyReady: false, initialized: false, torn: false, queue: [], nextId: 1,
      pending: {}, callTimes: [], inFlight: 0
    };

    function post(msg) {
      if (state.torn || !iframe.contentWindow) { return; }
      log("out", msg);
      iframe.contentWindow.postMessage(msg, sandboxOrigin);
    }
    // Host-initiated messages wait for `ui/notifications/initialized` (SEP-1865).
    function toApp(msg) {
      if (state.initialized) { post(msg); } else { state.queue.push(msg); }
    }
    function notify(method, params) { toApp({ jsonrpc: "2.0", method: method, params: params || {} }); }
    function request(method, params, timeoutMs) {
      var id = "host-" + state.nextId++;
      return new Promise(function (resolve, reject) {
        var timer = setTimeout(function () {
          delete state.pending[id];
          reject(new Error(method + " timed out"));
        }, timeoutMs);
        state.pending[id] = function (msg) {
          clearTimeout(timer);
          if (msg.error) { reject(msg.error); } else { resolve(msg.result); }
        };
        post({ jsonrpc: "2.0", id: id, method: method, params: params || {} });
      });
    }
    function reply(id, result) { post({ jsonrpc: "2.0", id: id, result: result }); }
    function fail(id, code, message) {
      post({ jsonrpc: "2.0", id: id, error: { code: code, message: message } });
    }
    function refuse(msg, reason) {
      log("refused", { reason: reason, message: msg });
      if (msg && msg.id !== undefined && msg.id !== null && msg.method !== undefined) {
        fail(msg.id, REFUSED, "refused by the host: " + reason);
      }
    }

    function knownTools() {
      if (Array.isArray(opts.tools)) { return Promise.resolve(opts.tools); }
      if (typeof opts.listTools === "function") { return Promise.resolve(opts.listTools()); }
      return Promise.resolve(opts.tool ? [opts.tool] : []);
    }

    // Rate and in-flight bounds of app-initiated server requests; a reason when over.
    function admitCall() {
      var now = Date.now();
      state.callTimes = state.callTimes.filter(function (t) { return now - t < 60000; });
      if (state.callTimes.length >= limits.maxCallsPerMinute) {
        return "rate limit: more than " + limits.maxCallsPerMinute + " calls a minute";
      }
      if (state.inFlight >= limits.maxPendingCalls) {
        return "more than " + limits.maxPendingCalls + " calls in flight";
      }
      state.callTimes.push(now);
      return null;
    }
    function forward(msg, run) {
      var over = admitCall();
      if (over) { refuse(msg, over); return; }
      state.inFlight++;
      Promise.resolve().then(run).then(function (result) {
        state.inFlight--;
        reply(msg.id, result);
      }, function (e) {
        state.inFlight--;
        if (e && e.refused) { refuse(msg, e.refused); } else { fail(msg.id, INTERNAL_ERROR, errorMessage(e)); }
      });
    }

    function initializeResult(params) {
      log("initialize", { appProtocolVersion: params.protocolVersion, appInfo: params.appInfo });
      return {
        protocolVersion: HOST_PROTOCOL_VERSION,
        hostInfo: opts.hostInfo || { name: "ferromcp-inspector", version: "1" },
        hostCapabilities: {
          openLinks: {},
          serverTools: {},
          serverResources: {},
          logging: {},
          message: { text: {} },
          updateModelContext: { text: {}, structuredContent: {} },
          sandbox: { permissions: meta.permissions || {}, csp: meta.csp || {} }
        },
        hostContext: hostContext
      };
    }

    function onRequest(msg) {
      var params = isObject(msg.params) ? msg.params : {};
      switch (msg.method) {
        case "ui/initialize":
          reply(msg.id, initializeResult(params));
          return;
        case "ping":
          reply(msg.id, {});
          return;
        case "tools/call":
          if (typeof params.name !== "string" ||
              (params.arguments !== undefined && !isObject(params.arguments))) {
            fail(msg.id, INVALID_PARAMS, "tools/call needs a name and object arguments");
            return;
          }
          forward(msg, function () {
            return knownTools().then(function (tools) {
              var tool = (tools || []).filter(function (t) { return t && t.name === params.name; })[0];
              if (!tool) { throw { refused: "unknown tool " + JSON.stringify(params.name) }; }
              if (!appMayCall(tool)) {
                throw { refused: "tool " + JSON.stringify(params.name) + " is not visible to apps" };
              }
              return opts.callTool(params.name, params.arguments || {});
            });
          });
          return;
        case "resources/read":
          if (typeof params.uri !== "string") {
            fail(msg.id, INVALID_PARAMS, "resources/read needs a uri");
            return;
          }
          forward(msg, function () { return opts.readResource(params.uri); });
          return;
        case "ui/open-link": {
          var url = httpUrl(params.url);
          if (!url || typeof opts.openLink !== "function") {
            log("refused", { reason: "only http(s) links are opened", message: msg });
            reply(msg.id, { isError: true });
            return;
          }
          Promise.resolve().then(function () { return opts.openLink(url); }).then(function (ok) {
            reply(msg.id, ok === false ? { isError: true } : {});
          }, function () { reply(msg.id, { isError: true }); });
          return;
        }
        case "ui/message":
          if (typeof opts.onMessage !== "function") { reply(msg.id, {}); return; }
          Promise.resolve().then(function () { return opts.onMessage(params); }).then(function (ok) {
            reply(msg.id, ok === false ? { isError: true } : {});
          }, function () { reply(msg.id, { isError: true }); });
          return;
        case "ui/update-model-context":
          if (typeof opts.onModelContext === "function") { opts.onModelContext(params); }
          reply(msg.id, {});
          return;
        case "ui/request-display-mode":
          reply(msg.id, { mode: hostContext.displayMode || "inline" });
          return;
        default:
          fail(msg.id, METHOD_NOT_FOUND, "method not found: " + msg.method);
      }
    }

    function onNotification(msg) {
      var params = isObject(msg.params) ? msg.params : {};
      switch (msg.method) {
        case "ui/notifications/initialized": {
          if (state.initialized) { return; }
          state.initialized = true;
          var queued = state.queue;
          state.queue = [];
          queued.forEach(post);
          return;
        }
        case "ui/notifications/size-changed": {
          var h = Number(params.height);
          if (isFinite(h) && h >= 0) {
            iframe.style.height = Math.min(Math.ceil(h), limits.maxHeight) + "px";
          }
          if (typeof opts.onSizeChange === "function") {
            opts.onSizeChange({ width: params.width, height: params.height });
          }
          return;
        }
        case "notifications/message":
          log("app-log", params);
          return;
        case "ui/notifications/request-teardown":
          if (typeof opts.onRequestTeardown === "function") { opts.onRequestTeardown(); }
          return;
        default:
          return;
      }
    }

    function onWindowMessage(event) {
      if (state.torn) { return; }
      // Only our sandbox iframe, from the sandbox origin: anything else is not the app.
      if (event.source !== iframe.contentWindow || event.origin !== sandboxOrigin) {
        log("ignored", { origin: event.origin, data: event.data });
        return;
      }
      var msg = event.data;
      if (!isObject(msg) || msg.jsonrpc !== "2.0") { log("ignored", { data: msg }); return; }
      if (jsonBytes(msg, limits.maxMessageBytes) > limits.maxMessageBytes) {
        refuse(msg, "message over " + limits.maxMessageBytes + " bytes");
        return;
      }
      if (msg.method === SANDBOX_PREFIX + "proxy-ready") {
        if (state.proxyReady) { return; }
        state.proxyReady = true;
        log("in", msg);
        var resource = { html: String(opts.html || "") };
        if (isObject(meta.csp)) { resource.csp = meta.csp; }
        if (isObject(meta.permissions)) { resource.permissions = meta.permissions; }
        post({ jsonrpc: "2.0", method: SANDBOX_PREFIX + "resource-ready", params: resource });
        return;
      }
      log("in", msg);
      if (typeof msg.method === "string") {
        if (msg.method.indexOf(SANDBOX_PREFIX) === 0) { return; }
        if (msg.id !== undefined && msg.id !== null) { onRequest(msg); } else { onNotification(msg); }
        return;
      }
      // A response to one of the host's requests.
      if (msg.id !== undefined && state.pending[msg.id]) {
        var done = state.pending[msg.id];
        delete state.pending[msg.id];
        done(msg);
      }
    }

    window.addEventListener("message", onWindowMessage);
    container.appendChild(iframe);
    if (opts.toolInput !== undefined) { notify("ui/notifications/tool-input", { arguments: opts.toolInput }); }

    function teardown() {
      if (state.torn) { return Promise.resolve(); }
      var answered = state.initialized
        ? request("ui/resource-teardown", {}, limits.teardownTimeoutMs).then(function (r) {
          log("teardown", { answered: true, result: r });
        }, function (e) {
          log("teardown", { answered: false, error: errorMessage(e) });
        })
        : Promise.resolve();
      return answered.then(function () {
        state.torn = true;
        window.removeEventListener("message", onWindowMessage);
        iframe.remove();
      });
    }

    return {
      iframe: iframe,
      sendToolInput: function (args) { notify("ui/notifications/tool-input", { arguments: args || {} }); },
      sendToolInputPartial: function (args) {
        notify("ui/notifications/tool-input-partial", { arguments: args || {} });
      },
      sendToolResult: function (result) { notify("ui/notifications/tool-result", result || {}); },
      sendToolCancelled: function (reason) {
        notify("ui/notifications/tool-cancelled", reason === undefined ? {} : { reason: String(reason) });
      },
      setHostContext: function (partial) {
        Object.assign(hostContext, partial || {});
        notify("ui/notifications/host-context-changed", partial || {});
      },
      teardown: teardown
    };
  }

  window.FerromcpApps = {
    mount: mount,
    DEFAULTS: DEFAULTS,
    HOST_PROTOCOL_VERSION: HOST_PROTOCOL_VERSION,
    toolVisibility: toolVisibility
  };
})();
