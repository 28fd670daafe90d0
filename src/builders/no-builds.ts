/**
 * The builder of a node that builds nothing (`serve --role api`, docs/operators.md "Roles"): such a node's
 * engine claims no workflow, so `run` is never called; if a build reached it anyway, the workflow
 * fails here rather than run on an API node.
 */
import { BuildFailure, type Builder } from './builder.js';

/** A builder whose every run fails with `error.code = "builder_error"`. */
export const NO_BUILDS: Builder = {
  name: 'none',
  run: () =>
    Promise.reject(new BuildFailure('builder_error', 'This server builds nothing (role api): workers run the builds.')),
};
