/** Prebuilds the workflow bundle once at build time, so `pulse worker` never runs webpack at start. */
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const distDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE_PATH = path.join(distDir, 'workflow-bundle.js');

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(distDir, 'workflows', 'index.js'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn(m: string) { process.stderr.write(`${m}\n`); }, error(m: string) { process.stderr.write(`${m}\n`); } },
  });
  await mkdir(distDir, { recursive: true });
  await writeFile(BUNDLE_PATH, code);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`build-bundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
