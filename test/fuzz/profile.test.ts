/**
 * Fuzz: the profile parser and the render behind it. Generated profiles mix the real keys and directives with
 * hostile values; each one is either rejected with one `file:line: message` line, or accepted and rendered into an
 * .env that bash sources verbatim (checked statically for every case, and by really sourcing a sample).
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { loadNodesConfig, parseNodesConfig, parseProfile, type Profile } from '../../runtime/config/index.js';
import { MULTILINE_KEYS, RECIPE_KEYS } from '../../runtime/config/profile-rules.js';
import { buildUpPlan } from '../../runtime/plan/plan.js';
import { RUNS, assertGoodRejection, assertSourcesVerbatim, assertStaticallySafe, hostile, mixed, scratch } from './gen.js';
import { REPO_ROOT } from '../helpers/paths.js';

const FILE = 'fuzz/p.env';
const tmp = scratch('pulse-fuzz-profile-');
after(() => tmp.cleanup());
const config = loadNodesConfig(path.join(REPO_ROOT, 'test/fixtures/nodes/fleet.json'));
const VARS = ['{{tritonCache}}', '{{mtpShardR2}}', '{{recipeDir}}', '{{captureDir}}'];

const keyArb = fc.oneof(
  { arbitrary: fc.constantFrom(...RECIPE_KEYS), weight: 10 },
  { arbitrary: fc.constantFrom('HF_HOME', 'BIND', 'PORT', 'REQUIRE_IDLE_GPU', 'HF_TOKEN', 'API_KEY', 'TP1_CONTAINER_NAME'), weight: 1 },
  { arbitrary: fc.constantFrom('export A', 'A B', '1A', 'A-B', ' A', 'A;B', '$A', 'PATH', 'BASH_ENV', 'IFS'), weight: 1 },
);

function dockerArgsArb(canary: string): fc.Arbitrary<string> {
  const piece = mixed(canary, VARS);
  const pair = fc.oneof(
    fc.tuple(fc.constantFrom('VLLM_X', 'A_1', 'HF_TOKEN', 'A-B', '1A'), piece).map(([n, v]) => `-e ${n}=${v}`),
    fc.tuple(fc.constantFrom(...VARS, '/src', 'rel', '/a b'), fc.constantFrom('/dst', '/triton-cache', '/x/', 'rel', '/root/.cache/huggingface'), fc.constantFrom('', ':ro', ':rw', ':zz'))
      .map(([s, d, m]) => `-v ${s}:${d}${m}`),
    { arbitrary: piece, weight: 1 },
  );
  return fc.array(pair, { maxLength: 5 }).map((ps) => ps.join('\n  '));
}

function assignmentArb(canary: string): fc.Arbitrary<string> {
  const value = mixed(canary, VARS);
  return fc
    .tuple(keyArb, fc.nat(5), value, dockerArgsArb(canary), fc.constantFrom('', ' # note', ' x', '  #'))
    .map(([key, style, v, docker, trailer]) => {
      const multiValue = key === 'EXTRA_DOCKER_ARGS' ? docker : v;
      if (style === 0) return `${key}=${v}${trailer}`;
      if (style === 1 || style === 2) return `${key}="${(MULTILINE_KEYS as readonly string[]).includes(key) ? multiValue : v}"${trailer}`;
      if (style === 3) return `${key}="\n  ${multiValue}\n"${trailer}`;
      if (style === 4) return `${key}='${v}'`;
      return `${key}="${v}`;
    });
}

function directiveArb(canary: string): fc.Arbitrary<string> {
  const name = fc.constantFrom('recipe', 'status', 'runnable', 'mkdir', 'proof', 'client', 'description', 'bogus');
  const value = fc.oneof(
    fc.constantFrom('qwen38-flash', 'stable', 'experimental', 'true', 'false', ...VARS, '{{tritonCache}}/sub', '/srv/dir', 'rel/dir'),
    mixed(canary, VARS),
  );
  return fc.tuple(name, value, fc.boolean()).map(([n, v, colon]) => `# pulse-${n}${colon ? ':' : ''} ${v}`);
}

function profileArb(canary: string): fc.Arbitrary<string> {
  const line = fc.oneof(
    { arbitrary: assignmentArb(canary), weight: 10 },
    { arbitrary: directiveArb(canary), weight: 3 },
    { arbitrary: fc.constantFrom('', '# a comment', '   ', 'echo hi', 'source x', '. ./x'), weight: 1 },
    { arbitrary: hostile(canary), weight: 1 },
  );
  return fc
    .tuple(fc.boolean(), fc.array(line, { maxLength: 12 }))
    .map(([withRecipe, lines]) => [...(withRecipe || lines.length === 0 ? ['# pulse-recipe: qwen38-flash'] : []), ...lines].join('\n'));
}

/** Parse → plan (render) → checks; returns the accepted plan's env or null when rejected with a good message. */
function check(text: string): { text: string; values: Record<string, string> } | null {
  let profile: Profile;
  try {
    profile = parseProfile(text, FILE);
  } catch (e) {
    const lines = text.split('\n').length;
    assertGoodRejection(e, /^fuzz\/p\.env:(\d+): \S/);
    const n = Number(/^fuzz\/p\.env:(\d+):/.exec((e as Error).message)?.[1]);
    assert.ok(n >= 1 && n <= lines, `line ${n} is outside the file (${lines} lines)`);
    return null;
  }
  try {
    const plan = buildUpPlan(config, new Map([[profile.name, profile]]), { profile: profile.name, node: 'spark2', overlay: null, overlayWins: false, yes: false, restart: false }, new Date(0));
    assertStaticallySafe(plan.env.text, plan.env.values);
    for (const d of plan.mkdirs) assert.match(d, /^\/[A-Za-z0-9_./:=,@+%-]*$/);
    return { text: plan.env.text, values: plan.env.values };
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    assertGoodRejection(e, /^(fuzz\/p\.env:\d+: |.*test\/fixtures\/nodes\/fleet\.json: nodes\.)|needs recipe/);
    return null;
  }
}

