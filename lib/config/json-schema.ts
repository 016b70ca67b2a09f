// Runs on: main thread (build time). Owns: the JSON Schemas of the topology and
// CCL files, generated from the zod schemas (the one source of truth) so that
// editors with yaml-language-server validate and complete the YAML files.
//
// JSON has no Infinity, so a throughput (`z.number().positive() | Infinity`)
// cannot be written exactly. It is emitted as `{type: number, exclusiveMinimum: 0}`
// with a description: YAML `.inf` parses as a float, and a validator working on
// the parsed YAML (yaml-language-server does) sees Infinity, a number > 0, and
// accepts it. zod stays the real check.
import { z } from 'zod';
import { CclFileSchema } from './ccl-schema.js';
import { throughput, TopologySchema } from './topology-schema.js';

export type JsonSchema = Record<string, unknown>;

const THROUGHPUT_JSON: JsonSchema = {
  type: 'number',
  exclusiveMinimum: 0,
  description: 'A positive number, or YAML .inf for unlimited (ideal topologies). JSON Schema cannot express Infinity; .inf parses as a YAML float and passes this check.',
};

function toJsonSchema(schema: z.ZodType, title: string, description: string): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    override: (ctx) => {
      if (ctx.zodSchema === throughput) {
        const node = ctx.jsonSchema as JsonSchema;
        for (const key of Object.keys(node)) delete node[key];
        Object.assign(node, THROUGHPUT_JSON);
      }
    },
  }) as JsonSchema;
  return { ...json, title, description };
}

/** JSON Schema of `topologies/<name>.yaml`. */
export function topologyJsonSchema(): JsonSchema {
  return toJsonSchema(TopologySchema, 'kernbench topology', 'The hardware model of a kernbench run. Generated from lib/config/topology-schema.ts; do not edit.');
}

/** JSON Schema of `topologies/ccl.yaml`. */
export function cclJsonSchema(): JsonSchema {
  return toJsonSchema(CclFileSchema, 'kernbench CCL configuration', 'Collective-communication defaults and algorithm entries. Generated from lib/config/ccl-schema.ts; do not edit.');
}
