'use strict';
/**
 * The server sidecar: spawn `learning-harness-server` (or `python -m server`), wait for its
 * `LH_READY {"port": N, "pid": P}` line, and stop it with its whole process tree.
 *
 * Plain Node (no electron import): tested against the real server in electron/test/sidecar.test.cjs.
 */

const { spawn, execFile } = require('node:child_process');
const net = require('node:net');

const READY_PREFIX = 'LH_READY ';
const STDERR_TAIL_BYTES = 8192;
const IS_WINDOWS = process.platform === 'win32';

class ServerStartError extends Error {
  constructor(message, { code = null, signal = null, stderr = '', pid = null } = {}) {
    super(message);
    this.name = 'ServerStartError';
    this.pid = pid;
    this.exitCode = code;
    this.signal = signal;
    this.stderr = stderr;
  }
}

/** Keeps the last `limit` characters written to it (the stderr tail for error messages). */
class Tail {
  constructor(limit = STDERR_TAIL_BYTES) {
    this.limit = limit;
    this.text = '';
  }
  push(chunk) {
    this.text = (this.text + chunk).slice(-this.limit);
  }
  toString() {
    return this.text.trim();
  }
}

/** Calls `onLine` for every complete line of a readable stream (utf-8). */
function readLines(stream, onLine) {
  let buffer = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buffer += chunk;
    let index;
    while ((index = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, index).replace(/\r$/, '');
      buffer = buffer.slice(index + 1);
      onLine(line);
    }
  });
  stream.on('end', () => {
    if (buffer) onLine(buffer);
    buffer = '';
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function runTaskkill(args) {
  return new Promise((resolve) => {
    execFile('taskkill', args, { windowsHide: true }, (error) => resolve(!error));
  });
}

/** A loopback TCP port that was free a moment ago (prefer `--port 0`: the server reports its port). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Start the server and wait until it is ready.
 *
 * @param {object} options
 * @param {string} options.command Executable (the frozen server, or a Python interpreter).
 * @param {string[]} [options.args] Arguments. Never put credentials here: use `env`.
 * @param {object} [options.env] Full environment of the child (LH_DATA_DIR, LH_API_TOKEN, keys).
 * @param {string} [options.cwd] Working directory.
 * @param {number} [options.readyTimeoutMs=30000] How long to wait for the ready line.
 * @param {(stream: 'stdout'|'stderr', line: string) => void} [options.log] Receives every output line.
 * @returns {Promise<{port: number, pid: number, serverPid: number, origin: string,
 *   exited: Promise<{code: number|null, signal: string|null}>, stderrTail: () => string,
 *   stop: (opts?: {graceMs?: number}) => Promise<{code: number|null, signal: string|null, forced: boolean}>}>}
 *   `pid` is the spawned process (whose tree `stop` kills); `serverPid` is the pid the server
 *   reported (the same, except behind a launcher such as a Windows venv python.exe).
 */
function startServer({ command, args = [], env = process.env, cwd, readyTimeoutMs = 30000, log = () => {} }) {
  return new Promise((resolve, reject) => {
    const stderr = new Tail();
    let settled = false;
    let exitInfo = null;
    let resolveExited;
    const exited = new Promise((r) => {
      resolveExited = r;
    });

    let child;
    try {
      child = spawn(command, args, {
        cwd,
        env,
        // stdin stays an open pipe we never write: if this process dies, the server sees EOF and
        // stops itself (LH_EXIT_ON_STDIN_EOF=1), so it never outlives the shell.
        stdio: ['pipe', 'pipe', 'pipe'],
        // POSIX: its own process group, so that stop() can kill the whole tree with kill(-pid).
        detached: !IS_WINDOWS,
        windowsHide: true,
      });
    } catch (error) {
      reject(new ServerStartError(`cannot start the server (${command}): ${error.message}`));
      return;
    }

    const rejectWith = (message, details = {}) => {
      const tail = stderr.toString();
      reject(
        new ServerStartError(tail ? `${message}\n--- server stderr (last lines) ---\n${tail}` : message, {
          ...details,
          pid: child.pid,
          stderr: tail,
        }),
      );
    };
    const fail = (message, details = {}) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rejectWith(message, details);
    };
    /** Fail a start whose process is still running: kill its tree first, then reject. */
    const failAndStop = (message) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      handle
        .stop({ graceMs: 2000 })
        .catch(() => {})
        .then(() => rejectWith(message));
    };

    let origin = null;
    const handle = {
      pid: child.pid,
      exited,
      stderrTail: () => stderr.toString(),
      stop: (options) =>
        stopProcess(child, () => exitInfo, exited, { ...options, origin, token: env && env.LH_API_TOKEN }),
    };

    const timer = setTimeout(() => {
      failAndStop(`the server did not print ${READY_PREFIX.trim()} within ${readyTimeoutMs} ms (${command})`);
    }, readyTimeoutMs);

    child.on('error', (error) => {
      const hint = error.code === 'ENOENT' ? ' (not found)' : error.code === 'EACCES' ? ' (not executable)' : '';
      fail(`cannot start the server: ${command}${hint}: ${error.message}`);
      if (!exitInfo) {
        exitInfo = { code: null, signal: null };
        resolveExited(exitInfo);
      }
    });

    const failExited = (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      fail(`the server ${how} before it was ready`, { code, signal });
    };
    child.on('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolveExited(exitInfo);
      // Normally 'close' reports it (below); a grandchild holding the pipes open must not delay it.
      setTimeout(() => failExited(code, signal), 1000).unref();
    });
    // 'close' fires once stdio has drained, so the stderr tail is complete in the message.
    child.on('close', failExited);

    readLines(child.stdout, (line) => {
      log('stdout', line);
      if (settled || !line.startsWith(READY_PREFIX)) return;
      let info;
      try {
        info = JSON.parse(line.slice(READY_PREFIX.length));
      } catch {
        failAndStop(`unreadable ready line: ${line}`);
        return;
      }
      if (!Number.isInteger(info.port) || info.port <= 0) {
        failAndStop(`the ready line names no port: ${line}`);
        return;
      }
      settled = true;
      clearTimeout(timer);
      origin = `http://127.0.0.1:${info.port}`;
      resolve({
        ...handle,
        port: info.port,
        serverPid: info.pid,
        origin: `http://127.0.0.1:${info.port}`,
      });
    });
    readLines(child.stderr, (line) => {
      stderr.push(`${line}\n`);
      log('stderr', line);
    });
  });
}

