// The TypeScript SDK client's output validator (the SDK's own AjvJsonSchemaValidator: Ajv's
// draft-07 class, strict: false, ajv-formats) applied to schemas and values, and the SDK's
// own zod schema of a tools/list result applied to tool definitions.
//
//   node validators.mjs <cases.json>
//
// Reads `[{"schema": …, "values": […]} | {"tool": …}]` and prints, in the same order,
// `{"compiles": bool, "error": string|null, "accepts": [bool…], "warnings": [string…]}`
// for a schema case (the
// SDK compiles the validator when it lists tools, so a schema that does not compile fails
// the listing) and `{"listing": bool, "error": string|null}` for a tool definition.

import { readFileSync } from 'node:fs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';

// Ajv logs what it ignores (unknown formats) through the console: captured per case into
// `warnings`, so stdout stays the answer.
let warnings = [];
for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
  console[level] = (...args) => warnings.push(args.join(' '));
}

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const answers = cases.map((c) => {
  if ('tool' in c) {
    const parsed = ListToolsResultSchema.safeParse({ tools: [c.tool] });
    return { listing: parsed.success, error: parsed.success ? null : String(parsed.error.message).slice(0, 300) };
  }
  warnings = [];
  let validate;
  try {
    validate = new AjvJsonSchemaValidator().getValidator(c.schema);
  } catch (err) {
    return { compiles: false, error: String(err.message ?? err).slice(0, 300), accepts: [], warnings };
  }
  const accepts = c.values.map((v) => validate(v).valid);
  return { compiles: true, error: null, accepts, warnings };
});
process.stdout.write(JSON.stringify(answers) + '\n');
