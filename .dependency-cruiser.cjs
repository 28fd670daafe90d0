/**
 * The layers (docs/architecture.md, "Layers"): a folder or root module of src/ imports only from
 * the rows below its own, and the names on one row import none of each other. `ROWS` below is the
 * table, top to bottom, and the `layer-rows` rules check every import against it:
 *
 *   index.ts | cli/                           the package's exports; the command line
 *   config/                                   the settings table, read by cli/ only
 *   app.ts                                    the composition root
 *   app-services.ts | app-lifecycle.ts | app-auth.ts   its composition steps (app.ts's own)
 *   app-engine.ts                             the step that makes the builder and the engine
 *   app-config.ts                             AppConfig: what createApp needs
 *   http-listener.ts                          the HTTP side's wiring, loaded by app.ts on first use
 *   transports/ | console/ | metrics/         the edges: narrow deps from app.ts, never the App
 *   oauth/                                    the OAuth authorization server's routes: the transports load them
 *   mcp/                                      the JSON-RPC gateway, the tool adapter, the tools
 *   services/                                 the rules of the tools
 *   workflows/ | auth/                        the engine; tokens, grants, sessions, the request gate
 *   limits/ | builders/ | errors.ts           plans and rate limits; the builders; the domain errors
 *   store/ | io/ | logger.ts | clock.ts | config-file.ts | roles.ts
 *   core/                                     the leaves: defaults, message lengths, the workflow state table
 *
 * core/ imports nothing of ours, and every row may read it. No import cycle anywhere: between
 * files (`no-circular`) nor between the folders and root modules above (`npm run lint:folders`).
 * The named rules after the table say more than the rows: a builder's folder (`builders/expo/`) is
 * entered only by the builder registry (the CLI and config/ may read its index.ts for option
 * declarations); only store/store.ts opens an adapter; app.ts composes the Prometheus metrics and
 * hands their observers down (the layers below report through interfaces they own) and their route
 * to the HTTP side. `npm run lint:layers` runs these rules.
 */
