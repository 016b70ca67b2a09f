// Runs on: main thread (build step). Owns: writing the generated JSON Schemas to
// disk. Run after tsc: `node dist/lib/config/write-json-schemas.js [dir]`
// (default dir: `<root>/schemas`, which the YAML files' first line points at).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cclJsonSchema, topologyJsonSchema, type JsonSchema } from './json-schema.js';
import { SCHEMAS_DIR } from './paths.js';

/** File name -> schema; the names are what the YAML files reference. */
export const JSON_SCHEMA_FILES: Record<string, () => JsonSchema> = {
  'topology.schema.json': topologyJsonSchema,
  'ccl.schema.json': cclJsonSchema,
};

/** The exact text written for a schema (stable: 2-space JSON plus a newline), so a test can compare files. */
export function jsonSchemaText(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}

/** Write every JSON Schema into `dir` (created if missing); returns the paths written. */
export function writeJsonSchemas(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return Object.entries(JSON_SCHEMA_FILES).map(([name, make]) => {
    const file = join(dir, name);
    writeFileSync(file, jsonSchemaText(make()));
    return file;
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const file of writeJsonSchemas(process.argv[2] ?? SCHEMAS_DIR)) console.log(`wrote ${file}`);
}
