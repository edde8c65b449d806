/**
 * A client of a node's server as a user's would be: one streamed chat completion (`"stream": true`), read to its
 * end. `complete` says whether it got vLLM's `data: [DONE]` after a finish that was not "abort" (a stop cuts a stream
 * either way: vLLM's shutdown ends it with finish_reason "abort", a killed server before [DONE]).
 */
import http from 'node:http';

export interface StreamOutcome {
  complete: boolean;
  /** The server's shutdown aborted it: its finish chunk says finish_reason "abort". */
  aborted: boolean;
  chunks: number;
  status: number;
  /** Why it ended early: a refused connection, a reset, a stream cut short. */
  error: string | null;
}

/** Streams one chat completion from `host:port` (with `key` as a bearer token when given); never rejects. */
export function streamChat(port: number, opts: { host?: string; key?: string; model?: string } = {}): Promise<StreamOutcome> {
  const body = JSON.stringify({ ...(opts.model ? { model: opts.model } : {}), messages: [{ role: 'user', content: 'are you up?' }], max_tokens: 64, stream: true });
  return new Promise((resolve) => {
    const out: StreamOutcome = { complete: false, aborted: false, chunks: 0, status: 0, error: null };
    const req = http.request({
      host: opts.host ?? '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}) },
    }, (res) => {
      out.status = res.statusCode ?? 0;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        out.chunks = (text.match(/^data: /gm) ?? []).length;
      });
      const settle = (): void => {
        out.aborted = /"finish_reason":"abort"/.test(text);
        out.complete = /^data: \[DONE\]$/m.test(text) && !out.aborted;
        if (out.aborted && out.error === null) out.error = 'the server aborted it (finish_reason "abort")';
        if (!out.complete && out.error === null) out.error = 'the stream ended before data: [DONE]';
        resolve(out);
      };
      res.on('end', settle);
      res.on('close', settle);
      res.on('error', (e) => {
        out.error = e.message;
        settle();
      });
    });
    req.on('error', (e) => {
      out.error = e.message;
      resolve(out);
    });
    req.end(body);
  });
}
