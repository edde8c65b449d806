/**
 * Shared generators and oracles of the fuzz tier: hostile shell fragments, mostly-valid tokens (so a good share
 * of generated inputs is accepted and reaches the render), the one-line error oracle, and the bash oracle that
 * sources a rendered .env in an empty environment and reports what bash actually saw.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { isPulseError } from '../../runtime/errors.js';

/** Generated cases per property (the issue asks for at least 10,000 per input kind). */
export const RUNS = Number(process.env['PULSE_FUZZ_RUNS'] ?? 10_000);

/** A scratch dir with a canary path that no generated input may ever create. */
export function scratch(prefix: string): { dir: string; canary: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, canary: path.join(dir, 'CANARY'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Shell injection attempts; `CANARY` is replaced by the run's canary path. */
export const HOSTILE = [
  '$(touch CANARY)',
  '`touch CANARY`',
  ';touch CANARY',
  '\ntouch CANARY\n',
  '&& touch CANARY',
  '|touch CANARY',
  '>CANARY',
  '"$(touch CANARY)"',
  "'$(touch CANARY)'",
  '${IFS}',
  '$IFS',
  '$HOME',
  '${PATH}',
  '$((1+1))',
  '*',
  '?',
  '[a-z]',
  '~',
  '{a,b}',
  '\\',
  '"',
  "'",
  '#',
  '!',
  ' ',
  '\t',
  '\r',
  '\u0000',
  '\u0007',
  '\u202e',
  'é',
  '{{',
  '}}',
  '{{nope}}',
] as const;

/** Safe pieces the rules accept in most places. */
export const SAFE = ['8', 'qwen38', '/srv/x', 'a.b', 'x=y', '0.86', 'fp8', '-', '_', '@', '+', '%', ',', ':', '/', 'A1'] as const;

export function hostile(canary: string): fc.Arbitrary<string> {
  return fc.constantFrom(...HOSTILE).map((h) => h.replaceAll('CANARY', canary));
}

/** A short text mixing mostly safe pieces with, now and then, a hostile one. */
export function mixed(canary: string, extra: readonly string[] = []): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { arbitrary: fc.constantFrom(...SAFE, ...extra), weight: 8 },
    { arbitrary: hostile(canary), weight: 2 },
    { arbitrary: fc.string({ maxLength: 4 }), weight: 1 },
  );
  return fc.array(piece, { minLength: 1, maxLength: 4 }).map((a) => a.join(''));
}

/**
 * The rejection oracle: a PulseError of kind config whose message is one line (or, for nodes.json, one line
 * per problem) and names where: every line starts with `prefix` (a file, or a file:line).
 */
export function assertGoodRejection(e: unknown, linePrefix: RegExp, kinds: readonly string[] = ['config']): void {
  if (!isPulseError(e)) throw new Error(`unexpected exception type: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  if (!kinds.includes(e.kind)) throw new Error(`unexpected error kind ${e.kind}: ${e.message}`);
  if (e.message === '') throw new Error('empty error message');
  for (const line of e.message.split('\n')) {
    if (!linePrefix.test(line)) throw new Error(`message line does not name its file and line/path (${linePrefix}): ${JSON.stringify(line)}`);
  }
}

/** Characters a rendered value may hold: what bash keeps literal inside double quotes, no control characters. */
const SAFE_IN_QUOTES = /^[^$`\\"\u0000-\u0008\u000a-\u001f\u007f]*$/;
/** A word start.sh may paste unquoted: no splitting, globbing, expansion or operators possible. */
export const SAFE_WORD = /^[A-Za-z0-9_./:=,@+%-]+$/;

/** Static check of a rendered .env text: only `# pulse-*` header lines and KEY="safe" lines. */
export function assertStaticallySafe(text: string, values: Record<string, string>): void {
  const lines = text.split('\n');
  if (lines.pop() !== '') throw new Error('the rendered .env must end with a newline');
  for (const line of lines) {
    if (line.startsWith('# pulse-')) {
      if (/[\r\u0000]/.test(line)) throw new Error(`control character in a header line: ${JSON.stringify(line)}`);
      continue;
    }
    const m = /^([A-Za-z_][A-Za-z0-9_]*)="(.*)"$/.exec(line);
    if (!m) throw new Error(`not a KEY="value" line: ${JSON.stringify(line)}`);
    const [, key = '', value = ''] = m;
    if (!SAFE_IN_QUOTES.test(value)) throw new Error(`unsafe value for ${key}: ${JSON.stringify(value)}`);
    if (values[key] !== value) throw new Error(`${key}: the line and the value map disagree`);
  }
  // start.sh pastes every value unquoted into its launch script: each word of each key must be safe there.
  for (const [key, value] of Object.entries(values)) {
    for (const w of value.split(/\s+/).filter((x) => x !== '')) {
      if (!SAFE_WORD.test(w)) throw new Error(`${key} word is unsafe unquoted: ${JSON.stringify(w)}`);
    }
  }
}

/**
 * The bash oracle: source `file` with `set -a` in `env -i bash`, print every key's value, then paste each key's
 * value unquoted into generated code (what start.sh does with every key) and print the words bash made of it.
 */
export function sourceInBash(file: string, keys: readonly string[]): { values: Record<string, string>; words: Record<string, string[]> } {
  const script = [
    'set -a; . "$1"; set +a',
    'for k in "${@:2}"; do printf "%s=%s\\0" "$k" "${!k}"; done',
    'for k in "${@:2}"; do printf "\\1%s\\0" "$k"; eval "args=( ${!k} )"; for w in "${args[@]}"; do printf "%s\\0" "$w"; done; done',
  ].join('\n');
  const out = execFileSync('/usr/bin/env', ['-i', '/bin/bash', '--noprofile', '--norc', '-c', script, 'bash', file, ...keys], {
    encoding: 'utf8',
    cwd: path.dirname(file),
  });
  const parts = out.split('\0');
  parts.pop();
  const values: Record<string, string> = {};
  const words: Record<string, string[]> = {};
  let current: string[] | null = null;
  for (const part of parts) {
    if (part.startsWith('\u0001')) words[part.slice(1)] = current = [];
    else if (current) current.push(part);
    else values[part.slice(0, part.indexOf('='))] = part.slice(part.indexOf('=') + 1);
  }
  return { values, words };
}

/** Write `text` as an .env under `dir`, source it, and check bash saw exactly the render and ran nothing. */
export function assertSourcesVerbatim(dir: string, canary: string, text: string, values: Record<string, string>): void {
  const file = path.join(dir, '.env');
  writeFileSync(file, text);
  const seen = sourceInBash(file, Object.keys(values));
  for (const [k, v] of Object.entries(values)) {
    if (seen.values[k] !== v) throw new Error(`bash saw ${k}=${JSON.stringify(seen.values[k])}, the render says ${JSON.stringify(v)}`);
  }
  for (const [k, v] of Object.entries(values)) {
    const words = v.split(/\s+/).filter((w) => w !== '');
    if (JSON.stringify(seen.words[k] ?? []) !== JSON.stringify(words)) {
      throw new Error(`unquoted ${k} became ${JSON.stringify(seen.words[k])}, expected ${JSON.stringify(words)}`);
    }
  }
  if (existsSync(canary)) throw new Error('the canary file exists: sourcing the render executed code');
}
