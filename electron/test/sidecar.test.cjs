'use strict';
/**
 * sidecar.cjs against the REAL server: the frozen bundle in dist/learning-harness-server/ when
 * it exists, and `python -m server` from the project venv (so that this runs before a freeze,
 * in CI too). Plus scripted children for the timeout / crash / stubborn-child paths.
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { startServer, freePort, isAlive, ServerStartError } = require('../sidecar.cjs');

const ROOT = path.resolve(__dirname, '..', '..');
const WIN = process.platform === 'win32';
const FROZEN = path.join(ROOT, 'dist', 'learning-harness-server', WIN ? 'learning-harness-server.exe' : 'learning-harness-server');
const PYTHON = process.env.LH_PYTHON || path.join(ROOT, '.venv', WIN ? 'Scripts/python.exe' : 'bin/python');

const targets = [];
if (fs.existsSync(FROZEN)) targets.push({ name: 'frozen', command: FROZEN, args: [], cwd: path.dirname(FROZEN) });
if (fs.existsSync(PYTHON)) targets.push({ name: 'python -m server', command: PYTHON, args: ['-m', 'server'], cwd: ROOT });

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lh-sidecar-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function serverEnv(dataDir, token) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.endsWith('_API_KEY')) env[k] = v;
  delete env.LH_API_TOKEN;
  Object.assign(env, {
    LH_DATA_DIR: dataDir,
    LH_LOG_LEVEL: 'warning',
    LH_KEYRING: 'off',
    PYTHON_KEYRING_BACKEND: 'keyring.backends.fail.Keyring',
    PYTHONPATH: ROOT,
  });
  if (token) env.LH_API_TOKEN = token;
  return env;
}

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    request.setTimeout(10000, () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

/** Every pid in the tree under `pid` (Linux /proc), including `pid`. */
function treeOf(pid) {
  if (process.platform !== 'linux') return [pid];
  const parentOf = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) {
    for (const [child, parent] of parentOf) if (parent === tree[i]) tree.push(child);
  }
  return tree;
}

/** Live (non-zombie) processes in process group `pgid` (Linux). */
function groupMembers(pgid) {
  if (process.platform !== 'linux') return [];
  const members = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return members;
}

/** Alive and not a zombie: a killed grandchild stays a zombie until PID 1 reaps it. */
function running(pid) {
  if (!isAlive(pid)) return false;
  if (process.platform !== 'linux') return true;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Group members still running after up to 2 s (a killed process takes a moment to go). */
async function settledGroup(pgid) {
  const deadline = Date.now() + 2000;
  let members = groupMembers(pgid);
  while (members.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    members = groupMembers(pgid);
  }
  return members;
}

async function assertGone(pids, pgid) {
  assert.deepEqual(await settledGroup(pgid), [], `processes left in group ${pgid}`);
  for (const pid of pids) assert.equal(running(pid), false, `pid ${pid} is still running`);
}

for (const target of targets) {
  test(`${target.name}: handshake, token enforced, graceful stop, nothing left`, { timeout: 90000 }, async (t) => {
    const dataDir = path.join(tempDir(t), 'data');
    const token = crypto.randomBytes(32).toString('hex');
    const lines = [];
    const server = await startServer({
      command: target.command,
      args: [...target.args, '--port', '0'],
      env: serverEnv(dataDir, token),
      cwd: target.cwd,
      readyTimeoutMs: 60000,
      log: (stream, line) => lines.push(`${stream}: ${line}`),
    });
    t.after(() => server.stop({ graceMs: 1000 }));
    assert.ok(Number.isInteger(server.port) && server.port > 0);
    assert.equal(server.origin, `http://127.0.0.1:${server.port}`);
    assert.equal(server.serverPid, server.pid);
    assert.ok(lines.some((l) => l.startsWith('stdout: LH_READY ')));

    const ok = await get(`${server.origin}/api/health`, { 'x-lh-token': token });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(JSON.parse(ok.body).status, 'ok');
    assert.equal(JSON.parse(ok.body).dataDir, fs.realpathSync(dataDir));
    for (const headers of [{}, { 'x-lh-token': 'wrong' }]) {
      const refused = await get(`${server.origin}/api/health`, headers);
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.body).error, 'forbidden');
    }
    const foreign = await get(`${server.origin}/api/health`, { 'x-lh-token': token, origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);

    const tree = treeOf(server.pid);
    const result = await server.stop({ graceMs: 15000 });
    assert.deepEqual(result, { code: 0, signal: null, forced: false });
    await assertGone(tree, server.pid);
    assert.deepEqual(await server.stop(), { code: 0, signal: null, forced: false }, 'stop is idempotent');
  });

  test(`${target.name}: a second server on a locked data dir rejects with the server's reason`, { timeout: 90000 }, async (t) => {
    const dataDir = path.join(tempDir(t), 'data');
    const options = {
      command: target.command,
      args: [...target.args, '--port', '0'],
      env: serverEnv(dataDir, 'tok'),
      cwd: target.cwd,
      readyTimeoutMs: 60000,
    };
    const first = await startServer(options);
    t.after(() => first.stop({ graceMs: 1000 }));
    await assert.rejects(startServer(options), (error) => {
      assert.ok(error instanceof ServerStartError);
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /exited with code 3 before it was ready/);
      assert.match(error.message, /already using the data dir/);
      assert.match(error.message, new RegExp(`pid ${first.serverPid}`));
      return true;
    });
    const still = await get(`${first.origin}/api/health`, { 'x-lh-token': 'tok' });
    assert.equal(still.status, 200);
    await first.stop({ graceMs: 15000 });
  });

  test(`${target.name}: a taken port rejects with the server's reason`, { timeout: 90000 }, async (t) => {
    const port = await freePort();
    const blocker = http.createServer().listen(port, '127.0.0.1');
    t.after(() => blocker.close());
    await new Promise((r) => blocker.once('listening', r));
    await assert.rejects(
      startServer({
        command: target.command,
        args: [...target.args, '--port', String(port)],
        env: serverEnv(path.join(tempDir(t), 'data'), 'tok'),
        cwd: target.cwd,
        readyTimeoutMs: 60000,
      }),
      (error) => error.exitCode === 4 && /cannot listen on 127\.0\.0\.1:\d+/.test(error.message),
    );
  });
}

