/**
 * Regenerates runtime/nodes.schema.json from the zod schema:
 *   npx tsc && node dist/runtime/config/write-schema.js
 * test/unit/nodes-schema.test.ts fails when the committed file is out of date.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../state/paths.js';
import { nodesJsonSchema } from './nodes-schema.js';

/** The exact text of runtime/nodes.schema.json. */
export function nodesSchemaText(): string {
  return `${JSON.stringify(nodesJsonSchema(), null, 2)}\n`;
}

/** Where the generated schema lives. */
export function nodesSchemaPath(): string {
  return path.join(repoRoot(), 'runtime', 'nodes.schema.json');
}

if (process.argv[1] && path.resolve(process.argv[1]).endsWith(path.join('config', 'write-schema.js'))) {
  writeFileSync(nodesSchemaPath(), nodesSchemaText());
  process.stdout.write(`wrote ${nodesSchemaPath()}\n`);
}
