/**
 * vLLM's reading of `--max-model-len` (and `--max-num-batched-tokens`): `human_readable_int` in
 * vllm/engine/arg_utils.py (0.11) and vllm/utils/argparse_utils.py (current) takes a plain integer, a decimal
 * multiple (`25.6k` = 25,600; k m g t) or a binary one (`512K` = 524,288; K M G T, no decimals). Current vLLM also
 * takes `-1` or `auto` for max_model_len: then the server picks the length, and there is nothing to expect.
 */
const DECIMAL: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 };
const BINARY: Record<string, number> = { K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };

/** The integer vLLM makes of `value`, or null when it names none (auto, -1, anything vLLM refuses). */
export function vllmInt(value: string | undefined): number | null {
  const v = (value ?? '').trim();
  if (/^[0-9]+$/.test(v)) return Number(v);
  const m = /^([0-9]+(?:\.[0-9]+)?)([kKmMgGtT])$/.exec(v);
  if (!m) return null;
  const [, num = '', suffix = ''] = m;
  const dec = DECIMAL[suffix];
  if (dec !== undefined) return Math.floor(Number(num) * dec);
  return /^[0-9]+$/.test(num) ? Number(num) * (BINARY[suffix] ?? 0) : null;
}