if (targets.length === 0) {
  test('real server', { skip: `neither ${FROZEN} nor ${PYTHON} exists` }, () => {});
}

// ---- scripted children: the failure paths, and the tree kill ------------------------------

const NODE = process.execPath;
const GRANDCHILD = `require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });`;

test('a child that exits before ready rejects with its exit code and stderr tail', async () => {
  await assert.rejects(
    startServer({ command: NODE, args: ['-e', "console.error('line one'); console.error('boom: no config'); process.exit(2)"] }),
    (error) => error.exitCode === 2 && /exited with code 2 before it was ready/.test(error.message) && /boom: no config/.test(error.message),
  );
});

test('a missing executable rejects clearly', async () => {
  await assert.rejects(startServer({ command: path.join(os.tmpdir(), 'no-such-lh-server') }), /cannot start the server: .*not found/);
});

test('no ready line in time: rejects once the whole tree is killed', { skip: WIN && 'POSIX process groups' }, async () => {
  const script = `${GRANDCHILD} console.error('still starting...'); process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`;
  let rejected;
  const started = Date.now();
  await assert.rejects(startServer({ command: NODE, args: ['-e', script], readyTimeoutMs: 700 }), (error) => {
    rejected = error;
    return /did not print LH_READY within 700 ms/.test(error.message) && /still starting/.test(error.message);
  });
  assert.ok(Date.now() - started >= 700 + 2000 - 100, 'waited for the grace before the forced kill');
  assert.equal(running(rejected.pid), false);
  assert.deepEqual(await settledGroup(rejected.pid), [], 'the grandchild is gone too');
});

test('a stubborn server (ignores SIGTERM) and its child are force-killed after the grace', { skip: WIN && 'POSIX process groups' }, async () => {
  const script = `${GRANDCHILD} process.on('SIGTERM', () => {}); setTimeout(() => console.log('LH_READY ' + JSON.stringify({port: 1, pid: process.pid})), 300); setInterval(() => {}, 1000);`;
  const server = await startServer({ command: NODE, args: ['-e', script] });
  await new Promise((r) => setTimeout(r, 200));
  const tree = treeOf(server.pid);
  if (process.platform === 'linux') assert.equal(tree.length, 2, 'server + grandchild');
  const started = Date.now();
  const result = await server.stop({ graceMs: 400 });
  assert.equal(result.forced, true);
  assert.equal(result.signal, 'SIGKILL');
  assert.ok(Date.now() - started < 5000);
  await new Promise((r) => setTimeout(r, 100));
  await assertGone(tree, server.pid);
});

test('an unreadable ready line rejects', async () => {
  await assert.rejects(
    startServer({ command: NODE, args: ['-e', "console.log('LH_READY {nope'); setInterval(() => {}, 1000)"] }),
    /unreadable ready line/,
  );
});

test('freePort gives a bindable loopback port', async () => {
  const port = await freePort();
  const server = http.createServer().listen(port, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  server.close();
});

for (const target of targets) {
  test(`${target.name}: a token-mode stop goes through POST /api/shutdown and is graceful`, async (t) => {
    const dataDir = tempDir(t);
    const token = crypto.randomBytes(16).toString('hex');
    const env = { ...serverEnv(dataDir, token), LH_EXIT_ON_STDIN_EOF: '1' };
    const server = await startServer({ command: target.command, args: [...target.args, '--port', '0'], env, cwd: target.cwd });
    const started = Date.now();
    const result = await server.stop({ graceMs: 8000 });
    assert.equal(result.forced, false);
    assert.equal(result.code, 0);
    assert.ok(Date.now() - started < 8000);
    assert.equal(isAlive(server.pid), false);
  });

  test(`${target.name}: a shell that dies takes the server with it (stdin EOF)`, async (t) => {
    const dataDir = tempDir(t);
    const base = { command: target.command, args: [...target.args, '--port', '0'], cwd: target.cwd };
    const script = `
      const { startServer } = require(${JSON.stringify(path.join(ROOT, 'electron', 'sidecar.cjs'))});
      startServer({ ...${JSON.stringify(base)}, env: JSON.parse(process.env.LH_TEST_ENV) })
        .then((s) => { process.stdout.write(String(s.pid) + '\\n'); process.exit(0); });
    `;
    const env = { ...serverEnv(dataDir), LH_EXIT_ON_STDIN_EOF: '1' };
    const { execFileSync } = require('node:child_process');
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { ...process.env, LH_TEST_ENV: JSON.stringify(env) },
      encoding: 'utf8',
      timeout: 60000,
    });
    const pid = Number(out.trim().split('\n').pop());
    assert.ok(pid > 0);
    const deadline = Date.now() + 20000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(isAlive(pid), false, 'the orphaned server should stop once its stdin closed');
  });
}
