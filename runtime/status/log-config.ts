/**
 * What a container's log config (docker container inspect: HostConfig.LogConfig, the daemon's log-opts merged with
 * the container's --log-opt) means for the log status and verify read. Follows moby daemon/logger: json-file rotates
 * only with max-size (jsonfilelog.go: capacity -1 without it; max-file 1 by default), `local` keeps 5 × 20 MB
 * compressed by default (local/local.go), `none` keeps nothing (docker logs fails: "configured logging driver does
 * not support reading"), any other driver is read through the daemon's local cache unless cache-disabled.
 */

export interface LogConfigStatus {
  driver: string;
  /** max-size as configured (`50m`), or null when the driver never rotates by size. */
  maxSize: string | null;
  /** Files kept (the current one included), or null when there is no size limit. */
  maxFile: number | null;
  /** The log is cut or rotated, so old lines (the KV cache line) can be gone. */
  rotates: boolean;
  /** docker logs can read it. */
  readable: boolean;
  /** One line for people. */
  summary: string;
}

const count = (v: string | undefined, dflt: number): number => (v !== undefined && /^\d+$/.test(v) ? Number(v) : dflt);

/** Reads the `{{json .HostConfig.LogConfig}}` text; null when it is missing or not the shape docker prints. */
export function logConfigOf(json: string | null): LogConfigStatus | null {
  let cfg: { Type?: unknown; Config?: unknown };
  try {
    cfg = JSON.parse(json ?? '') as { Type?: unknown; Config?: unknown };
  } catch {
    return null;
  }
  if (typeof cfg?.Type !== 'string' || cfg.Type === '') return null;
  const opts: Record<string, string> = {};
  if (cfg.Config && typeof cfg.Config === 'object') {
    for (const [k, v] of Object.entries(cfg.Config as Record<string, unknown>)) if (typeof v === 'string') opts[k] = v;
  }
  return describe(cfg.Type, opts);
}

function sized(driver: string, size: string, files: number, what: string): LogConfigStatus {
  const kept = files === 1 ? `one file: cut at ${size}` : `rotated at ${size}, ${files} files kept`;
  return { driver, maxSize: size, maxFile: files, rotates: true, readable: true, summary: `${what}, ${kept} (old lines such as the KV cache line can be gone)` };
}

function describe(driver: string, o: Record<string, string>): LogConfigStatus {
  if (driver === 'json-file') {
    const size = o['max-size'];
    if (size === undefined) return { driver, maxSize: null, maxFile: null, rotates: false, readable: true, summary: 'json-file without max-size: never rotated, the log grows without bound' };
    return sized(driver, size, count(o['max-file'], 1), 'json-file');
  }
  if (driver === 'local') return sized(driver, o['max-size'] ?? '20m', count(o['max-file'], 5), 'local (compressed)');
  if (driver === 'none') return { driver, maxSize: null, maxFile: null, rotates: false, readable: false, summary: 'none: docker keeps no log (docker logs fails), so no KV cache line can be read from it' };
  if (o['cache-disabled'] === 'true') {
    return { driver, maxSize: null, maxFile: null, rotates: false, readable: false, summary: `${driver} with cache-disabled: docker logs cannot read it on the node` };
  }
  return sized(driver, o['cache-max-size'] ?? '20m', count(o['cache-max-file'], 5), `${driver}, read through docker's local cache`);
}
