// keeper.service's readiness check (ExecStartPost): waits until the keeper's /readyz answers 200,
// i.e. the server has started and its database and cache answer. Temporal and the secrets store do not
// hold the start (the spec's minimum core, issue 45): the keeper serves without them and connects
// when they answer; the line printed names them when they are away. systemd counts the unit started only
// when this exits 0, so units ordered After=keeper.service start against a keeper that serves.
// Node has no unix datagram socket for sd_notify(3), hence this rather than Type=notify
// (docs/install.md). Exits 1 when the start timeout of the unit (TimeoutStartSec) would be passed,
// and at once when the keeper itself has exited: systemd waits for ExecStartPost before it acts on
// the main process's exit, so without this a keeper that died at start held `systemctl start` for
// the whole timeout. systemd gives ExecStartPost the main process's pid in $MAINPID.
'use strict';
const path = require('node:path');
const { loadConfig } = require(path.join(__dirname, '..', 'app', 'dist', 'platform', 'config', 'load.js'));

const file = process.argv[2] || '/etc/keeper/keeper.yml';
const timeoutMs = Number(process.argv[3] || 110) * 1000;
const addr = loadConfig(file).listen.openapi.addr;
// A wildcard listener is reached on loopback.
const host = addr.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
const url = `http://${host}/readyz`;
const deadline = Date.now() + timeoutMs;
const mainPid = Number(process.env.MAINPID) || 0;

/** `<3>` (priority err) when stderr is the journal's stream, as the keeper's own lines (common/journal.ts). */
function errPrefix() {
  try {
    const st = require('node:fs').fstatSync(2);
    return process.env.JOURNAL_STREAM === `${st.dev}:${st.ino}` ? '<3>' : '';
  } catch { return ''; }
}

/** False once the keeper's process is gone (systemd reaps it, so no zombie lingers under its pid). */
function mainAlive() {
  if (!mainPid) return true;
  try { process.kill(mainPid, 0); return true; } catch (err) { return err.code === 'EPERM'; }
}

async function main() {
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!mainAlive()) {
      process.stderr.write(`${errPrefix()}keeper exited before it was ready (pid ${mainPid}; its own log says why: journalctl -u keeper): ${url}: ${last}\n`);
      return 1;
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        // Ready does not wait for Temporal or the secrets store (issue 45): say which are still away.
        let degraded = [];
        try { degraded = (await res.json()).degraded || []; } catch { /* not JSON: nothing to add */ }
        const note = degraded.length ? ` (degraded: ${degraded.join(', ')} not answering yet)` : '';
        process.stdout.write(`keeper ready: ${url} answered 200${note}\n`);
        return 0;
      }
      last = `${res.status} ${await res.text()}`;
    } catch (err) { last = err.cause?.code ?? err.message; }
    await new Promise((r) => setTimeout(r, 250));
  }
  process.stderr.write(`${errPrefix()}keeper not ready after ${timeoutMs / 1000}s: ${url}: ${last}\n`);
  return 1;
}
main().then((code) => process.exit(code));
