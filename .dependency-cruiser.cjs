/**
 * The layers of the source tree (docs/architecture.md), checked in `npm test`.
 * Imports point one way: bin -> (api, temporal, devnet) -> services -> (db, temporal, ledger, chain, protocol);
 * workflows see only workflow-safe code and the *types* of activities; the protocol, ledger, chain, validator and
 * proof layers never reach up into the gateway's api, services, workflows or Temporal client code.
 */
const GATEWAY_TOP = '^src/(api|services|workflows|temporal|activities|bin|devnet)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no cycle, type-only imports included.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'api-not-workflows',
      severity: 'error',
      comment: 'The API reaches workflows only through the client modules in src/temporal/.',
      from: { path: '^src/(api|services)/' },
      to: { path: '^src/(workflows|activities)/' },
    },
    {
      name: 'workflows-are-sandboxed',
      severity: 'error',
      comment:
        'Workflow code runs in the deterministic sandbox: it imports the workflow SDK, other workflow modules, ' +
        'workflow-safe protocol modules and only the types of activities and database rows.',
      from: { path: '^src/workflows/' },
      to: {
        pathNot: ['^src/workflows/', '^src/protocol/', '@temporalio/(workflow|common)', '@noble/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'services-below-api',
      severity: 'error',
      comment: 'A use case knows nothing of HTTP routing: services never import the API layer.',
      from: { path: '^src/services/' },
      to: { path: '^src/(api|bin|devnet)/' },
    },
    {
      name: 'activities-not-api',
      severity: 'error',
      comment: 'Activities do I/O for workflows; they never import the API, the services or workflow code.',
      from: { path: '^src/activities/' },
      to: { path: '^src/(api|services|workflows|bin|devnet)/' },
    },
    {
      name: 'domain-layers-stay-below',
      severity: 'error',
      comment: 'protocol, ledger, chain, validator, proof, db, net and webhooks never import the gateway above them.',
      from: { path: '^src/(protocol|ledger|chain|validator|proof|db|net|webhooks|identity|governance)/' },
      to: { path: GATEWAY_TOP },
    },
    {
      name: 'protocol-is-the-floor',
      severity: 'error',
      comment: 'The protocol module is shared by gateway, validators and verifier; it imports only chain formulas and itself.',
      from: { path: '^src/protocol/' },
      to: { path: '^src/(ledger|validator|proof|db|net|webhooks|identity|governance|ledger-sim)/' },
    },
    {
      name: 'verifier-without-validator',
      severity: 'error',
      comment: 'The offline verifier stands on protocol/ and chain/ alone, never on a validator node or server.',
      from: { path: '^src/proof/' },
      to: { path: '^src/validator/' },
    },
    {
      name: 'validator-not-gateway',
      severity: 'error',
      comment: 'A validator is an independent node: it never imports the gateway.',
      from: { path: '^src/validator/' },
      to: { path: `${GATEWAY_TOP}|^src/(proof|db|services)/` },
    },
    {
      name: 'nothing-imports-entry-points',
      severity: 'error',
      comment: 'Entry points and the devnet launcher are leaves: only bin/ may import devnet/.',
      from: { path: '^src/', pathNot: '^src/(bin|devnet)/' },
      to: { path: '^src/(bin|devnet)/' },
    },
    {
      name: 'queries-live-in-db',
      severity: 'error',
      comment: 'SQL is written in src/db/ only, one query module per aggregate; routes, services and activities call it.',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^node_modules/drizzle-orm/' },
    },
    {
      name: 'console-browser-code',
      severity: 'error',
      comment:
        'src/console/browser runs in the browser (bundled by src/console/bundle.ts): it uses the offline verifier and ' +
        'its own modules, never the gateway, the database or the network clients.',
      from: { path: '^src/console/(browser|shims)/' },
      to: { path: `${GATEWAY_TOP}|^src/(db|services|net|webhooks|validator)/|^src/console/[^/]+$`, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-browser-not-on-server',
      severity: 'error',
      comment: 'The browser code is bundled, not imported, by the server.',
      from: { path: '^src/', pathNot: '^src/console/(browser|shims)/' },
      to: { path: '^src/console/(browser|shims)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: ['^src/', '^node_modules/drizzle-orm/'],
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