const ROWS = [
  ['index.ts', 'cli'],
  ['config'],
  ['app.ts'],
  ['app-services.ts', 'app-lifecycle.ts', 'app-auth.ts'],
  ['app-engine.ts'],
  ['app-config.ts'],
  ['http-listener.ts'],
  ['transports', 'console', 'metrics'],
  ['oauth'],
  ['mcp'],
  ['services'],
  ['workflows', 'auth'],
  ['limits', 'builders', 'errors.ts'],
  ['store', 'io', 'logger.ts', 'clock.ts', 'config-file.ts', 'roles.ts'],
  ['core'],
];
/** The path pattern of a row's name: a folder of src/ (`cli`) or a root module (`app.ts`). */
const pathOf = (name) => (name.endsWith('.ts') ? `^src/${name.replace(/\./g, '\\.')}$` : `^src/${name}/`);
const anyOf = (names) => names.map(pathOf).join('|');
const layerRows = [
  ...ROWS.flatMap((row, index) =>
    row.map((name) => ({
      name: `layer-rows: ${name}`,
      comment: `${name} imports only from the rows below its own (the table at the top of this file).`,
      severity: 'error',
      from: { path: pathOf(name) },
      to: { path: anyOf([...ROWS.slice(0, index).flat(), ...row.filter((other) => other !== name)]) },
    })),
  ),
  {
    name: 'layer-rows: every module has a row',
    comment: 'A new folder or root module of src/ takes its place in ROWS (and in docs/architecture.md, "Layers").',
    severity: 'error',
    from: { path: '^src/', pathNot: anyOf(ROWS.flat()) },
    to: {},
  },
];
const layer = (name) => `^src/${name}/`;
const forbid = (name, from, to, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    ...layerRows,
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make the layers meaningless.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'store-is-the-bottom',
      comment:
        'Repositories hold SQL only: the store imports nothing of ours but core/ (the state table gives them the workflow statuses).',
      severity: 'error',
      from: { path: layer('store') },
      to: { path: '^src/', pathNot: '^src/(store|core)/' },
    },
    {
      name: 'sqlite-driver-in-its-adapter',
      comment: 'Only the SQLite adapter (src/store/sqlite/) talks to the driver; everything else uses the store port.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/sqlite/' },
      to: { path: 'better-sqlite3' },
    },
    {
      name: 'pg-driver-in-its-adapter',
      comment:
        'Only the PostgreSQL adapter (src/store/pg/) and the request limiter that counts in PostgreSQL talk to node-postgres; everything else uses the store port.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/store/pg/|^src/limits/pg-rate-limiter\\.ts$' },
      to: { path: '^node_modules/(pg|pg-[a-z-]+)/' },
    },
    {
      name: 'pg-adapter-behind-the-port',
      comment:
        "Only store/store.ts (which opens the store) imports the PostgreSQL adapter; the PostgreSQL rate limiter (the driver's other user) takes its fault-proof pools from pg-pool.ts.",
      severity: 'error',
      from: {
        path: '^src/(?!store/)|^src/store/(?!pg/)(?!store\\.ts$)',
        pathNot: '^src/limits/pg-rate-limiter\\.ts$|^src/store/sql/dialect\\.ts$',
      },
      to: { path: '^src/store/pg/' },
    },
    {
      name: 'seam-types-from-the-pg-schema-only',
      comment:
        "The dialect seam (src/store/sql/dialect.ts) reads only the PostgreSQL schemas' types (the repositories' table types); it runs nothing of the adapter.",
      severity: 'error',
      from: { path: '^src/store/sql/dialect\\.ts$' },
      to: { path: '^src/store/pg/', pathNot: '^src/store/pg/(release-)?schema\\.ts$' },
    },
    {
      name: 'seam-imports-the-pg-schema-as-types',
      comment: 'The dialect seam imports the PostgreSQL schema with `import type` only.',
      severity: 'error',
      from: { path: '^src/store/sql/dialect\\.ts$' },
      to: { path: '^src/store/pg/(release-)?schema\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    forbid(
      'one-set-of-repositories',
      '^src/store/sql/',
      '^src/store/(sqlite|pg)/(?!(release-)?schema\\.ts$)',
      'The repositories of src/store/sql/ are written once over the dialect seam: they import no adapter (each adapter hands them its dialect).',
    ),
    forbid(
      'pg-pools-for-the-pg-limiter-only',
      '^src/limits/pg-rate-limiter\\.ts$',
      '^src/store/pg/(?!pg-pool\\.ts$)',
      'The PostgreSQL rate limiter uses the adapter only for its pools.',
    ),
    forbid(
      'adapters-behind-the-port',
      '^src/(?!store/)|^src/store/(?!sqlite/)(?!store\\.ts$)',
      '^src/store/sqlite/',
      'Only store/store.ts (which opens the store) imports the adapter; the port declares its own row types (rows.ts).',
    ),
    forbid(
      'core-is-the-bottom',
      layer('core'),
      '^src/(?!core/)',
      'Every layer, the store included, reads the defaults, the message lengths and the state table: core/ imports nothing of ours.',
    ),
    forbid(
      'builders-below-the-engine',
      layer('builders'),
      '^src/(console|cli|transports|mcp|services|workflows|auth|limits)/|^src/app\\.ts$',
      'A builder sees only its BuildContext.',
    ),
    {
      name: 'only-the-registry-enters-builder-folders',
      comment:
        'A builder owns its folder (docs/architecture.md, "Builders"): the rest of the server reaches it through builders/builder-registry.ts; the CLI and the settings table may read its index.ts (its settings, for option declarations).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/builders/(builder-registry\\.ts$|[^/]+/)|^src/(cli|config)/' },
      to: { path: '^src/builders/[^/]+/' },
    },
    forbid(
      'builder-options-through-the-index',
      '^src/(cli|config)/',
      '^src/builders/[^/]+/(?!index\\.ts$)',
      'The CLI and the settings table read a builder folder through its index.ts only.',
    ),
    {
      name: 'builder-folders-stay-apart',
      comment: 'One builder folder never imports another: what they share lives in builders/ itself.',
      severity: 'error',
      from: { path: '^src/builders/([^/]+)/' },
      to: { path: '^src/builders/[^/]+/', pathNot: '^src/builders/$1/' },
    },
    forbid(
      'workflows-below-services',
      layer('workflows'),
      '^src/(console|cli|transports|mcp|services)/|^src/app\\.ts$',
      'The engine calls services never, tools never.',
    ),
    forbid(
      'auth-and-limits-below-services',
      '^src/(auth|limits)/',
      '^src/(console|cli|transports|mcp|oauth|services|workflows|builders)/|^src/app\\.ts$',
      'Authentication and limits are used by the edges, not the reverse.',
    ),
    forbid(
      'oauth-below-transports',
      layer('oauth'),
      '^src/(console|cli|transports|mcp|services|workflows|builders)/|^src/app\\.ts$',
      'The OAuth routes get their parts from the transport; they run no tool and no workflow.',
    ),
    forbid(
      'only-transports-load-oauth',
      '^src/(mcp|services|workflows|builders|limits|io)/',
      '^src/oauth/',
      'OAuth is an HTTP concern, loaded by the transport.',
    ),
    forbid(
      'services-below-mcp',
      layer('services'),
      '^src/(console|cli|transports|mcp)/|^src/app\\.ts$',
      'Services never touch the protocol.',
    ),
    forbid(
      'mcp-below-transports',
      layer('mcp'),
      '^src/(console|cli|transports)/|^src/app\\.ts$',
      'The tool adapter knows no transport.',
    ),
    forbid('transports-below-cli', layer('transports'), '^src/cli/', 'Transports are entry points the CLI starts.'),
    forbid(
      'transports-take-narrow-deps',
      layer('transports'),
      '^src/app\\.ts$',
      'A transport gets the narrow interface it needs, never the whole App.',
    ),
    forbid(
      'transports-take-the-console-as-a-dep',
      layer('transports'),
      '^src/console/',
      'The HTTP transport routes to the console through HttpServerDeps.',
    ),
    forbid(
      'console-beside-transports',
      layer('console'),
      '^src/(cli|transports|oauth)/|^src/app\\.ts$',
      'The console gets the narrow interfaces it needs from app.ts.',
    ),
    forbid(
      'metrics-beside-the-console',
      layer('metrics'),
      '^src/(cli|console|transports|oauth|services)/|^src/app\\.ts$',
      'The metrics read the store and implement the observers of the engine and the tool adapter; they serve no tool.',
    ),
    forbid(
      'only-the-root-composes-metrics',
      '^src/(?!metrics/)(?!app(-config)?\\.ts$)(?!http-listener\\.ts$)',
      '^src/metrics/',
      'The layers below report through their own observer interfaces; app.ts composes the metrics and the HTTP side mounts their route.',
    ),
    {
      name: 'only-the-cli-reads-the-settings-table',
      comment:
        'The table generates the command line; the layers below take its values through AppConfig and their options.',
      severity: 'error',
      from: { pathNot: '^src/(cli|config)/' },
      to: { path: '^src/config/' },
    },
    forbid(
      'config-below-cli',
      layer('config'),
      '^src/cli/',
      'The settings table feeds the command line, not the reverse.',
    ),
    forbid(
      'io-is-a-leaf',
      layer('io'),
      '^src/(?!io/)(?!core/)',
      'Stream and text helpers depend on nothing of ours but core/.',
    ),
    forbid(
      'root-leaves',
      '^src/(clock|config-file|logger|roles)\\.ts$',
      '^src/(?!core/)',
      'The clock, the logger, the config file reader and the roles are read by every layer: they import nothing of ours but core/.',
    ),
    forbid(
      'errors-above-the-store-only',
      '^src/errors\\.ts$',
      '^src/(?!core/)(?!store/unavailable\\.ts$)',
      'The domain errors read only which store failures are outages (store/unavailable.ts).',
    ),
    forbid(
      'sdk-in-few-files',
      '^src/(services|workflows|builders|store|auth|limits|console|io)/|^src/app\\.ts$',
      '@modelcontextprotocol/(sdk|server|client|core)',
      'Only the adapter (mcp/), the transports and oauth/ import the SDK, v1 (sdk) or v2 (server, client, core).',
    ),
    forbid(
      'composition-steps-belong-to-the-root',
      '^src/(?!app\\.ts$)(?!app-)',
      '^src/app-',
      "The composition steps beside app.ts (app-auth.ts, app-engine.ts, ...) are app.ts's own: nothing below imports them, so the rules on app.ts cover them.",
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
