/**
 * Exporting the history of a real run: always to test-output/histories/ (inspection, the secrets check), and to
 * test/histories/ when PULSE_RECORD_HISTORIES=1 (test/histories/regenerate.sh regenerates the replay fixtures).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { secretNeedles } from './secrets.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** Every exported history text of this process, for the no-secret assertion. */
export const exported: { name: string; text: string }[] = [];

export async function exportHistory(client: Client, workflowId: string, runId: string, name: string): Promise<string> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const text = historyToJSON(history);
  const out = path.join(REPO_ROOT, 'test-output', 'histories');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, `${name}.json`), text);
  if (process.env['PULSE_RECORD_HISTORIES'] === '1') writeFileSync(path.join(REPO_ROOT, 'test', 'histories', `${name}.json`), `${text}\n`);
  exported.push({ name, text });
  return text;
}

/** The names of the histories in which a planted secret value (or its base64) appears. */
export function historiesWithSecrets(): string[] {
  const needles = secretNeedles();
  return exported.filter((h) => needles.some((n) => h.text.includes(n))).map((h) => h.name);
}
