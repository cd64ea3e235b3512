// Forms generated from JSON Schemas: tool arguments and elicitation requests. Each
// property becomes an input labelled by its name; what the generator cannot express
// (references, combinators, arrays of objects) falls back to raw JSON.
'use strict';
(function () {
  let seq = 0;
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'text') e.textContent = v; else e.setAttribute(k, v === true ? '' : v);
    }
    for (const k of kids) if (k) e.append(k);
    return e;
  };

  function mainType(s) {
    let t = s.type;
    if (Array.isArray(t)) t = t.find((x) => x !== 'null') || 'null';
    if (!t && s.properties) t = 'object';
    if (!t && (s.enum || s.const !== undefined)) t = 'string';
    return t;
  }

  // The choices of an enum-like schema: [{value, label}] or null.
  function choices(s) {
    if (Array.isArray(s.enum)) {
      const names = s.enumNames || [];
      return s.enum.map((v, i) => ({ value: v, label: names[i] || String(v) }));
    }
    const alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts) && alts.length && alts.every((a) => a && a.const !== undefined)) {
      return alts.map((a) => ({ value: a.const, label: a.title || String(a.const) }));
    }
    return null;
  }

  function isSimple(s) {
    if (!s || typeof s !== 'object') return false;
    if (s.$ref || s.allOf || s.not) return false;
    if ((s.oneOf || s.anyOf) && !choices(s)) return false;
    const t = mainType(s);
    if (t === 'array') {
      const it = s.items || {};
      return !!choices(it) || ['string', 'number', 'integer', 'boolean'].includes(mainType(it));
    }
    if (t === 'object') return Object.values(s.properties || {}).every(isSimple);
    return ['string', 'number', 'integer', 'boolean'].includes(t);
  }

  // One property: returns {node, get()} where get() returns undefined for "not given".
  function field(name, s, required, prefix) {
    const id = `${prefix}-${++seq}`;
    const t = mainType(s);
    const label = el('label', { for: id, text: name });
    const desc = s.description ? el('span', { class: 'desc', id: id + '-d', text: s.description }) : null;
    const wrap = el('div', { class: 'field' });
    const def = s.default;
    const ch = choices(s);
    if (t === 'object') {
      const fs = el('fieldset', { id });
      fs.append(el('legend', { text: name }));
      if (desc) fs.append(desc);
      const inner = build(s, fs, prefix);
      return { node: fs, get: () => inner.value() };
    }
    if (ch) {
      const sel = el('select', { id, 'aria-describedby': desc && desc.id });
      if (!required || def === undefined) sel.append(el('option', { value: '', text: '' }));
      ch.forEach((c, i) => {
        const o = el('option', { value: String(i), text: c.label });
        if (def !== undefined && JSON.stringify(def) === JSON.stringify(c.value)) o.selected = true;
        sel.append(o);
      });
      wrap.append(label, sel);
      if (desc) wrap.append(desc);
      return { node: wrap, get: () => (sel.value === '' ? undefined : ch[Number(sel.value)].value) };
    }
    if (t === 'boolean') {
      const box = el('input', { id, type: 'checkbox', 'aria-describedby': desc && desc.id });
      box.checked = def === true;
      const row = el('div', { class: 'field' }, el('span', {}, box, ' ', label));
      if (desc) row.append(desc);
      return { node: row, get: () => (box.checked ? true : (required || def !== undefined ? false : undefined)) };
    }
    if (t === 'array') {
      const it = s.items || {};
      const ich = choices(it);
      if (ich) {
        const fs = el('fieldset', { id });
        fs.append(el('legend', { text: name }));
        const boxes = ich.map((c) => {
          const bid = `${id}-${ich.indexOf(c)}`;
          const b = el('input', { type: 'checkbox', id: bid });
          if (Array.isArray(def) && def.some((d) => JSON.stringify(d) === JSON.stringify(c.value))) b.checked = true;
          fs.append(el('span', {}, b, el('label', { for: bid, text: c.label }), ' '));
          return b;
        });
        if (desc) fs.append(desc);
        return { node: fs, get: () => { const v = ich.filter((c, i) => boxes[i].checked).map((c) => c.value); return v.length || required ? v : undefined; } };
      }
      const ta = el('textarea', { id, rows: 2, placeholder: 'one item a line', 'aria-describedby': desc && desc.id });
      if (Array.isArray(def)) ta.value = def.join('\n');
      wrap.append(label, ta);
      if (desc) wrap.append(desc);
      const itemType = mainType(it);
      return {
        node: wrap,
        get: () => {
          if (!ta.value.trim()) return required ? [] : undefined;
          return ta.value.split('\n').filter((x) => x.trim() !== '').map((x) =>
            itemType === 'number' || itemType === 'integer' ? Number(x) : itemType === 'boolean' ? x.trim() === 'true' : x);
        },
      };
    }
    const input = el('input', { id, 'aria-describedby': desc && desc.id });
    if (t === 'number' || t === 'integer') {
      input.type = 'number';
      input.step = t === 'integer' ? '1' : 'any';
      if (s.minimum !== undefined) input.min = s.minimum;
      if (s.maximum !== undefined) input.max = s.maximum;
    } else {
      input.type = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[s.format] || 'text';
      if (s.maxLength) input.maxLength = s.maxLength;
    }
    if (def !== undefined && def !== null) input.value = String(def);
    if (required) input.required = true;
    wrap.append(label, input);
    if (desc) wrap.append(desc);
    return {
      node: wrap,
      get: () => {
        if (input.value === '') return undefined;
        if (t === 'number' || t === 'integer') return Number(input.value);
        if (s.format === 'date-time' && input.type === 'datetime-local') return new Date(input.value).toISOString();
        return input.value;
      },
    };
  }

  // Builds a form for an object schema into `container`. Returns {value(), raw}.
  function build(schema, container, prefix) {
    prefix = prefix || 'f';
    schema = schema || { type: 'object' };
    const required = new Set(schema.required || []);
    const fields = [];
    for (const [name, s] of Object.entries(schema.properties || {})) {
      const f = field(name, s || {}, required.has(name), prefix);
      container.append(f.node);
      fields.push([name, f]);
    }
    return {
      value() {
        const out = {};
        for (const [name, f] of fields) {
          const v = f.get();
          if (v !== undefined) out[name] = v;
        }
        return out;
      },
    };
  }

  // A tool form: generated fields when the schema allows, and a raw-JSON fallback.
  function toolForm(schema, container, prefix) {
    const simple = isSimple(schema || { type: 'object' });
    const generated = el('div', { class: 'generated' });
    const rawId = `${prefix}-raw-${++seq}`;
    const toggleId = `${prefix}-rawt-${++seq}`;
    const toggle = el('input', { type: 'checkbox', id: toggleId });
    const raw = el('textarea', { id: rawId, rows: 5, cols: 60 });
    const rawWrap = el('div', { class: 'field' }, el('label', { for: rawId, text: 'Arguments (JSON)' }), raw);
    const form = simple ? build(schema, generated, prefix) : null;
    container.append(generated, el('div', {}, toggle, el('label', { for: toggleId, text: 'Raw JSON' })), rawWrap);
    const sync = () => {
      const useRaw = toggle.checked || !simple;
      if (useRaw && form && !raw.value) raw.value = JSON.stringify(form.value(), null, 2);
      generated.hidden = useRaw;
      rawWrap.hidden = !useRaw;
    };
    if (!simple) { toggle.checked = true; raw.value = '{}'; }
    toggle.addEventListener('change', sync);
    sync();
    return {
      value() {
        if (toggle.checked || !simple) return JSON.parse(raw.value || '{}');
        return form.value();
      },
    };
  }

  // A small validator for structured content against an output schema: types, required,
  // properties, enums, items. Returns a list of problems.
  function validate(value, s, path, out) {
    path = path || '$'; out = out || [];
    if (!s || typeof s !== 'object') return out;
    const t = s.type;
    const types = Array.isArray(t) ? t : t ? [t] : [];
    const actual = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    if (types.length) {
      const ok = types.some((x) => x === actual || (x === 'integer' && Number.isInteger(value)) || (x === 'number' && actual === 'number'));
      if (!ok) { out.push(`${path}: expected ${types.join('|')}, got ${actual}`); return out; }
    }
    if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) out.push(`${path}: not one of the enum`);
    if (actual === 'object') {
      for (const r of s.required || []) if (!(r in value)) out.push(`${path}.${r}: required`);
      for (const [k, sub] of Object.entries(s.properties || {})) if (k in value) validate(value[k], sub, `${path}.${k}`, out);
    }
    if (actual === 'array' && s.items) value.forEach((v, i) => validate(v, s.items, `${path}[${i}]`, out));
    return out;
  }

  window.FerromcpForms = { build, toolForm, validate, el };
})();