test(`profile parser + render: ${RUNS} generated profiles, each rejected in one file:line message or rendered safe`, () => {
  let accepted = 0;
  let sourced = 0;
  fc.assert(
    fc.property(profileArb(tmp.canary), (text) => {
      const r = check(text);
      if (r === null) return;
      accepted += 1;
      // Really source a sample in bash (every 5th accepted profile keeps the file's run time low).
      if (accepted % 5 === 1) {
        assertSourcesVerbatim(tmp.dir, tmp.canary, r.text, r.values);
        sourced += 1;
      }
    }),
    { numRuns: RUNS },
  );
  assert.ok(accepted > RUNS / 20, `too few accepted profiles (${accepted}) to exercise the render`);
  assert.ok(sourced > 10);
  assert.equal(existsSync(tmp.canary), false);
  console.log(`# profiles: ${RUNS} generated, ${accepted} accepted and rendered, ${sourced} sourced in bash`);
});

test('hostile values in an otherwise valid profile are rejected at parse, naming the line', () => {
  const base = '# pulse-recipe: qwen38-flash\nMAX_NUM_SEQS=4\n';
  for (const h of ['$(touch /tmp/x)', '`id`', 'a;b', 'a\nb', 'a"b', "a'b", '${IFS}', '*', 'a b', 'a\\b', '~root']) {
    for (const [form, line] of [
      [`MODEL=${h}`, 3],
      [`MODEL="${h}"`, 3],
      [`EXTRA_DOCKER_ARGS="-e A=${h}"`, 3],
      [`EXTRA_DOCKER_ARGS="-v /a:/b${h}"`, 3],
      [`# pulse-mkdir: /srv/${h}`, 3],
    ] as const) {
      const text = base + form;
      // Inside double quotes bash keeps ; ' * ~ literal, but start.sh pastes every value unquoted into its launch
      // script, so pulse refuses them there too (stricter than the spec). Only blanks render (word separators).
      const quotedLiteral = form.startsWith('MODEL="') && h === 'a b';
      if (quotedLiteral) {
        const r = check(text);
        assert.ok(r, `${JSON.stringify(form)} should render`);
        assertSourcesVerbatim(tmp.dir, tmp.canary, r.text, r.values);
        continue;
      }
      assert.throws(() => parseProfile(text, FILE), (e: Error) => {
        // A newline splits the line: the error may name the next one.
        assertGoodRejection(e, new RegExp(`^fuzz/p\\.env:(${line}${h.includes('\n') ? `|${line + 1}` : ''}): `));
        return true;
      }, JSON.stringify(form));
    }
  }
});

