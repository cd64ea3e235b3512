// Loads a package of the TypeScript SDK v2 install (the node_modules directory named by
// MCP_SDK_V2_NODE_MODULES, installed by .ci/interop.sh from package-lock.json) through the
// `import` condition of its package.json `exports`, so no bare specifier has to resolve from
// this directory.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const modules = process.env.MCP_SDK_V2_NODE_MODULES;
if (!modules) {
  console.log('FAIL run: set MCP_SDK_V2_NODE_MODULES to the node_modules directory with @modelcontextprotocol/client and /server');
  process.exit(1);
}

/** The version of an installed package. */
export function versionOf(pkg) {
  return JSON.parse(readFileSync(join(modules, pkg, 'package.json'), 'utf8')).version;
}

/** Imports `pkg` (subpath `sub`, default `.`) from the install. */
export async function load(pkg, sub = '.') {
  const dir = join(modules, pkg);
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  let entry = meta.exports?.[sub] ?? (sub === '.' ? meta.module ?? meta.main : undefined);
  while (entry && typeof entry === 'object') entry = entry.import ?? entry.default;
  if (typeof entry !== 'string') throw new Error(`${pkg}: no ESM entry for ${sub}`);
  return import(pathToFileURL(join(dir, entry)).href);
}
