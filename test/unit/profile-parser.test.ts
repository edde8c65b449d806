/** Every profile rule and directive of the spec, each with a passing and a failing case (table-driven). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProfile } from '../../runtime/config/profile.js';
import { isPulseError } from '../../runtime/errors.js';

/** A profile with the required recipe directive on line 1, so `body` starts on line 2. */
const P = (body: string): string => `# pulse-recipe: qwen38-flash\n${body}\n`;

interface Case {
  name: string;
  text: string;
  /** undefined: must parse; a RegExp: the error message must match (it starts with `t.env:LINE:`). */
  error?: RegExp;
}

const rules: Case[] = [
  { name: 'quoted value with spaces', text: P('A="x y z"') },
  { name: 'quoted value with $', text: P('A="a$b"'), error: /^t\.env:2: A: the double-quoted value contains "\$"/ },
  { name: 'quoted value with a backtick', text: P('A="a`id`"'), error: /^t\.env:2: .*backtick/ },
  { name: 'quoted value with a backslash', text: P('A="a\\nb"'), error: /^t\.env:2: .*backslash/ },
  { name: 'quoted value with an inner double quote', text: P('A="a"b"'), error: /^t\.env:2: A: only a comment may follow/ },
  { name: 'quoted value then a comment', text: P('A="a b"   # why') },
  { name: 'unquoted value with every allowed character', text: P('A=aZ9_./:=,@+%-') },
  { name: 'unquoted empty value', text: P('A=') },
  { name: 'unquoted value then a comment', text: P('A=abc # why') },
  { name: 'unquoted value with ;', text: P('A=a;b'), error: /^t\.env:2: A: the unquoted value contains ";"/ },
  { name: 'unquoted value with *', text: P('A=a*'), error: /^t\.env:2: A: the unquoted value contains "\*"/ },
  { name: 'unquoted value with $', text: P('A=$HOME'), error: /^t\.env:2: A: the unquoted value contains "\$"/ },
  { name: 'unquoted value with white space', text: P('A=a b'), error: /^t\.env:2: A: an unquoted value cannot hold white space/ },
  { name: 'single-quoted value', text: P("A='x'"), error: /^t\.env:2: A: single quotes are not allowed/ },
  { name: 'EXTRA_VLLM_ARGS over lines', text: P('EXTRA_VLLM_ARGS="\n  --enable-prefix-caching\n  --max-num-seqs 4\n"') },
  { name: 'EXTRA_DOCKER_ARGS over lines', text: P('EXTRA_DOCKER_ARGS="\n  -e A=1\n  -v /a:/b:ro\n"') },
  { name: 'another key over lines', text: P('MODEL="a\nb"'), error: /^t\.env:2: MODEL: only EXTRA_DOCKER_ARGS and EXTRA_VLLM_ARGS can use more than one line/ },
  { name: 'a double quote never closed', text: P('EXTRA_VLLM_ARGS="\n --x'), error: /^t\.env:2: EXTRA_VLLM_ARGS: the double quote opened here is never closed/ },
  { name: 'text after a multi-line close', text: P('EXTRA_VLLM_ARGS="\n --x\n" junk'), error: /^t\.env:4: EXTRA_VLLM_ARGS: only a comment may follow/ },
  { name: 'docker -e pair', text: P('EXTRA_DOCKER_ARGS="-e VLLM_X=1 -e EMPTY="') },
  { name: 'docker -v pair rw', text: P('EXTRA_DOCKER_ARGS="-v /a:/b:rw -v /c:/d"') },
  { name: 'docker other flag', text: P('EXTRA_DOCKER_ARGS="--privileged"'), error: /^t\.env:2: EXTRA_DOCKER_ARGS: only -e NAME=VALUE and -v SRC:DST\[:ro\|rw\] pairs are allowed, got "--privileged"/ },
  { name: 'docker --network pair', text: P('EXTRA_DOCKER_ARGS="--network host"'), error: /pairs are allowed, got "--network"/ },
  { name: 'docker -e without =', text: P('EXTRA_DOCKER_ARGS="-e VLLM_X"'), error: /-e needs NAME=VALUE/ },
  { name: 'docker -e bad name', text: P('EXTRA_DOCKER_ARGS="-e 1X=2"'), error: /NAME must be letters/ },
  { name: 'docker -e HF_TOKEN', text: P('EXTRA_DOCKER_ARGS="-e HF_TOKEN=abc"'), error: /-e HF_TOKEN= is not allowed/ },
  { name: 'docker -e at the end', text: P('EXTRA_DOCKER_ARGS="-e A=1 -e"'), error: /-e at the end has no argument/ },
  { name: 'docker -v relative source', text: P('EXTRA_DOCKER_ARGS="-v data:/data"'), error: /SRC must be an absolute path/ },
  { name: 'docker -v relative target', text: P('EXTRA_DOCKER_ARGS="-v /data:data"'), error: /DST must be an absolute path/ },
  { name: 'docker -v bad mode', text: P('EXTRA_DOCKER_ARGS="-v /a:/b:rx"'), error: /the mode must be ro or rw/ },
  { name: 'docker -v without target', text: P('EXTRA_DOCKER_ARGS="-v /a"'), error: /-v needs SRC:DST/ },
  { name: 'docker word with ;', text: P('EXTRA_DOCKER_ARGS="-e A=1;reboot"'), error: /contains ";"/ },
  { name: 'docker pairs with placeholders', text: P('EXTRA_DOCKER_ARGS="-v {{tritonCache}}:/triton-cache -e X={{v}}"') },
  { name: 'a key set twice', text: P('A=1\nA=2'), error: /^t\.env:3: A is set again \(first on line 2\)/ },
  { name: 'HF_TOKEN', text: P('HF_TOKEN=x'), error: /^t\.env:2: HF_TOKEN is not allowed in a profile/ },
  { name: 'API_KEY', text: P('API_KEY=x'), error: /^t\.env:2: API_KEY is not allowed in a profile/ },
  { name: 'TP1_CONTAINER_NAME', text: P('TP1_CONTAINER_NAME=x'), error: /^t\.env:2: TP1_CONTAINER_NAME is not allowed/ },
  ...['HF_HOME', 'BIND', 'PORT', 'REQUIRE_IDLE_GPU'].map((k) => ({
    name: `node key ${k}`,
    text: P(`${k}=x`),
    error: new RegExp(`^t\\.env:2: ${k} is a node key`),
  })),
  ...['PATH', 'IFS', 'BASH_ENV', 'LD_PRELOAD', 'BASH_FUNC_x'].map((k) => ({
    name: `shell variable ${k}`,
    text: P(`${k}=x`),
    error: new RegExp(`^t\\.env:2: ${k} is a shell variable that changes how bash runs start\\.sh`),
  })),
  { name: 'a key that only starts like a shell variable', text: P('PATHS=x') },
  { name: '--api-key in EXTRA_VLLM_ARGS', text: P('EXTRA_VLLM_ARGS="--x --api-key abc"'), error: /^t\.env:2: EXTRA_VLLM_ARGS: --api-key is not allowed/ },
  { name: '--api-key= in EXTRA_VLLM_ARGS', text: P('EXTRA_VLLM_ARGS="--api-key=abc"'), error: /--api-key is not allowed/ },
  { name: 'another flag in EXTRA_VLLM_ARGS', text: P('EXTRA_VLLM_ARGS="--api-server-count 2"') },
  { name: 'a command line', text: P('echo hi'), error: /^t\.env:2: not a KEY=value line/ },
  { name: 'export', text: P('export A=1'), error: /^t\.env:2: not a KEY=value line/ },
  { name: 'spaces around =', text: P('A = 1'), error: /^t\.env:2: not a KEY=value line/ },
  { name: 'indented assignment', text: P('  A=1'), error: /^t\.env:2: not a KEY=value line/ },
  { name: 'a Windows line ending', text: P('A=1\r'), error: /^t\.env:2: a carriage return/ },
  { name: 'blank lines and comments', text: P('\n   \n# just a comment\nA=1') },
  { name: 'a malformed placeholder', text: P('A="{{bad name}}"'), error: /^t\.env:2: A: the value has a malformed placeholder/ },
  { name: 'an unclosed placeholder', text: P('A={{x}'), error: /malformed placeholder/ },
  { name: 'a placeholder in an unquoted value', text: P('A={{recipeDir}}/x') },
];

