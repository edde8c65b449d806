/**
 * The header and identity of a rendered .env. The identity (body sha256, profile, pulse-overlay line) decides
 * whether up writes a new file; status uses the body sha256 to find a file somebody edited after the render.
 */
import { createHash } from 'node:crypto';
import type { EnvIdentity } from '../model/index.js';
import { SECRET_LINE_MARK } from '../secrets.js';

/** The six `# pulse-*:` header fields of a rendered .env. */
export interface EnvHeader {
  profile: string;
  node: string;
  recipe: string;
  /** `none` or `DIR overlay-sha256=<hex>`. */
  overlay: string;
  rendered: string;
  sha256: string;
}

const FIELDS = ['profile', 'node', 'recipe', 'overlay', 'rendered', 'sha256'] as const;
/** The keys the node script carries over from the old .env to the end of the new one; never part of the sha. */
export const CARRIED_SECRET_KEYS = ['HF_TOKEN', 'API_KEY'] as const;

/** sha256 hex of assignment lines, each followed by `\n`, in order (the `# pulse-sha256:` value). */
export function sha256OfLines(lines: readonly string[]): string {
  return createHash('sha256').update(lines.map((l) => `${l}\n`).join('')).digest('hex');
}

/** The assignment lines of an .env file (KEY=...), without the carried HF_TOKEN=/API_KEY= lines. */
export function assignmentLines(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l))
    .filter((l) => !CARRIED_SECRET_KEYS.some((k) => l.startsWith(`${k}=`)));
}

const HEADER_LINE = new RegExp(`^# pulse-(${FIELDS.join('|')}): `);

/**
 * The lines the integrity hash covers: every line of the text but the `# pulse-<field>:` header lines and the carried
 * secret lines (the node's SECRET_LINE_MARK, or a plain HF_TOKEN=/API_KEY= line of a text that never left the
 * node). For a file as pulse wrote it these are its assignment lines; a command, a comment, a blank line or a secret
 * line pulse cannot carry is one more line, so the hash no longer matches. prelude.sh pulse_body_sha hashes the same.
 */
export function integrityLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.filter((l) => !HEADER_LINE.test(l) && l !== SECRET_LINE_MARK && !CARRIED_SECRET_KEYS.some((k) => l.startsWith(`${k}=`)));
}

/** The integrity hash of a .env as it is now (integrityLines): its header's sha256 when pulse wrote it and nobody edited it. */
export function envBodySha256(text: string): string {
  return sha256OfLines(integrityLines(text));
}

/** The `# pulse-*:` header of a rendered .env, or null when the file was not rendered by pulse. */
export function parseEnvHeader(text: string): EnvHeader | null {
  const found: Partial<Record<(typeof FIELDS)[number], string>> = {};
  for (const line of text.split('\n')) {
    const m = /^# pulse-([a-z0-9]+): (.*)$/.exec(line);
    if (!m) continue;
    const key = m[1] as (typeof FIELDS)[number];
    if ((FIELDS as readonly string[]).includes(key) && found[key] === undefined) found[key] = m[2] ?? '';
  }
  if (FIELDS.some((f) => found[f] === undefined)) return null;
  return found as EnvHeader;
}

/** The identity written in a rendered .env's header, or null when it has no complete pulse header. */
export function identityOf(text: string): EnvIdentity | null {
  const h = parseEnvHeader(text);
  return h ? { sha256: h.sha256, profile: h.profile, overlay: h.overlay } : null;
}

/** Whether two identities are the same (then up writes no new file). */
export function sameIdentity(a: EnvIdentity | null | undefined, b: EnvIdentity | null | undefined): boolean {
  return !!a && !!b && a.sha256 === b.sha256 && a.profile === b.profile && a.overlay === b.overlay;
}
