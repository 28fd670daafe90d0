/**
 * The JSON Schema validator handed to the SDK's `Server`. The SDK uses one only to check a client's
 * answer to a form elicitation (`elicitInput`), which this server never sends; passing this one
 * keeps the SDK from constructing its default validator (Ajv), so the stdio bundle leaves Ajv out
 * (scripts/bundle.mjs; README "Start-up time").
 */
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

/** A validator that is never asked for one. @throws Error from `getValidator`: reaching it is a bug. */
export const NO_SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator() {
    throw new Error('mobile-builder-mcp sends no elicitation, so it validates no answer to one');
  },
};
