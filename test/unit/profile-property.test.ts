/**
 * Property tests of the profile parser: thousands of generated profiles (mostly near-valid, some garbage). The
 * parser never throws anything but a one-line `file:line:` config error, and never accepts a value that breaks the
 * spec's rules, checked here by an independent checker (own regexes, not the parser's helpers).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseProfile, type Profile } from '../../runtime/config/profile.js';
import { isPulseError } from '../../runtime/errors.js';
import { renderEnv } from '../../runtime/plan/render.js';
import type { NodeConfig, RecipeConfig } from '../../runtime/config/nodes.js';

const KEYS = ['IMAGE', 'MODEL', 'MAX_MODEL_LEN', 'MTP_K', 'EXTRA_DOCKER_ARGS', 'EXTRA_VLLM_ARGS', 'HF_TOKEN', 'API_KEY', 'TP1_CONTAINER_NAME', 'PORT', 'BIND', 'HF_HOME', 'REQUIRE_IDLE_GPU', 'PATH', 'BASH_ENV', 'lower_key', 'A'];
const DIRECTIVES = ['recipe', 'status', 'runnable', 'mkdir', 'proof', 'client', 'description', 'restart', 'RECIPE', ''];
/** Characters that matter to bash, plus ordinary ones. */
const ATOMS = ['a', 'Z', '9', '_', '.', '/', ':', '=', ',', '@', '+', '%', '-', ' ', '\t', '$', '`', '\\', '"', "'", ';', '|', '&', '(', ')', '<', '>', '*', '?', '#', '!', '~', '{', '}', '{{v}}', '{{tritonCache}}', '{{ bad}}', '\n', '\r', 'é', '$(id)', '-e', '-v', '--api-key'];

const atomString = (max: number) => fc.array(fc.constantFrom(...ATOMS), { maxLength: max }).map((a) => a.join(''));
const dockerWord = fc.oneof(
  fc.constantFrom('-e', '-v', '--privileged', '-e A=1', 'X=1', 'HF_TOKEN=x', '/a:/b', '/a:/b:ro', '/a:/b:rx', 'a:/b', '{{v}}:/t', '/s:/t', '/s:/t/'),
  atomString(4),
);
const dockerArgs = fc.array(dockerWord, { maxLength: 8 }).map((w) => w.join(fc.sample(fc.constantFrom(' ', '\n  ', '  '), 1)[0]));

const value = fc.oneof(
  atomString(8),
  atomString(8).map((s) => `"${s}"`),
  dockerArgs.map((s) => `"${s}"`),
  dockerArgs.map((s) => `"\n${s}\n"`),
  fc.constantFrom('"--enable-x --api-key k"', '"--api-key=k"', '""', '"a"b', "'x'"),
);
const line = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(fc.constantFrom(...KEYS), value).map(([k, v]) => `${k}=${v}`) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...DIRECTIVES), atomString(6)).map(([d, v]) => `# pulse-${d}: ${v}`) },
  { weight: 1, arbitrary: fc.constantFrom('# pulse-status: experimental', '# pulse-runnable: false', '# pulse-mkdir: {{tritonCache}}', '# pulse-proof: MTP index share: enabled', '# comment', '', '  ') },
  { weight: 1, arbitrary: atomString(10) },
);
const profileText = fc
  .tuple(fc.boolean(), fc.array(line, { maxLength: 14 }))
  .map(([withRecipe, lines]) => `${withRecipe ? '# pulse-recipe: qwen38-flash\n' : ''}${lines.join('\n')}\n`);

