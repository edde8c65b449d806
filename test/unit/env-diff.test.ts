/** The .env reader and key diff of `pulse model diff` (runtime/plan/env-diff.ts): every form the node's parser reads. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffEnv, envValues, MASK, SECRET_LINE_MARK } from '../../runtime/plan/env-diff.js';

test('envValues reads plain, export, quoted, multi-line and commented values, and counts secret markers', () => {
  const text = [
    '# pulse-profile: best',
    'A=1',
    '  export B="two words"',
    "C='single # not a comment'",
    'D=plain # a comment',
    'E="line one',
    '  line two"',
    SECRET_LINE_MARK,
    'not a line',
  ].join('\n');
  const { values, secretLines } = envValues(text);
  assert.deepEqual(Object.fromEntries(values), { A: '1', B: 'two words', C: 'single # not a comment', D: 'plain', E: 'line one\n  line two' });
  assert.equal(secretLines, 1);
});

test('diffEnv compares normalised values, keeps the rendered order, masks secret keys, and no .env unsets all', () => {
  const running = 'A="x  y"\nB=2\nGONE=1\nVLLM_API_KEY=abc\n';
  const d = diffEnv(running, { A: 'x y', B: '3', NEW: 'n', VLLM_API_KEY: 'zzz' });
  assert.deepEqual(d.differences, [
    { key: 'B', old: '2', new: '3' },
    { key: 'NEW', old: null, new: 'n' },
    { key: 'GONE', old: '1', new: null },
  ]);
  assert.equal(diffEnv(running, { A: 'x y', B: '2', GONE: '1' }).differences.find((x) => x.key === 'VLLM_API_KEY')?.new, null);
  assert.equal(diffEnv('VLLM_API_KEY=abc\n', {}).differences[0]?.old, MASK);
  assert.deepEqual(diffEnv(null, { A: '1' }).differences, [{ key: 'A', old: null, new: '1' }]);
});

test('EXTRA_DOCKER_ARGS is diffed pair by pair: a changed -e value, an added and a removed mount; the same pairs reordered still differ', () => {
  const running = 'EXTRA_DOCKER_ARGS="-e VLLM_LOGGING_LEVEL=INFO -v /srv/a:/a:ro -e KEEP=1"\n';
  const d = diffEnv(running, { EXTRA_DOCKER_ARGS: '-e KEEP=1 -e VLLM_LOGGING_LEVEL=DEBUG -v /srv/m:/models:ro' }).differences;
  assert.deepEqual(d, [
    { key: 'EXTRA_DOCKER_ARGS -e VLLM_LOGGING_LEVEL', old: '-e VLLM_LOGGING_LEVEL=INFO', new: '-e VLLM_LOGGING_LEVEL=DEBUG' },
    { key: 'EXTRA_DOCKER_ARGS -v /models', old: null, new: '-v /srv/m:/models:ro' },
    { key: 'EXTRA_DOCKER_ARGS -v /a', old: '-v /srv/a:/a:ro', new: null },
  ]);
  const reordered = diffEnv('EXTRA_DOCKER_ARGS="-e A=1 -e B=2"\n', { EXTRA_DOCKER_ARGS: '-e B=2 -e A=1' }).differences;
  assert.deepEqual(reordered.map((x) => x.key), ['EXTRA_DOCKER_ARGS'], 'never hidden: said as the whole strings');
  const unparsable = diffEnv('EXTRA_DOCKER_ARGS="--privileged"\n', { EXTRA_DOCKER_ARGS: '-e A=1' }).differences;
  assert.deepEqual(unparsable, [{ key: 'EXTRA_DOCKER_ARGS', old: '--privileged', new: '-e A=1' }]);
});