test('every key: a double-quoted value with a character bash treats specially unquoted is refused, naming the line', () => {
  const base = '# pulse-recipe: qwen38-flash\nMAX_NUM_SEQS=4\n';
  const special = ['&', '|', ';', '<', '>', '(', ')', '{', '}', '*', '?', '[', ']', '~', '#', '!', "'", '^', '\t\u0007', 'é'];
  for (const key of RECIPE_KEYS) {
    for (const c of special) {
      const text = `${key === 'MAX_NUM_SEQS' ? '# pulse-recipe: qwen38-flash\nMAX_NUM_BATCHED_TOKENS=8192\n' : base}${key}="a${c}b"\n`;
      assert.throws(() => parseProfile(text, FILE), (e: Error) => {
        assertGoodRejection(e, new RegExp(`^fuzz/p\\.env:3: ${key}: `));
        return true;
      }, `${key} with ${JSON.stringify(c)}`);
    }
  }
  // The issue's two cases.
  for (const line of ['EXTRA_VLLM_ARGS="--enable-prefix-caching & touch /tmp/x & wait"', 'KV_CACHE_DTYPE="fp8 >/tmp/x"']) {
    assert.throws(() => parseProfile(`${base}${line}\n`, FILE), (e: Error) => /^fuzz\/p\.env:3: \w+: the double-quoted value contains "[&>]"; start\.sh pastes values unquoted/.test(e.message));
  }
});

test('a node var cannot smuggle shell into a render (the loader refuses it, naming the JSON path)', () => {
  for (const h of ['$(id)', '`id`', ';id', 'a b', '"', "'", '${IFS}', '*', '\n']) {
    const raw = JSON.parse(JSON.stringify({ nodes: { n: { host: 'local', env: { HF_HOME: '/h', BIND: '127.0.0.1', PORT: '8000' }, vars: { tritonCache: `/x${h}` }, gatewayUrl: 'http://127.0.0.1:8000/v1', recipes: {} } } }));
    assert.throws(() => parseProfileConfig(JSON.stringify(raw)), (e: Error) => {
      assertGoodRejection(e, /^fuzz\/n\.json: nodes\.n\.vars\.tritonCache: /);
      return true;
    });
  }
});

function parseProfileConfig(text: string) {
  return parseNodesConfig(text, 'fuzz/n.json');
}

test('the bash oracle can fail: an unsafe .env is caught (expansion seen, canary created)', () => {
  const own = scratch('pulse-fuzz-oracle-');
  try {
    const text = `MODEL="$(touch ${own.canary})x"\n`;
    assert.throws(() => assertSourcesVerbatim(own.dir, own.canary, text, { MODEL: `$(touch ${own.canary})x` }), /bash saw MODEL=/);
    assert.equal(existsSync(own.canary), true);
    assert.throws(() => assertStaticallySafe(text, { MODEL: `$(touch ${own.canary})x` }), /unsafe value/);
    rmSync(own.canary);
    // Pasted unquoted, a glob expands: the oracle sees the words change.
    assert.throws(() => assertSourcesVerbatim(own.dir, own.canary, 'EXTRA_DOCKER_ARGS="-v /*"\n', { EXTRA_DOCKER_ARGS: '-v /*' }), /became/);
    // Any key: a value pasted unquoted redirects (the issue's KV_CACHE_DTYPE="fp8 >FILE"): the oracle sees it.
    assert.throws(() => assertSourcesVerbatim(own.dir, own.canary, `KV_CACHE_DTYPE="fp8 >${own.canary}"\n`, { KV_CACHE_DTYPE: `fp8 >${own.canary}` }), /became/);
    assert.throws(() => assertStaticallySafe(`KV_CACHE_DTYPE="fp8 >/x"\n`, { KV_CACHE_DTYPE: 'fp8 >/x' }), /KV_CACHE_DTYPE word is unsafe/);
  } finally {
    own.cleanup();
  }
});
