/**
 * `smoke`: one short chat completion through the node's server, run on the node itself (the key stays there). A
 * protected node is refused without --yes before anything is sent.
 */
import { PulseError } from '../errors.js';
import { failureOf } from '../node/outcome.js';
import { probeHost } from '../steps/inputs.js';
import type { NodeConfig } from '../config/nodes.js';
import type { NodeSession } from '../node/types.js';

export const SMOKE_PROMPT = 'Reply with one short sentence: are you up?';

export interface SmokeResult {
  node: string;
  ok: boolean;
  model: string | null;
  httpStatus: number | null;
  latencyS: number | null;
  tokens: { prompt: number | null; completion: number | null; total: number | null };
  /** The first line of the reply. */
  reply: string | null;
  error: string | null;
}

/** Refuse a protected node without --yes (before any connection is made). */
export function checkSmokeAllowed(name: string, node: NodeConfig, yes: boolean): void {
  if (node.protected && !yes) throw new PulseError('refused', `${name} is protected: smoke sends a request to its server and needs --yes`);
}

interface Completion {
  choices?: { message?: { content?: unknown } }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
  model?: unknown;
  error?: { message?: unknown };
}

const n = (v: unknown): number | null => (typeof v === 'number' ? v : null);

function parseBody(b64: string): Completion | null {
  try {
    return JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as Completion;
  } catch {
    return null;
  }
}

/** Run the smoke script over `session` and judge it: pass = HTTP 200 with a non-empty reply. */
export async function runSmoke(session: NodeSession, name: string, node: NodeConfig): Promise<SmokeResult> {
  const recipes = Object.entries(node.recipes).map(([n, r]) => `${n}\t${r.dir}\t${r.container}`).join('\n');
  const result = await session.run('smoke', {
    env: { PULSE_RECIPES: recipes, PULSE_PROBE_HOST: probeHost(node.env.BIND), PULSE_PORT: node.env.PORT, PULSE_SMOKE_PROMPT: SMOKE_PROMPT, PULSE_SMOKE_MAX_TOKENS: '32' },
  });
  const failure = failureOf(result);
  if (failure) throw failure;
  const model = result.records.find((r) => r.kind === 'smoke-model')?.['name'];
  const rec = result.records.filter((r) => r.kind === 'smoke').at(-1) ?? { kind: 'smoke' };
  const code = n(rec['httpStatus']);
  const body = parseBody(typeof rec['body_b64'] === 'string' ? rec['body_b64'] : '');
  const content = body?.choices?.[0]?.message?.content;
  const reply = typeof content === 'string' ? (content.trim().split('\n')[0] ?? '') : null;
  const ok = code === 200 && reply !== null && reply !== '';
  const detail = typeof rec['detail'] === 'string' && rec['detail'] ? rec['detail'] : null;
  const why = typeof body?.error?.message === 'string' ? body.error.message : detail;
  return {
    node: name, ok, model: typeof body?.model === 'string' ? body.model : typeof model === 'string' ? model : null,
    httpStatus: code === 0 ? null : code, latencyS: n(rec['seconds']),
    tokens: { prompt: n(body?.usage?.prompt_tokens), completion: n(body?.usage?.completion_tokens), total: n(body?.usage?.total_tokens) },
    reply, error: ok ? null : (why ?? (code ? `HTTP ${code}` : 'no answer from the server')),
  };
}
