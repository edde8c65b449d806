/** vLLM's human_readable_int for --max-model-len (runtime/vllm/int.ts), so verify expects what the server reports. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vllmInt } from '../../runtime/vllm/int.js';

const cases: [string | undefined, number | null][] = [
  ['524288', 524288], ['512K', 524288], ['524.288k', 524288], ['1k', 1000], ['1M', 1048576], ['25.6k', 25600],
  ['2g', 2e9], [' 8K ', 8192], ['1.5K', null], ['auto', null], ['-1', null], ['', null], [undefined, null], ['12x', null],
];

for (const [value, want] of cases) test(`vllmInt(${JSON.stringify(value)}) = ${want}`, () => assert.equal(vllmInt(value), want));
