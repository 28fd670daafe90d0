#!/usr/bin/env node
// The command-line entry point: everything lives in dist/cli/main.js (built from src/cli/main.ts).
import { run } from '../dist/cli/main.js';

await run(process.argv);
