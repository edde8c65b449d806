/**
 * The character rules every value that reaches a node must obey. start.sh sources the .env with bash and pastes
 * EXTRA_DOCKER_ARGS unquoted into a generated script, so one `$`, quote or `;` would run as code on the node.
 */

/** Characters allowed in an unquoted bash word (the spec's list): letters, digits and _ . / : = , @ + % - */
export const WORD_CHARS = /^[A-Za-z0-9_./:=,@+%-]*$/;
/** The same rule as a non-empty JSON Schema pattern (nodes.schema.json shows it to editors). */
export const WORD_PATTERN = '^[A-Za-z0-9_./:=,@+%-]+$';

/** Characters a double-quoted value must not contain: $, backtick, backslash, double quote (and any newline). */
const QUOTED_BAD = /[$`\\"\n\r]/;

function describeChar(c: string): string {
  if (c === '\n' || c === '\r') return 'a newline';
  if (c === ' ' || c === '\t') return 'white space';
  if (c === '`') return 'a backtick';
  if (c === '\\') return 'a backslash';
  if (c === '"') return 'a double quote';
  if (c === "'") return 'a single quote';
  const code = c.codePointAt(0) ?? 0;
  if (code < 0x20 || code === 0x7f) return `a control character (0x${code.toString(16)})`;
  return `"${c}"`;
}

/** Why `value` is not a safe unquoted word, or null when it is. */
export function wordProblem(value: string): string | null {
  for (const c of value) {
    if (!WORD_CHARS.test(c)) return `contains ${describeChar(c)}; only letters, digits and _ . / : = , @ + % - are allowed`;
  }
  return null;
}

/** Why `value` cannot sit inside double quotes, or null when it can. */
export function quotedProblem(value: string): string | null {
  const m = QUOTED_BAD.exec(value);
  if (m) return `contains ${describeChar(m[0])}; a double-quoted value must not contain $, a backtick, a backslash or a double quote`;
  for (const c of value) {
    const code = c.codePointAt(0) ?? 0;
    if ((code < 0x20 && c !== '\t') || code === 0x7f) return `contains ${describeChar(c)}`;
  }
  return null;
}

/**
 * What a double-quoted profile value may hold: the word characters plus blanks (and newlines, for the keys that may
 * span lines). Stricter than the spec's rule for double quotes (no $, backtick, backslash, double quote): start.sh
 * pastes every value unquoted into its generated launch script (`--kv-cache-dtype $KV_CACHE_DTYPE`,
 * `$(printf "%s " $EXTRA_VLLM_ARGS)`), where bash treats & | ; < > ( ) { } * ? [ ] ~ # ! ' ^ and any other
 * character as code, a glob, a redirect or a history/brace/tilde expansion. An allow-list, so a character nobody
 * thought of is refused too.
 */
const PASTE_CHARS = /^[A-Za-z0-9_./:=,@+%\- \t\n]*$/;

/** Why a (double-quoted, substituted) value is unsafe to paste unquoted into a bash script, or null. */
export function pasteProblem(value: string): string | null {
  const q = quotedProblem(value.replace(/\n/g, ' '));
  if (q) return q;
  for (const c of value) {
    if (!PASTE_CHARS.test(c)) {
      return `contains ${describeChar(c)}; start.sh pastes values unquoted into its launch script, so only letters, digits, blanks and _ . / : = , @ + % - are allowed`;
    }
  }
  return null;
}

/** Why a one-line text (proof, note) is unsafe to pass to a node script, or null. */
export function textProblem(value: string): string | null {
  if (value.includes('\n') || value.includes('\r')) return 'contains a newline';
  return quotedProblem(value);
}

/** Why `value` is not a safe command line of plain words separated by single spaces (gpuProbe), or null. */
export function commandProblem(value: string): string | null {
  if (value.trim() === '') return 'is empty';
  for (const word of value.split(' ')) {
    if (word === '') return 'has repeated or edge spaces; separate the words with one space';
    const p = wordProblem(word);
    if (p) return p;
  }
  return null;
}

/** Whether `host` is a loopback bind address (the gateway on another host cannot reach it). */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