/** POST /api/shutdown (desktop mode, token-protected); true when the server accepted it. */
async function requestShutdown(origin, token) {
  try {
    const response = await fetch(`${origin}/api/shutdown`, {
      method: 'POST',
      headers: { 'x-lh-token': token },
      signal: AbortSignal.timeout(2000),
    });
    return response.status === 202;
  } catch {
    return false;
  }
}

/**
 * Stop: a graceful request first (SIGTERM; Windows: `taskkill /T`), then, after `graceMs` or
 * once the server has exited, a forced kill of whatever is left of its tree (POSIX: SIGKILL to
 * the process group; Windows: `taskkill /T /F`). Resolves when the process has exited.
 */
async function stopProcess(child, getExitInfo, exited, { graceMs = 5000, origin = null, token = null } = {}) {
  const pid = child.pid;
  let forced = false;
  if (pid === undefined) return { code: null, signal: null, forced };
  if (!getExitInfo() && origin && token && (await requestShutdown(origin, token))) {
    // The graceful path on every OS (Windows has no graceful signal for a hidden console child).
    let wait;
    await Promise.race([exited, new Promise((r) => { wait = setTimeout(r, graceMs); })]);
    clearTimeout(wait);
  }
  if (!getExitInfo()) {
    if (IS_WINDOWS) {
      await runTaskkill(['/pid', String(pid), '/T']);
    } else {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
    let timer;
    const graceful = await Promise.race([
      exited.then(() => true),
      new Promise((r) => {
        timer = setTimeout(() => r(false), graceMs);
      }),
    ]);
    clearTimeout(timer);
    forced = !graceful;
  }
  // The tree: descendants may outlive the server (a crashed server leaves its children).
  if (IS_WINDOWS) {
    if (forced || !getExitInfo()) await runTaskkill(['/pid', String(pid), '/T', '/F']);
  } else {
    try {
      process.kill(-pid, 'SIGKILL');
      await groupGone(pid, 1000);
    } catch {
      /* no process left in the group */
    }
  }
  const info = await exited;
  return { ...info, forced };
}

/** Wait (bounded) until no process of group `pgid` is left: SIGKILL is delivered asynchronously. */
async function groupGone(pgid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

module.exports = { startServer, freePort, isAlive, ServerStartError, READY_PREFIX };
