import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { RecordParser, parseRecordLine, parseRecords } from '../../runtime/node/records.js';
import { readScript } from '../../runtime/node/script.js';
import { shellQuote } from '../../runtime/node/quote.js';
import type { PulseRecord } from '../../runtime/node/types.js';

test('parses records and ignores everything else', () => {
  const out = parseRecords('log line\n@pulse {"kind":"a","n":1}\n@pulse not json\n@pulse {"n":2}\n@pulse []\n  @pulse {"kind":"x"}\n@pulse {"kind":"b"}\r\n@pulse {"kind":""}\n@pulse {"kind":"c"}');
  assert.deepEqual(out.map((r) => r.kind), ['a', 'b', 'c']);
  assert.equal(parseRecordLine('@pulse null'), null);
  assert.equal(parseRecordLine('@pulse {"kind":5}'), null);
});

test('keeps partial lines across chunks, including split UTF-8', () => {
  const got: PulseRecord[] = [];
  const p = new RecordParser((r) => got.push(r));
  const bytes = Buffer.from('@pulse {"kind":"ä","v":"ü"}\n@pulse {"kind":"z"}\n');
  for (const b of bytes) p.push(Buffer.from([b]));
  p.end();
  assert.deepEqual(got, [{ kind: 'ä', v: 'ü' }, { kind: 'z' }]);
});

test('never throws on garbage, whatever the chunking (fuzz)', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string(), fc.constant('@pulse {"kind":"k"}\n'), fc.constant('\n'), fc.uint8Array().map((a) => Buffer.from(a).toString('latin1')))), (chunks) => {
      const p = new RecordParser(() => undefined);
      for (const c of chunks) p.push(c);
      p.end();
      return true;
    }),
    { numRuns: 300 },
  );
});

test('a valid record survives any split into chunks (property)', () => {
  fc.assert(
    fc.property(fc.string(), fc.array(fc.nat(), { maxLength: 5 }), (value, cuts) => {
      const line = `noise\n@pulse ${JSON.stringify({ kind: 'r', value })}\nmore`;
      const points = [...new Set(cuts.map((c) => c % (line.length + 1)))].sort((a, b) => a - b);
      const got: PulseRecord[] = [];
      const p = new RecordParser((r) => got.push(r));
      let last = 0;
      for (const pt of [...points, line.length]) {
        p.push(line.slice(last, pt));
        last = pt;
      }
      p.end();
      return got.length === 1 && got[0]?.value === value;
    }),
    { numRuns: 200 },
  );
});

test('prelude pulse_record escapes any value into valid JSON (property)', () => {
  const prelude = readScript('prelude');
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }).filter((s) => !s.includes('\0')), fc.integer(), (s, n) => {
      const out = execFileSync('bash', ['-s'], { input: `${prelude}\npulse_record t v=${shellQuote(s)} n:=${n} b:=true x:=${shellQuote(s)}`, encoding: 'utf8' });
      const recs = parseRecords(out).filter((r) => r.kind === 't');
      const clean = s.replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f]/g, '');
      const numeric = /^(-?[0-9]+(\.[0-9]+)?|true|false|null)$/.test(s);
      return recs.length === 1 && recs[0]?.v === clean && recs[0]?.n === n && recs[0]?.b === true && (numeric || recs[0]?.x === clean);
    }),
    { numRuns: 40 },
  );
});

test('pulse_json_to sets, without a subshell, what pulse_json_str prints, for keys and kinds too (property)', () => {
  const prelude = readScript('prelude');
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }).filter((s) => !s.includes('\0') && !s.includes('=')), (s) => {
      const q = shellQuote(s);
      // v is read back in this shell: set in a subshell, it would be empty here. The key is k_…_ so that it is never
      // `kind` (a second kind would win in JSON.parse) and never ends in `:` (a typed key=value, a number here).
      const script = `${prelude}\npulse_json_to v ${q}; printf '%s\\n' "$v"; pulse_json_str ${q}; printf '\\n'\npulse_record ${shellQuote(`t${s}`)} ${shellQuote(`k_${s}_`)}=1`;
      const out = execFileSync('bash', ['-s'], { input: script, encoding: 'utf8' }).split('\n');
      const clean = s.replace(/[\u0001-\u0008\u000b\u000c\u000e-\u001f]/g, '');
      const [set, printed] = [out[1], out[2]];
      const rec = parseRecords(out.slice(3).join('\n'))[0];
      return set === printed && JSON.parse(set ?? '') === clean && rec?.kind === `t${clean}` && rec[`k_${clean}_`] === '1';
    }),
    { numRuns: 40 },
  );
});
