// Benchmark (issue 17): the canvas's reader of the compact graph view in Node. For N
// propositions (sessions of 100) and N-1 chains: read the whole compact view, then apply deltas
// of 20 renamed propositions + 30 new chains one after the other (what a merge sends), and a
// delta that changes nothing (a refresh, e.g. the events channel's resync). Times are JSON.parse
// of the delta body plus `readCompact`, median of the runs.
//
// Run: node scripts/bench_graph_delta.mjs [--sizes 10000,50000,100000] [--runs 7] [--old path/to/graph.ts]
// `--old` times another version of src/core/library/graph.ts in the same run (e.g. `git show
// HEAD~1:frontend/src/core/library/graph.ts > /tmp/graph_old.ts`). Not part of the test suite.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const sizes = opt('sizes', '10000,50000,100000').split(',').map(Number);
const runs = Number(opt('runs', '7'));
const here = fileURLToPath(new URL('.', import.meta.url));

async function load(path) {
  const out = ts.transpileModule(readFileSync(path, 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  const file = join(mkdtempSync(join(tmpdir(), 'lh-bench-graph-')), 'graph.mjs');
  writeFileSync(file, out.outputText);
  return import(pathToFileURL(file).href);
}

function view(n, version) {
  const props = [];
  const chains = [];
  for (let i = 0; i < n; i++) props.push([`n_${i.toString(16).padStart(16, '0')}`, `Name of ${i}`, `Statement ${i} holds.`, [], `src_${Math.floor(i / 100)}`, 0, '2026-12-03T00:00:00Z', i % 997, i % 991]);
  for (let i = 0; i < n - 1; i++) chains.push([`arg_${i.toString(16).padStart(16, '0')}`, [props[i][0]], props[i + 1][0], [], '2026-12-03T00:00:00Z', i % 993, i % 983]);
  const clusters = [];
  for (let s = 0; s * 100 < n; s++) clusters.push({ key: `src_${s}`, kind: 'notes', label: `notes/${s}.md`, nodeCount: Math.min(100, n - s * 100) });
  return { format: 'lh-graph-compact/1', version, full: true, props, chains, clusters, folders: [] };
}

function delta(whole, k, since, version) {
  const props = [];
  for (let j = 0; j < 20; j++) {
    const row = [...whole.props[(k * 977 + j * 131) % whole.props.length]];
    row[1] = `${row[1]} (renamed ${k})`;
    props.push(row);
  }
  const chains = [];
  for (let j = 0; j < 30; j++) chains.push([`arg_new_${k}_${j}`, [props[j % 20][0]], whole.props[(k * 31 + j) % whole.props.length][0], [], '2026-12-03T00:00:00Z', 1, 2]);
  return { format: 'lh-graph-compact/1', version, since, full: false, props, chains, removed: [], clusters: whole.clusters, folders: [] };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const readers = [['now', await load(join(here, '../src/core/library/graph.ts'))]];
if (opt('old')) readers.unshift(['old', await load(opt('old'))]);
console.log(`node ${process.version}, ${runs} runs; ms, median (min-max)`);
for (const n of sizes) {
  const whole = view(n, 'v0');
  const body = JSON.stringify(whole);
  const deltas = [];
  for (let k = 1; k <= runs; k++) deltas.push(JSON.stringify(delta(whole, k, `v${k - 1}`, `v${k}`)));
  const nothing = (v) => JSON.stringify({ format: 'lh-graph-compact/1', version: v, since: v, full: false, props: [], chains: [], removed: [], clusters: whole.clusters, folders: [] });
  for (const [label, g] of readers) {
    let t0 = performance.now();
    let held = g.readCompact(JSON.parse(body), null);
    const wholeMs = performance.now() - t0;
    const applied = [];
    for (const d of deltas) {
      t0 = performance.now();
      held = g.readCompact(JSON.parse(d), held);
      applied.push(performance.now() - t0);
    }
    const idle = [];
    for (let k = 0; k < runs; k++) {
      const before = held;
      t0 = performance.now();
      held = g.readCompact(JSON.parse(nothing(held.version)), held);
      idle.push(performance.now() - t0);
      if (!held) throw new Error('no-change delta refused');
      if (k === 0) console.log(`  ${label} ${n}: no-change read answers the held view itself: ${held.data === before.data}`);
    }
    const f = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)})`;
    console.log(`${label.padEnd(4)} ${String(n).padStart(7)} props: whole read ${wholeMs.toFixed(0)} ms; delta of 20 props + 30 chains ${f(applied)}; no-change ${f(idle)}; nodes ${held.data.nodes.length}`);
  }
}
