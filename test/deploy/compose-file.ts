/**
 * Reading docker-compose.yml for the deploy checks: the parsed file, and small accessors for the long and short
 * forms compose allows (environment as map or list, ports and volumes as strings or objects).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Service = Record<string, Json>;
export interface Compose {
  name?: string;
  services: Record<string, Service>;
  volumes?: Record<string, Json>;
  secrets?: Record<string, { file?: string; environment?: string }>;
  [k: string]: Json | undefined;
}

export function loadCompose(root: string): { text: string; compose: Compose } {
  const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  const doc = parseDocument(text, { uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) throw new Error(`docker-compose.yml: ${doc.errors.map((e) => e.message).join('; ')}`);
  return { text, compose: doc.toJS({ maxAliasCount: 100 }) as Compose };
}

/** environment as a map, from either `KEY: value` or `- KEY=value`. */
export function envOf(service: Service): Record<string, string> {
  const env = service['environment'];
  if (env === undefined || env === null) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((e) => {
      const s = String(e);
      const i = s.indexOf('=');
      return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
    }));
  }
  return Object.fromEntries(Object.entries(env as Record<string, Json>).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

/** `${VAR:-default}` → default, `${VAR}` → '' (what compose substitutes with an empty environment). */
export function withDefaults(s: string): string {
  return s.replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_m, _name: string, def: string | undefined) => def ?? '');
}

/** Every `${VAR...}` the file references, with its default (undefined when none). */
export function referencedVars(text: string): Map<string, string | undefined> {
  const vars = new Map<string, string | undefined>();
  for (const m of text.matchAll(/(?<!\$)\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g)) vars.set(m[1]!, m[2]);
  return vars;
}

export interface PortMapping {
  hostIp: string;
  hostPort: number;
  containerPort: number;
}

/** Published ports (short "ip:host:container" or long form), after default substitution. */
export function portsOf(service: Service): PortMapping[] {
  const ports = (service['ports'] ?? []) as Json[];
  return ports.map((p) => {
    if (typeof p === 'object' && p !== null && !Array.isArray(p)) {
      return { hostIp: String(p['host_ip'] ?? ''), hostPort: Number(withDefaults(String(p['published']))), containerPort: Number(p['target']) };
    }
    const parts = withDefaults(String(p)).split(':');
    const containerPort = Number(parts.pop());
    const hostPort = Number(parts.pop() ?? containerPort);
    return { hostIp: parts.join(':'), hostPort, containerPort };
  });
}

export interface Mount {
  type: 'volume' | 'bind';
  source: string;
  target: string;
  readOnly: boolean;
}

/** Volumes of a service: a source without a path prefix is a named volume. */
export function mountsOf(service: Service): Mount[] {
  const vols = (service['volumes'] ?? []) as Json[];
  return vols.map((v) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      return { type: v['type'] === 'bind' ? 'bind' : 'volume', source: String(v['source']), target: String(v['target']), readOnly: v['read_only'] === true };
    }
    const [source = '', target = '', mode = ''] = String(v).split(':');
    const isPath = /^[./~]|^\$\{/.test(source);
    return { type: isPath ? 'bind' : 'volume', source, target, readOnly: mode.split(',').includes('ro') };
  });
}

/** Image reference split into repository and tag (no tag → ''). */
export function imageTag(image: string): { repo: string; tag: string } {
  const at = image.indexOf('@');
  const ref = at < 0 ? image : image.slice(0, at);
  const colon = ref.lastIndexOf(':');
  if (colon < 0 || ref.slice(colon).includes('/')) return { repo: ref, tag: '' };
  return { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) };
}
