import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { exportsBlock, shellQuote } from '../../runtime/node/quote.js';
import { PulseError } from '../../runtime/errors.js';

/** What bash makes of `printf %s <quoted>`: the quoting is right when this is the original string. */
function echoThroughBash(value: string): string {
  return execFileSync('bash', ['-s'], { input: `printf '%s' ${shellQuote(value)}`, encoding: 'utf8' });
}

test('shellQuote survives bash for hostile strings', () => {
  for (const v of ["it's", '$(touch /tmp/pwn)', '`id`', 'a\nb', '"; rm -rf / #', '\\', '', "''", '-e', '${HOME}', '*']) {
    assert.equal(echoThroughBash(v), v);
  }
});

test('shellQuote round-trips arbitrary strings through bash (property)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0')), (s) => echoThroughBash(s) === s),
    { numRuns: 60 },
  );
});

test('shellQuote refuses a NUL byte', () => {
  assert.throws(() => shellQuote('a\0b'), (e: unknown) => e instanceof PulseError && e.kind === 'usage' && /NUL byte, which bash cannot hold/.test(e.message));
});

test('exportsBlock builds export lines and validates names', () => {
  assert.equal(exportsBlock({ A: "x'y", B_2: '' }), "export A='x'\\''y'\nexport B_2=''\n");
  assert.equal(exportsBlock({}), '');
  for (const bad of ['lower', '1A', 'A-B', 'A B', '', 'A;B']) {
    assert.throws(() => exportsBlock({ [bad]: 'v' }), (e: unknown) => e instanceof PulseError && e.kind === 'usage'
      && e.message === `invalid script variable name ${JSON.stringify(bad)}: use [A-Z_][A-Z0-9_]*`, bad);
  }
});

test('exported values reach the script unchanged', () => {
  const env = { PULSE_X: 'a b\n$c `d` \'e\'', PULSE_Y: '' };
  const out = execFileSync('bash', ['-s'], { input: `${exportsBlock(env)}printf '%s|%s' "$PULSE_X" "$PULSE_Y"`, encoding: 'utf8' });
  assert.equal(out, `${env.PULSE_X}|`);
});
