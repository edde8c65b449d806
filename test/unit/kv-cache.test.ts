/** The KV cache report in every shape vLLM logs it (runtime/steps/kv-cache.ts), as verify and status receive it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kvCacheSummary } from '../../runtime/steps/kv-cache.js';

const ONE = 'GPU KV cache size: 1,163,152 tokens, Maximum concurrency for 524,288 tokens per request: 2.22x';

const cases: { name: string; lines: (string | null)[]; want: string | null }[] = [
  { name: 'current: one line with the logger prefix', lines: [`(EngineCore pid=31) INFO 12-02 18:22:55 [kv_cache_utils.py:1147] ${ONE}`, `(EngineCore pid=31) INFO 12-02 18:22:55 [kv_cache_utils.py:1147] ${ONE}`], want: ONE },
  {
    name: '0.11: two lines behind the ANSI prefix whose ESC bytes the node script dropped',
    lines: ['[1;36m(EngineCore_DP0 pid=7)[0;0m INFO 12-02 09:20:05 [kv_cache_utils.py:1087] GPU KV cache size: 1,163,152 tokens', '[1;36m(EngineCore_DP0 pid=7)[0;0m INFO 12-02 09:20:05 [kv_cache_utils.py:1091] Maximum concurrency for 524,288 tokens per request: 2.22x'],
    want: ONE,
  },
  { name: '0.10: no prefix at all', lines: ['INFO 12-02 09:20:05 [kv_cache_utils.py:833] GPU KV cache size: 1,163,152 tokens', 'INFO 12-02 09:20:05 [kv_cache_utils.py:837] Maximum concurrency for 524,288 tokens per request: 2.22x'], want: ONE },
  { name: 'hisparse pools', lines: ['(EngineCore pid=3) INFO 12-02 09:20:05 [kv_cache_utils.py:1147] GPU + host KV cache size: 9 tokens, Maximum concurrency for 8 tokens per request: 1.12x'], want: 'GPU + host KV cache size: 9 tokens, Maximum concurrency for 8 tokens per request: 1.12x' },
  { name: 'a size line alone (the concurrency line rotated away)', lines: ['INFO 09-23 10:15:00 [kv_cache_utils.py:1087] GPU KV cache size: 999,999 tokens', null], want: 'GPU KV cache size: 999,999 tokens' },
  { name: 'no size line', lines: ['INFO x Maximum concurrency for 8 tokens per request: 1.00x', '', null], want: null },
];

for (const c of cases) {
  test(`kvCacheSummary: ${c.name}`, () => assert.equal(kvCacheSummary(c.lines), c.want));
}
