/**
 * Host key verification against OpenSSH known_hosts files: plain and hashed (`|1|salt|hmac`) host fields,
 * `[host]:port`, wildcards and negation, `@revoked`. `@cert-authority` lines are ignored (pulse does not accept
 * host certificates). Pure: no ssh2 here, so it is unit-testable.
 */
import { createHash, createHmac } from 'node:crypto';
import { readRegularFile } from './files.js';

export interface KnownKey {
  file: string;
  line: number;
  type: string;
  /** base64 of the public key blob. */
  key: string;
  revoked: boolean;
}

/** The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise. */
export function lookupName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

/** `SHA256:<base64, no padding>` of a key blob, as `ssh-keygen -l` prints it. */
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type string at the start of an SSH public key blob. */
export function blobType(blob: Buffer): string {
  if (blob.length < 4) return '';
  const n = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + n).toString('latin1');
}

function globMatch(pattern: string, name: string): boolean {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i').test(name);
}

function hashedMatch(field: string, name: string): boolean {
  const parts = field.split('|'); // ['', '1', salt, hash]
  if (parts.length !== 4 || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64');
  const mac = createHmac('sha1', salt).update(name).digest('base64');
  return mac === parts[3];
}

/** Whether a known_hosts host field (comma list, hashed or patterns with `!`) names `name`. */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|')) return hashedMatch(field, name);
  let hit = false;
  for (const p of field.split(',')) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), name)) return false;
    } else if (globMatch(p, name)) hit = true;
  }
  return hit;
}

/** Every key in the files for `name` (missing files are skipped; they are common for the global file). */
export function keysFor(files: string[], name: string): KnownKey[] {
  const out: KnownKey[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readRegularFile(file).toString('utf8');
    } catch {
      continue;
    }
    text.split('\n').forEach((raw, i) => {
      const fields = raw.trim().split(/\s+/);
      if (fields[0] === undefined || fields[0] === '' || fields[0].startsWith('#')) return;
      let marker = '';
      if (fields[0].startsWith('@')) marker = fields.shift() ?? '';
      const [hosts, type, key] = fields;
      if (!hosts || !type || !key || marker === '@cert-authority') return;
      if (!hostFieldMatches(hosts, name)) return;
      out.push({ file, line: i + 1, type, key, revoked: marker === '@revoked' });
    });
  }
  return out;
}

export type HostKeyVerdict =
  | { ok: true; warning: string | null }
  | { ok: false; reason: string };

/**
 * Decide on a presented host key. A changed key always refuses; a missing entry is accepted only when the user's
 * own config says StrictHostKeyChecking no/accept-new (with a warning), never silently.
 */
export function verifyHostKey(
  blob: Buffer, host: string, port: number, files: string[], strict: string,
): HostKeyVerdict {
  const name = lookupName(host, port);
  const type = blobType(blob);
  const b64 = blob.toString('base64');
  const fp = fingerprint(blob);
  const known = keysFor(files, name);
  const revoked = known.find((k) => k.revoked && k.key === b64);
  if (revoked) return { ok: false, reason: `host key ${fp} of ${name} is marked @revoked in ${revoked.file}:${revoked.line}` };
  const live = known.filter((k) => !k.revoked);
  if (live.some((k) => k.key === b64 && k.type === type)) return { ok: true, warning: null };
  const sameType = live.find((k) => k.type === type) ?? live[0];
  if (sameType) {
    return { ok: false, reason: `HOST KEY CHANGED for ${name}: the server presented ${type} ${fp}, but ${sameType.file}:${sameType.line} holds a different key. Refusing (possible man-in-the-middle); if the change is expected, remove that line and verify the new fingerprint` };
  }
  // ssh -G prints `false` for `no`.
  if (strict === 'no' || strict === 'off' || strict === 'false' || strict === 'accept-new') {
    return { ok: true, warning: `${name}: host key ${type} ${fp} is not in ${files.join(', ')}; accepted because StrictHostKeyChecking is ${strict}` };
  }
  return { ok: false, reason: `unknown host key for ${name}: ${type} ${fp} is not in ${files.join(', ')}. Verify the fingerprint and add the key (e.g. connect once with ssh) before using pulse` };
}

/** The key types known for a host, in file order (used to ask the server for a key we can verify). */
export function knownTypes(files: string[], host: string, port: number): string[] {
  return [...new Set(keysFor(files, lookupName(host, port)).filter((k) => !k.revoked).map((k) => k.type))];
}
