/**
 * runtime/config/safe.ts, the character rules for every value that reaches a node, with their exact messages: each
 * kind of character a rule names, the control characters only the quoted rule catches by code, the command-line and
 * loopback rules. Written from the mutation report (bench/mutation.md): these branches had no unit test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandProblem, isLoopback, pasteProblem, quotedProblem, textProblem, wordProblem } from '../../runtime/config/safe.js';

const WORD = '; only letters, digits and _ . / : = , @ + % - are allowed';
const QUOTED = '; a double-quoted value must not contain $, a backtick, a backslash or a double quote';

test('wordProblem names each kind of character it refuses', () => {
  const cases: [string, string][] = [
    ['a\nb', 'a newline'], ['a\rb', 'a newline'], ['a b', 'white space'], ['a\tb', 'white space'], ['`', 'a backtick'],
    ['\\', 'a backslash'], ['"', 'a double quote'], ["'", 'a single quote'], ['\x01', 'a control character (0x1)'],
    ['\x1f', 'a control character (0x1f)'], ['\x7f', 'a control character (0x7f)'], ['$', '"$"'], ['~', '"~"'],
  ];
  for (const [v, what] of cases) assert.equal(wordProblem(`ok${v}`), `contains ${what}${WORD}`, JSON.stringify(v));
  assert.equal(wordProblem('A-z_0.9/:=,@+%'), null);
});

test('quotedProblem: the characters bash expands inside double quotes, and every control character but a tab', () => {
  assert.equal(quotedProblem('a\nb'), `contains a newline${QUOTED}`);
  assert.equal(quotedProblem('a$b'), `contains "$"${QUOTED}`);
  assert.equal(quotedProblem('a\x01b'), 'contains a control character (0x1)');
  assert.equal(quotedProblem('a\x1fb'), 'contains a control character (0x1f)');
  assert.equal(quotedProblem('a\x7fb'), 'contains a control character (0x7f)');
  assert.equal(quotedProblem('a\tb c;d'), null, 'a tab, a blank and other punctuation are fine inside quotes');
});

test('pasteProblem: newlines are blanks, anything off the allow-list is refused; textProblem: one line only', () => {
  assert.equal(pasteProblem('--a 1\n--b 2\t3'), null);
  assert.equal(pasteProblem('a\x01'), 'contains a control character (0x1)');
  assert.match(pasteProblem('a;b') ?? '', /^contains ";"; start\.sh pastes values unquoted/);
  assert.equal(textProblem('a\nb'), 'contains a newline');
  assert.equal(textProblem('a\rb'), 'contains a newline');
  assert.equal(textProblem('MTP head: enabled (fp8)'), null);
  assert.equal(textProblem('a$b'), `contains "$"${QUOTED}`);
});

test('commandProblem: plain words separated by single spaces', () => {
  assert.equal(commandProblem('nvidia-smi -L'), null);
  assert.equal(commandProblem(''), 'is empty');
  assert.equal(commandProblem('  '), 'is empty');
  for (const v of ['nvidia-smi  -L', ' nvidia-smi', 'nvidia-smi ']) {
    assert.equal(commandProblem(v), 'has repeated or edge spaces; separate the words with one space', JSON.stringify(v));
  }
  assert.equal(commandProblem('a b;c'), `contains ";"${WORD}`);
});

test('isLoopback: localhost, ::1 and 127.0.0.0/8 only', () => {
  for (const h of ['localhost', 'LocalHost', '::1', '[::1]', '127.0.0.1', '127.10.200.3', '127.0.0.10']) assert.equal(isLoopback(h), true, h);
  for (const h of ['', '0.0.0.0', '10.127.0.1', 'x127.0.0.1', '127.0.0.1.example', '127.0.0', '127.0.0.', '127..0.1', '::2', 'localhost.example']) {
    assert.equal(isLoopback(h), false, h);
  }
});
