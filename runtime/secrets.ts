/**
 * The one home of the secret keys pulse knows and of their redaction in text: what goes into workflow history
 * (activity failures, state inputs: activities/errors.ts), the node state files (runtime/state/state.ts) and the env diff's
 * mask (runtime/plan/env-diff.ts). The node scripts redact on the node with the same keys (prelude.sh, status.sh).
 */

/** VLLM_API_KEY first: `\bAPI_KEY` does not match inside it (no word boundary after the underscore). */
export const SECRET_KEYS = ['VLLM_API_KEY', 'API_KEY', 'HF_TOKEN'] as const;

// A value is quoted (to its closing quote, or to the end of the line when there is none: a cut line hides the rest)
// or bare (to white space or a quote).
const SECRET = new RegExp(`\\b(${SECRET_KEYS.join('|')})=(?:"[^"\\n]*"?|'[^'\\n]*'?|[^\\s"']+)`, 'g');

/** Every `KEY=value` of a secret key in `text` (`KEY="value"` and `KEY='value'` too) with the value replaced by `<redacted>`. */
export function redactSecrets(text: string): string {
  return text.replace(SECRET, '$1=<redacted>');
}

/** Whether a .env key is a secret one (its value is never shown). */
export function isSecretKey(key: string): boolean {
  return (SECRET_KEYS as readonly string[]).includes(key);
}

/**
 * The node's stand-ins for the lines of a .env that name a secret (prelude.sh pulse_env_public): what of a .env
 * leaves the node is its text with each such line replaced by one of these, so no part of a value ever does.
 * A secret line pulse carries (HF_TOKEN/API_KEY, one plain KEY=value line), a comment that names a secret, any other
 * (a line pulse cannot carry, VLLM_API_KEY=..., the rest of a quoted or continued value such a line starts).
 */
export const SECRET_LINE_MARK = '@@PULSE_SECRET_LINE@@';
export const SECRET_COMMENT_MARK = '# @@PULSE_SECRET_COMMENT@@';
export const SECRET_OTHER_MARK = '@@PULSE_SECRET_OTHER@@';
