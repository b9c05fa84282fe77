// The frontend's import law (issue 27, "One system, one place"), checked by `npm run depcruise`
// (part of `make frontend-test`). Type-only imports count (tsPreCompilationDeps); styles count.
//
// Layout (src/):
//   core/                pure code every system shares (types, errors, events, time, math, usage,
//                        sseGuard, confirmDelete); a leaf: it imports no core/<system>/.
//   core/<system>/       one system's pure code and its tests.
//   components/<system>/ one system's React components, hooks, state providers and browser
//                        clients (fetch, localStorage, DOM), with their styles and tests.
//   components/          (root) widgets every system uses: Markdown, MathText, ConfirmDialog,
//                        useNarrow, scroll. They import no system.
//   components/shell/    the app frame (Layout, Sidebar, SessionRow, NotFoundPage); only App.tsx
//                        imports it.
//   src/ root            app plumbing every system shares (api.ts, appState.tsx, serverEvents.tsx,
//                        useConfirmDelete.ts, cspSafe.ts) and the entry (main.tsx, App.tsx: the
//                        one place that wires systems together).
//
// Systems: classroom, library, practice, workbench, machine_room. A system imports the shared
// roots, machine_room, and itself; besides that only two declared edges: classroom -> workbench
// (the lesson transcript shows the Workbench's cards) and practice -> library (a practice set is
// made from the Library's graph). machine_room imports no system.

const SYSTEMS = ['classroom', 'library', 'practice', 'workbench', 'machine_room'];
const ALLOWED = {
  classroom: ['workbench', 'machine_room'],
  library: ['machine_room'],
  practice: ['library', 'machine_room'],
  workbench: ['machine_room'],
  machine_room: [],
};

const systemRules = SYSTEMS.map((system) => {
  const forbidden = SYSTEMS.filter((other) => other !== system && !ALLOWED[system].includes(other));
  return {
    name: `${system.replace('_', '-')}-imports-only-allowed-systems`,
    comment: `${system} may import the shared roots, itself${ALLOWED[system].length ? ', ' + ALLOWED[system].join(', ') : ''}; not ${forbidden.join(', ')}.`,
    severity: 'error',
    from: { path: `^src/(core|components)/${system}/` },
    to: { path: `^src/(core|components)/(${forbidden.join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles: move the shared piece into a leaf module.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      comment: 'Every module is imported by something (or imports something, as tests and the entry do).',
      severity: 'error',
      from: { orphan: true, pathNot: ['\\.d\\.ts$'] },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-test',
      comment: 'Production code does not import tests.',
      severity: 'error',
      from: { pathNot: '\\.test\\.ts$' },
      to: { path: '\\.test\\.ts$' },
    },
    {
      name: 'core-imports-only-core',
      comment: 'src/core/** is pure: no components, no React hooks or providers, no api.ts or other browser plumbing.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'core-imports-no-ui-packages',
      comment:
        'src/core/** uses only the packages it uses today, none of them React or browser-only: ai (types), d3-force (types), d3-polygon, fuse.js, and vitest in tests.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/(ai|d3-force|d3-polygon|fuse\\.js|vitest|@types/d3-force|@types/d3-polygon)/',
      },
    },
    {
      name: 'core-node-builtins-only-in-tests',
      comment: 'Node built-ins (node:fs for the shared vectors) only in tests.',
      severity: 'error',
      from: { path: '^src/core/', pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'shared-core-is-a-leaf',
      comment: 'The shared core (src/core/*.ts) imports no system core.',
      severity: 'error',
      from: { path: '^src/core/[^/]+$' },
      to: { path: '^src/core/[^/]+/' },
    },
    ...systemRules,
    {
      name: 'shared-widgets-import-no-system',
      comment: 'The shared widgets (src/components/*.tsx|ts) import no system and not the frame.',
      severity: 'error',
      from: { path: '^src/components/[^/]+$' },
      to: { path: '^src/components/[^/]+/' },
    },
    {
      name: 'shell-imports-only-machine-room',
      comment: 'The app frame (components/shell) shows the machine room (banner, activity dock) and no other system.',
      severity: 'error',
      from: { path: '^src/components/shell/' },
      to: { path: `^src/(core|components)/(${SYSTEMS.filter((s) => s !== 'machine_room').join('|')})/` },
    },
    {
      name: 'only-app-imports-shell',
      comment: 'Only App.tsx (and the frame itself) imports components/shell.',
      severity: 'error',
      from: { pathNot: '^src/(App\\.tsx$|components/shell/)' },
      to: { path: '^src/components/shell/' },
    },
    {
      name: 'root-plumbing-imports-no-components',
      comment: 'The shared plumbing at src/ root (api.ts, appState.tsx, serverEvents.tsx, ...) imports no components; only main.tsx and App.tsx wire them.',
      severity: 'error',
      from: { path: '^src/[^/]+$', pathNot: '^src/(App|main)\\.tsx$' },
      to: { path: '^src/components/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.app.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.d.ts', '.json'],
    },
  },
};
