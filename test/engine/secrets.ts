/** Secret values planted in every simulated node's .env: no exported or saved history may contain them. */
export const SECRETS = { API_KEY: 'sk-pulse-test-4f1d9c', HF_TOKEN: 'hf_pulsetest_8a2b7e' };

/** The needles to search for: each value and its base64 (payloads are base64 in history JSON). */
export function secretNeedles(): string[] {
  return Object.values(SECRETS).flatMap((v) => [v, Buffer.from(v).toString('base64')]);
}