const directives: Case[] = [
  { name: 'pulse-recipe missing', text: 'A=1\n', error: /^t\.env:1: missing the required directive # pulse-recipe/ },
  { name: 'pulse-recipe twice', text: '# pulse-recipe: a\n# pulse-recipe: b\n', error: /^t\.env:2: pulse-recipe occurs more than one time/ },
  { name: 'pulse-recipe bad name', text: '# pulse-recipe: a b\n', error: /^t\.env:1: pulse-recipe: "a b" is not a recipe name/ },
  { name: 'pulse-status stable', text: P('# pulse-status: stable') },
  { name: 'pulse-status experimental', text: P('# pulse-status: experimental') },
  { name: 'pulse-status other', text: P('# pulse-status: beta'), error: /^t\.env:2: pulse-status: must be stable or experimental/ },
  { name: 'pulse-status twice', text: P('# pulse-status: stable\n# pulse-status: stable'), error: /^t\.env:3: pulse-status occurs more than one time/ },
  { name: 'pulse-runnable false', text: P('# pulse-runnable: false') },
  { name: 'pulse-runnable other', text: P('# pulse-runnable: no'), error: /^t\.env:2: pulse-runnable: must be true or false/ },
  { name: 'pulse-description', text: P('# pulse-description: one line, with: colons') },
  { name: 'pulse-description empty', text: P('# pulse-description:'), error: /^t\.env:2: pulse-description: needs a value/ },
  { name: 'pulse-description twice', text: P('# pulse-description: a\n# pulse-description: b'), error: /occurs more than one time/ },
  { name: 'pulse-mkdir placeholder', text: P('# pulse-mkdir: {{tritonCache}}\n# pulse-mkdir: /srv/x') },
  { name: 'pulse-mkdir relative', text: P('# pulse-mkdir: cache/x'), error: /^t\.env:2: pulse-mkdir: "cache\/x" must be an absolute path/ },
  { name: 'pulse-mkdir with a space', text: P('# pulse-mkdir: /a b'), error: /^t\.env:2: pulse-mkdir: the path contains white space/ },
  { name: 'pulse-mkdir with $', text: P('# pulse-mkdir: /a/$USER'), error: /^t\.env:2: pulse-mkdir: the path contains "\$"/ },
  { name: 'pulse-proof', text: P('# pulse-proof: MTP draft head: FP8 rowwise copy engaged') },
  { name: 'pulse-proof with a backtick', text: P('# pulse-proof: a`b'), error: /^t\.env:2: pulse-proof: the text contains a backtick/ },
  { name: 'pulse-proof empty', text: P('# pulse-proof:'), error: /pulse-proof: needs a value/ },
  { name: 'pulse-client', text: P('# pulse-client: send X-Request-Id: cap-<row>') },
  { name: 'pulse-client with a double quote', text: P('# pulse-client: say "hi"'), error: /^t\.env:2: pulse-client: the text contains a double quote/ },
  { name: 'an unknown directive', text: P('# pulse-restart: always'), error: /^t\.env:2: unknown directive pulse-restart; known: pulse-recipe/ },
  { name: 'a directive without a colon', text: P('# pulse-proof MTP'), error: /^t\.env:2: a directive needs a colon/ },
  { name: 'a comment that mentions pulse', text: P('# the pulse-ish comment') },
];

for (const c of [...rules, ...directives]) {
  test(`profile: ${c.name} ${c.error ? 'fails' : 'passes'}`, () => {
    if (!c.error) {
      parseProfile(c.text, 't.env');
      return;
    }
    assert.throws(
      () => parseProfile(c.text, 't.env'),
      (e: unknown) => isPulseError(e) && e.kind === 'config' && c.error!.test(e.message) && !e.message.includes('\n'),
    );
  });
}

test('profile: the parsed form keeps order, lines, quoting and every directive', () => {
  const p = parseProfile(
    [
      '# pulse-recipe: qwen38-dual',
      '# pulse-status: experimental',
      '# pulse-runnable: false',
      '# pulse-description: d',
      '# pulse-mkdir: {{a}}',
      '# pulse-proof: p1',
      '# pulse-proof: p2',
      '# pulse-client: c1',
      'B=1',
      'EXTRA_DOCKER_ARGS="',
      '  -e X=1',
      '"',
      'A="q"',
    ].join('\n'),
    'dir/x.env',
  );
  assert.equal(p.name, 'x');
  assert.equal(p.recipe, 'qwen38-dual');
  assert.equal(p.status, 'experimental');
  assert.equal(p.runnable, false);
  assert.equal(p.description, 'd');
  assert.deepEqual(p.mkdirs, [{ dir: '{{a}}', line: 5 }]);
  assert.deepEqual(p.proofs, ['p1', 'p2']);
  assert.deepEqual(p.clientNotes, ['c1']);
  assert.deepEqual(
    p.entries.map((e) => [e.key, e.value, e.quoted, e.line]),
    [
      ['B', '1', false, 9],
      ['EXTRA_DOCKER_ARGS', '\n  -e X=1\n', true, 10],
      ['A', 'q', true, 13],
    ],
  );
});

test('profile: defaults are stable and runnable', () => {
  const p = parseProfile(P('A=1'), 't.env');
  assert.equal(p.status, 'stable');
  assert.equal(p.runnable, true);
  assert.deepEqual(p.proofs, []);
});
