/**
 * Fuzz: the `@pulse` record parser against a model. Node output is untrusted; a generated stream mixes real
 * records with near-records, garbage, control characters, CRLF and invalid UTF-8, cut into arbitrary chunks.
 * The parser must never throw and must yield exactly the records the model says, in order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { RecordParser, parseRecordLine } from '../../runtime/node/records.js';
import type { PulseRecord } from '../../runtime/node/types.js';
import { RUNS } from './gen.js';

type Piece = { line: string; record: PulseRecord | null };

const jsonValue = fc.jsonValue({ maxDepth: 2 });
const realRecord: fc.Arbitrary<Piece> = fc
  .tuple(fc.string({ minLength: 1, maxLength: 12 }), fc.dictionary(fc.string({ maxLength: 6 }).filter((k) => k !== 'kind'), jsonValue, { maxKeys: 3 }), fc.boolean())
  .map(([kind, rest, crlf]) => {
    const record = { ...rest, kind } as PulseRecord;
    return { line: `@pulse ${JSON.stringify(record)}${crlf ? '\r' : ''}`, record: JSON.parse(JSON.stringify(record)) as PulseRecord };
  });

const nearMiss: fc.Arbitrary<Piece> = fc
  .oneof(
    fc.constantFrom('@pulse', '@pulse ', '@pulse {}', '@pulse []', '@pulse null', '@pulse "kind"', '@pulse {"kind":""}', '@pulse {"kind":1}', '@pulse {"kind":null}'),
    fc.constantFrom('@pulse {"kind":"x"', ' @pulse {"kind":"x"}', '@PULSE {"kind":"x"}', '@pulse  {"kind":"x"}x', 'x@pulse {"kind":"x"}', '@pulse\t{"kind":"x"}'),
    fc.string({ maxLength: 40 }).map((s) => `@pulse ${s}`),
    fc.string({ unit: 'binary', maxLength: 60 }),
  )
  .filter((s) => !s.includes('\n'))
  .map((line) => {
    // The model: what a correct parser must make of the line (near-misses that happen to be valid records count).
    let record: PulseRecord | null = null;
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.startsWith('@pulse ')) {
      try {
        const v: unknown = JSON.parse(text.slice(7));
        if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { kind?: unknown }).kind === 'string' && (v as { kind: string }).kind !== '') record = v as PulseRecord;
      } catch {
        record = null;
      }
    }
    return { line, record };
  });

const streamArb = fc.tuple(fc.array(fc.oneof({ arbitrary: realRecord, weight: 2 }, { arbitrary: nearMiss, weight: 3 }), { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), fc.boolean());

test(`record parser: ${RUNS} generated streams in random chunks yield exactly the model's records, never throwing`, () => {
  let records = 0;
  fc.assert(
    fc.property(streamArb, ([pieces, cuts, trailingNewline]) => {
      const text = pieces.map((p) => p.line).join('\n') + (trailingNewline ? '\n' : '');
      const bytes = Buffer.from(text, 'utf8');
      const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
      const got: PulseRecord[] = [];
      const parser = new RecordParser((r) => got.push(r));
      let at = 0;
      // Cut at byte offsets, so multi-byte UTF-8 characters are split across chunks too.
      for (const p of [...points, bytes.length]) {
        parser.push(bytes.subarray(at, p));
        at = p;
      }
      parser.end();
      const want = pieces.flatMap((p) => (p.record ? [p.record] : []));
      assert.deepEqual(got, want);
      records += want.length;
    }),
    { numRuns: RUNS },
  );
  assert.ok(records > RUNS);
  console.log(`# records: ${RUNS} streams, ${records} records recovered`);
});

test(`parseRecordLine: ${RUNS} arbitrary lines, never throws, returns null or an object with a non-empty string kind`, () => {
  fc.assert(
    fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ maxLength: 80 }).map((s) => `@pulse ${s}`), fc.json().map((j) => `@pulse ${j}`)), (line) => {
      const r = parseRecordLine(line);
      if (r !== null) {
        assert.equal(typeof r, 'object');
        assert.equal(typeof r.kind, 'string');
        assert.notEqual(r.kind, '');
      }
    }),
    { numRuns: RUNS },
  );
});

test('a record cannot pollute Object.prototype', () => {
  const r = parseRecordLine('@pulse {"kind":"x","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
  assert.ok(r);
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});
