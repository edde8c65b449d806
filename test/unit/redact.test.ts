/**
 * runtime/secrets.ts, the controller's redaction of text bound for workflow history and the node state files, and the
 * secret-key test of the env diff's mask. The node redacts by value first (prelude.sh); this is the second line, by
 * key. Written from the mutation report (bench/mutation.md): no unit test reached it before.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { isSecretKey, redactSecrets, SECRET_COMMENT_MARK, SECRET_KEYS, SECRET_LINE_MARK, SECRET_OTHER_MARK } from '../../runtime/secrets.js';
import { REPO_ROOT } from '../helpers/paths.js';

test('redactSecrets: every KEY=value of a secret key, anywhere in the text and each time, keeps its key and loses its value', () => {
  assert.equal(redactSecrets('HF_TOKEN=hf_abc'), 'HF_TOKEN=<redacted>');
  assert.equal(redactSecrets('a API_KEY=k1 b\nVLLM_API_KEY=v1\tHF_TOKEN=h1,x'), 'a API_KEY=<redacted> b\nVLLM_API_KEY=<redacted>\tHF_TOKEN=<redacted>');
  assert.equal(redactSecrets('HF_TOKEN=a HF_TOKEN=b'), 'HF_TOKEN=<redacted> HF_TOKEN=<redacted>', 'every occurrence, not the first');
  assert.equal(redactSecrets("x='API_KEY=k1' \"HF_TOKEN=h1\""), "x='API_KEY=<redacted>' \"HF_TOKEN=<redacted>\"", 'the value ends at a quote');
  assert.equal(redactSecrets('API_KEY=k1 rest'), 'API_KEY=<redacted> rest', 'the value ends at white space');
});

test('redactSecrets: a quoted value goes whole, to its closing quote or, cut, to the end of the line', () => {
  assert.equal(redactSecrets('HF_TOKEN="hf_x y" next'), 'HF_TOKEN=<redacted> next');
  assert.equal(redactSecrets("API_KEY='k 1' next"), 'API_KEY=<redacted> next');
  assert.equal(redactSecrets('VLLM_API_KEY="cut off\nnext line'), 'VLLM_API_KEY=<redacted>\nnext line');
  assert.equal(redactSecrets('HF_TOKEN=\'\''), 'HF_TOKEN=<redacted>');
});

test('redactSecrets: a longer key that ends in a secret key\'s name is another key; other text is untouched', () => {
  for (const t of ['MY_API_KEY=visible', 'XHF_TOKEN=visible', 'HF_TOKEN visible', 'HF_TOKEN=', 'hf_token=visible', '']) {
    assert.equal(redactSecrets(t), t, t);
  }
  assert.equal(redactSecrets('(API_KEY=k)'), '(API_KEY=<redacted>', 'a word boundary before the key is enough');
});

test('isSecretKey: exactly the three keys', () => {
  assert.deepEqual([...SECRET_KEYS].sort(), ['API_KEY', 'HF_TOKEN', 'VLLM_API_KEY']);
  for (const k of SECRET_KEYS) assert.equal(isSecretKey(k), true, k);
  for (const k of ['MY_API_KEY', 'HF_TOKENS', 'api_key', '', 'PORT']) assert.equal(isSecretKey(k), false, k);
});

test('the node and the controller share the secret keys and the public-text markers (prelude.sh prints them, restore and status read them)', () => {
  const prelude = readFileSync(path.join(REPO_ROOT, 'runtime', 'scripts', 'prelude.sh'), 'utf8');
  const printed = [...prelude.matchAll(/print "((?:# )?@@PULSE_SECRET_[A-Z]+@@)"/g)].map((m) => m[1]);
  assert.deepEqual(printed.sort(), [SECRET_COMMENT_MARK, SECRET_LINE_MARK, SECRET_OTHER_MARK].sort(), 'the markers prelude.sh public mode prints');
  const named = /function names_secret\([^)]*\) \{[^}]*?\(((?:[A-Z_]+\|)+[A-Z_]+)\)/.exec(prelude);
  assert.deepEqual(named?.[1]?.split('|'), [...SECRET_KEYS], 'the keys prelude.sh names_secret matches');
});