/* ---- the independent checker ---- */
const UNQUOTED_OK = /^[A-Za-z0-9_./:=,@+%-]*$/;
const QUOTED_BAD = /[$`\\"]/;
const FORBIDDEN = new Set(['HF_TOKEN', 'API_KEY', 'TP1_CONTAINER_NAME', 'HF_HOME', 'BIND', 'PORT', 'REQUIRE_IDLE_GPU', 'PATH', 'BASH_ENV']);
const fillSafe = (s: string): string => s.replace(/\{\{[A-Za-z][A-Za-z0-9_]*\}\}/g, '/safe');

function dockerArgsOk(v: string): boolean {
  const w = v.split(/\s+/).filter((x) => x !== '');
  if (w.length % 2 !== 0) return false;
  for (let i = 0; i < w.length; i += 2) {
    const [flag, arg] = [w[i], w[i + 1] ?? ''];
    if (!UNQUOTED_OK.test(arg)) return false;
    if (flag === '-e' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(arg) && !/^(HF_TOKEN|API_KEY)=/.test(arg)) continue;
    if (flag === '-v' && /^\/[^:]*:\/[^:]*(:ro|:rw)?$/.test(arg)) continue;
    return false;
  }
  return true;
}

function checkAccepted(p: Profile): void {
  assert.notEqual(p.recipe, '');
  const keys = p.entries.map((e) => e.key);
  assert.equal(new Set(keys).size, keys.length, 'a repeated key');
  for (const e of p.entries) {
    assert.ok(!FORBIDDEN.has(e.key), `forbidden key ${e.key}`);
    const v = fillSafe(e.value);
    assert.ok(!/\{\{|\}\}/.test(v), `malformed placeholder in ${e.key}`);
    if (e.quoted) assert.ok(!QUOTED_BAD.test(v) && !v.includes('\r'), `quoted ${e.key}=${JSON.stringify(v)}`);
    else assert.ok(UNQUOTED_OK.test(v), `unquoted ${e.key}=${JSON.stringify(v)}`);
    if (e.key !== 'EXTRA_DOCKER_ARGS' && e.key !== 'EXTRA_VLLM_ARGS') assert.ok(!v.includes('\n'), `multi-line ${e.key}`);
    if (e.key === 'EXTRA_DOCKER_ARGS') assert.ok(dockerArgsOk(v), `docker args ${JSON.stringify(v)}`);
    if (e.key === 'EXTRA_VLLM_ARGS') assert.ok(!v.split(/\s+/).some((w) => w === '--api-key' || w.startsWith('--api-key=')), '--api-key');
  }
  for (const t of [...p.proofs, ...p.clientNotes, p.description]) assert.ok(!/[$`\\"\n\r]/.test(t), `text ${JSON.stringify(t)}`);
  for (const m of p.mkdirs) assert.ok(/^\/[A-Za-z0-9_./:=,@+%-]*$/.test(fillSafe(m.dir)), `mkdir ${m.dir}`);
  assert.ok(['stable', 'experimental'].includes(p.status));
}

function parseOrError(text: string): Profile | null {
  try {
    return parseProfile(text, 't.env');
  } catch (e) {
    assert.ok(isPulseError(e), `unexpected exception: ${String(e)}`);
    assert.equal(e.kind, 'config');
    assert.match(e.message, /^t\.env:\d+: \S/);
    assert.ok(!e.message.includes('\n'), 'one line');
    return null;
  }
}

const NODE = { host: 'local', protected: false, env: { HF_HOME: '/hf', BIND: '127.0.0.1', PORT: '8000' }, vars: { v: '/v', tritonCache: '/t' }, gatewayUrl: 'http://x/', recipes: {} } as unknown as NodeConfig;
const RECIPE: RecipeConfig = { dir: '/r', start: 'start.sh', stop: 'stop.sh', container: 'c', dockerArgs: '-v /hf:/root/.cache/huggingface' };

test('property: generated profiles either parse into rule-abiding values or fail with one file:line error', () => {
  let accepted = 0;
  fc.assert(
    fc.property(profileText, (text) => {
      const p = parseOrError(text);
      if (!p) return;
      accepted += 1;
      checkAccepted(p);
      // The render of an accepted profile writes only KEY="value" lines that are safe inside double quotes.
      try {
        const r = renderEnv({ profile: p, nodeName: 'n', node: NODE, recipeName: 'qwen38-flash', recipe: RECIPE, overlay: null, overlayWins: false, now: new Date(0) });
        for (const l of r.text.split('\n').filter((x) => x !== '' && !x.startsWith('#'))) assert.match(l, /^[A-Za-z_][A-Za-z0-9_]*="[^$`\\"\n]*"$/);
      } catch (e) {
        assert.ok(isPulseError(e) && e.kind === 'config', `render: unexpected ${String(e)}`);
      }
    }),
    { numRuns: 4000, seed: 20260923 },
  );
  assert.ok(accepted > 100, `the generator must also produce valid profiles (got ${accepted})`);
});

test('property: arbitrary text never crashes the parser', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
      const p = parseOrError(`# pulse-recipe: r\n${text}`);
      if (p) checkAccepted(p);
    }),
    { numRuns: 3000, seed: 7 },
  );
});
