/**
 * The one quoting function for values that reach a node script. Every input travels as an exported variable, so
 * no value is ever pasted into shell syntax anywhere else.
 */
import { PulseError } from '../errors.js';

const NAME = /^[A-Z_][A-Z0-9_]*$/;

/** Quote a string for bash as a single-quoted word: `it's` → `'it'\''s'`. Safe for any byte except NUL. */
export function shellQuote(value: string): string {
  if (value.includes('\0')) throw new PulseError('usage', 'a script input contains a NUL byte, which bash cannot hold');
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Check an exported variable name (upper case, digits, underscore; not starting with a digit). */
export function assertEnvName(name: string): void {
  if (!NAME.test(name)) throw new PulseError('usage', `invalid script variable name ${JSON.stringify(name)}: use [A-Z_][A-Z0-9_]*`);
}

/** `export K='v'` lines, one per entry, in key order of the object. Empty string for an empty map. */
export function exportsBlock(env: Record<string, string>): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    assertEnvName(key);
    lines.push(`export ${key}=${shellQuote(String(value))}`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
