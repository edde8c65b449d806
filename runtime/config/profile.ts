/**
 * The profile parser: a small, safe part of bash (spec "Profiles"). It never executes the file; it reads
 * `KEY=value` / `KEY="value"` lines, comments and `# pulse-*` directives, and every error is `file:line: message`.
 */
import path from 'node:path';
import { PulseError } from '../errors.js';
import { DirectiveLineError, applyDirective, emptyDirectives, type Directives } from './profile-directives.js';
import { MULTILINE_KEYS, keyProblem, valueProblem } from './profile-rules.js';
import { fillPlaceholders, placeholderProblem } from './substitute.js';

/** One `KEY=value` assignment of a profile, as written. */
export interface ProfileEntry {
  key: string;
  /** The value as a template (may hold {{name}}); multi-line values keep their newlines. */
  value: string;
  quoted: boolean;
  line: number;
}

/** A parsed profile: its directives and its assignments in file order. */
export interface Profile extends Directives {
  /** File name without .env, e.g. best. */
  name: string;
  /** The file as named in errors. */
  file: string;
  entries: ProfileEntry[];
}

/** A stand-in for {{name}} while checking a template's shape: absolute, safe, neutral. */
export const PLACEHOLDER_FILL = '/pulse-var';

const ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
const DIRECTIVE = /^#\s*pulse-([A-Za-z0-9-]*)\s*:\s?(.*)$/;
const DIRECTIVE_NO_COLON = /^#\s*pulse-(recipe|status|runnable|mkdir|proof|client|description)\b/;
/** After a closing quote or an unquoted word, only white space or a comment may follow. */
const TRAILER = /^(\s+#.*|\s*)$/;

class LineError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

interface Cursor {
  lines: string[];
  i: number;
}

/** Read the value after `KEY=` (possibly over more lines); advances the cursor past the closing quote. */
function readValue(cur: Cursor, key: string, rest: string, line: number): { value: string; quoted: boolean } {
  if (rest.startsWith("'")) throw new LineError(line, `${key}: single quotes are not allowed; use double quotes`);
  if (!rest.startsWith('"')) {
    const m = /^(\S*)(.*)$/.exec(rest);
    const word = m?.[1] ?? '';
    if (!TRAILER.test(m?.[2] ?? '')) throw new LineError(line, `${key}: an unquoted value cannot hold white space; use double quotes`);
    return { value: word, quoted: false };
  }
  const body = rest.slice(1);
  const close = body.indexOf('"');
  if (close >= 0) {
    if (!TRAILER.test(body.slice(close + 1))) throw new LineError(line, `${key}: only a comment may follow the closing double quote`);
    return { value: body.slice(0, close), quoted: true };
  }
  if (!(MULTILINE_KEYS as readonly string[]).includes(key)) {
    throw new LineError(line, `${key}: only EXTRA_DOCKER_ARGS and EXTRA_VLLM_ARGS can use more than one line (or close the double quote)`);
  }
  const parts = [body];
  for (cur.i += 1; cur.i < cur.lines.length; cur.i += 1) {
    const text = cur.lines[cur.i] ?? '';
    const end = text.indexOf('"');
    if (end < 0) {
      parts.push(text);
      continue;
    }
    if (!TRAILER.test(text.slice(end + 1))) throw new LineError(cur.i + 1, `${key}: only a comment may follow the closing double quote`);
    parts.push(text.slice(0, end));
    return { value: parts.join('\n'), quoted: true };
  }
  throw new LineError(line, `${key}: the double quote opened here is never closed`);
}

/** Check one entry's template: placeholders well formed, and the shape valid with placeholders filled in. */
function checkEntry(e: ProfileEntry): void {
  const bad = placeholderProblem(e.value);
  if (bad) throw new LineError(e.line, `${e.key}: the value ${bad}`);
  const problem = valueProblem(e.key, fillPlaceholders(e.value, () => PLACEHOLDER_FILL), e.quoted);
  if (problem) throw new LineError(e.line, problem);
}

function parseLines(lines: string[]): { entries: ProfileEntry[]; directives: Directives } {
  const entries: ProfileEntry[] = [];
  const seen = new Map<string, number>();
  const directives = emptyDirectives();
  const cur: Cursor = { lines, i: 0 };
  for (; cur.i < lines.length; cur.i += 1) {
    const line = cur.i + 1;
    const text = lines[cur.i] ?? '';
    if (text.includes('\r')) throw new LineError(line, 'a carriage return (Windows line ending) is not allowed');
    if (text.trim() === '') continue;
    if (text.startsWith('#')) {
      const d = DIRECTIVE.exec(text);
      if (d) applyDirective(directives, d[1] ?? '', (d[2] ?? '').trim(), line);
      else if (DIRECTIVE_NO_COLON.test(text)) throw new LineError(line, 'a directive needs a colon: # pulse-name: value');
      continue;
    }
    const m = ASSIGN.exec(text);
    if (!m) throw new LineError(line, 'not a KEY=value line, a comment or a directive (no commands, export, indentation or spaces around =)');
    const key = m[1] ?? '';
    const kp = keyProblem(key);
    if (kp) throw new LineError(line, kp);
    const first = seen.get(key);
    if (first !== undefined) throw new LineError(line, `${key} is set again (first on line ${first}); a key can occur only one time`);
    seen.set(key, line);
    const { value, quoted } = readValue(cur, key, m[2] ?? '', line);
    const entry = { key, value, quoted, line };
    checkEntry(entry);
    entries.push(entry);
  }
  return { entries, directives };
}

/** Parse a profile's text; `file` names it in errors. Throws PulseError('config') with `file:line: message`. */
export function parseProfile(text: string, file: string, name = path.basename(file, '.env')): Profile {
  try {
    const { entries, directives } = parseLines(text.split('\n'));
    if (directives.recipe === '') throw new LineError(1, 'missing the required directive # pulse-recipe: <recipe>');
    return { name, file, entries, ...directives };
  } catch (e) {
    if (e instanceof LineError || e instanceof DirectiveLineError) throw new PulseError('config', `${file}:${e.line}: ${e.message}`);
    throw e;
  }
}
