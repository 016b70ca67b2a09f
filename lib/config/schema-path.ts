// Runs on: any thread (main in practice). Owns: walking a zod schema along a
// dotted YAML path, so that `--set` paths can be checked against the schema
// before they touch a document, and so that issue messages can tell an integer
// field from a real-valued one.
import { z } from 'zod';

/** One step of a YAML path: a map key or a sequence index. */
export type PathKey = string | number;

/** `['system', 'sips', 'count']` -> `system.sips.count`; indices print as `.0`. */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault) {
    s = s.unwrap() as z.ZodType;
  }
  return s;
}

/**
 * The schema that validates the value at `path` under `schema`, or undefined when
 * no document valid under `schema` can have that path (an unknown key, an index
 * into a non-array). Record values accept any key; union members are not
 * entered (every union in kernbench's schemas is a leaf).
 */
export function schemaAt(schema: z.ZodType, path: readonly PathKey[]): z.ZodType | undefined {
  let s = unwrap(schema);
  for (const key of path) {
    if (s instanceof z.ZodObject) {
      const shape = s.shape as Record<string, z.ZodType>;
      if (!Object.hasOwn(shape, String(key))) return undefined;
      s = unwrap(shape[String(key)]);
    } else if (s instanceof z.ZodRecord) {
      s = unwrap(s.valueType as z.ZodType);
    } else if (s instanceof z.ZodArray) {
      if (typeof key !== 'number') return undefined;
      s = unwrap(s.element as z.ZodType);
    } else {
      return undefined;
    }
  }
  return s;
}

/** True when the schema at `path` is an integer field (`z.number().int()`). */
export function isIntegerField(schema: z.ZodType, path: readonly PathKey[]): boolean {
  const s = schemaAt(schema, path);
  return s instanceof z.ZodNumber && s.isInt === true;
}
