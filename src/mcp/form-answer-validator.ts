/**
 * The JSON Schema validator handed to the SDK's `Server`. The SDK uses one only to check a client's
 * answer to a form elicitation (`elicitInput`), and the only forms this server sends are its own
 * (`tools/ask-person.ts`): flat objects of string fields, some with an `enum`. This validator checks
 * that shape, and so keeps the SDK from constructing its default validator (Ajv): the stdio bundle
 * leaves Ajv out (scripts/bundle.mjs; docs/performance.md "Start-up time"). The answer's own rule (a question's
 * options or pattern) is checked again by the service when it is sent.
 */
import type { JsonSchemaValidatorResult, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/** The part of a form's `requestedSchema` checked here. */
interface FlatForm {
  properties?: Record<string, { type?: unknown; enum?: unknown }>;
  required?: unknown;
}

/** Validates an accepted form's content against the flat form this server sent. */
export const FORM_ANSWER_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: unknown) {
    const form = schema as FlatForm;
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      const problem = formProblem(form, input);
      return problem === undefined
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: problem };
    };
  },
};

/** Why `input` is not an answer to `form`, or undefined when it is. */
function formProblem(form: FlatForm, input: unknown): string | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return 'the content is not an object';
  const content = input as Record<string, unknown>;
  const required = Array.isArray(form.required) ? (form.required as unknown[]) : [];
  for (const name of required) if (typeof name === 'string' && !(name in content)) return `${name} is required`;
  for (const [name, value] of Object.entries(content)) {
    const field = form.properties?.[name];
    if (!field) return `${name} is not a field of the form`;
    if (field.type === 'string' && typeof value !== 'string') return `${name} must be a string`;
    if (Array.isArray(field.enum) && !field.enum.includes(value)) return `${name} must be one of the options`;
  }
  return undefined;
}
