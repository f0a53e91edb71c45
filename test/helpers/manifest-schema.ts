import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject } from 'ajv/dist/2020.js';

/**
 * The manifest JSON Schema, compiled once with ajv in strict mode (ajv is a dev dependency, so
 * this lives with the tests; the runtime check is src/manifest/manifest-shape.ts).
 */
const schemaPath = fileURLToPath(new URL('../../schema/manifest.schema.json', import.meta.url));
const schema: unknown = JSON.parse(readFileSync(schemaPath, 'utf8'));

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validate = ajv.compile(schema as object);

/** Throws with every schema violation listed when `manifest` does not match the schema. */
export function assertValidManifest(manifest: unknown): void {
  if (validate(manifest)) return;
  throw new Error(`manifest does not match schema/manifest.schema.json:\n${describeErrors(validate.errors ?? [])}`);
}

/** The violations as `instancePath message` lines, empty when valid; for tests that expect failure. */
export function manifestSchemaErrors(manifest: unknown): string[] {
  return validate(manifest) ? [] : (validate.errors ?? []).map(line);
}

function describeErrors(errors: ErrorObject[]): string {
  return errors.map((error) => `  ${line(error)}`).join('\n');
}

function line(error: ErrorObject): string {
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}
