// Fault: a soul's network cut mid-step. The soul runs in its own network namespace (`unshare --net`),
// joined to the host by a veth pair; a forwarder inside the namespace gives it the keeper's ports on
// its own loopback (the keeper's certificate names localhost) and one on the host side carries them
// to the keeper. Taking the host end of the link down drops every packet silently, as a pulled cable
// does. Expected: the host `unknown`, the run `error_locked`, nothing committed; link back, the soul
// reconnects by itself, unlock with retry: `ready`, each step applied once.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { finished, port, soulInit, uniqueSid, writeSoulConfig, SOUL_BIN, type RunningSoul } from '../agents/harness';
import { api, waitFor } from '../runs/keeper';
import { midDispatch, settledStatus, startRig, type Rig } from './rig';

// Runs inside the namespace: 127.0.0.1:<port> -> <host end>:<port> for each argument; exits when
// the soul (its parent) is gone, so nothing outlives the test.
const FORWARDER = `const net = require('net'); const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 300);
for (const a of process.argv.slice(1)) { const [p, host] = a.split('@');
  net.createServer((c) => { const u = net.connect(+p, host); c.pipe(u); u.pipe(c);
    c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); c.on('close', () => u.destroy()); u.on('close', () => c.destroy()); }).listen(+p, '127.0.0.1'); }`;

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

describe("fault: a soul's network cut mid-step (own network namespace, link down), then back", function () {
  this.timeout(300_000);
  let rig: Rig;
  const tag = randomBytes(2).toString('hex');
  const hostIf = `kf${tag}h`;
  const net3 = `10.231.${parseInt(tag, 16) % 250}`;
  const servers: net.Server[] = [];

  before(async () => {
    rig = await startRig({ covens: [['web']], steps: 4 });
  });
  after(async () => {
    for (const s of servers) s.close();
    try {
      ip('link', 'del', hostIf);
    } catch {
      /* gone with the namespace */
    }
    await rig?.stop();
  });

  it('locks the run with the host unknown and commits nothing; after the link is back, unlock with retry finishes it once', async () => {
    const sid = uniqueSid('netns');
    const r = await api(rig.k, 'POST', '/v1/souls', { sid, transport: 'agent', covens: ['web'] });
    assert.equal(r.status, 201);
    const dir = path.join(rig.root, 'souls', sid);
    const ports = [port(rig.k.config.listen.grpc.bootstrap.addr), port(rig.k.config.listen.grpc.event_stream.addr)];
    const config = writeSoulConfig(dir, sid, [
      { host: 'localhost', bootstrap_port: ports[0]!, event_stream_port: ports[1]!, priority: 10 },
    ]);
    // Onboarded on the host network; only `soul run` lives behind the cuttable link.
    const init = await soulInit(sid, config, r.body.bootstrap_token);
    assert.equal(init.code, 0, init.stderr);
    const child = spawn(
      'unshare',
      [
        '--uts',
        '--net',
        'sh',
        '-c',
        'hostname "$0" && ip link set lo up && { node -e "$1" "$2" "$3" & } && exec node "$4" run "--config=$5"',
        sid,
        FORWARDER,
        `${ports[0]}@${net3}.1`,
        `${ports[1]}@${net3}.1`,
        SOUL_BIN(),
        config,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const log = { stderr: '' };
    const done = finished(child, log);
    const run: RunningSoul = {
      child,
      done,
      log,
      kill: (sig = 'SIGKILL') => {
        if (child.exitCode === null) child.kill(sig);
        return done;
      },
    };
    rig.souls.push({ sid, config, dir, run });
    await waitFor(
      'the namespace',
      async () => {
        try {
          return (
            execFileSync('readlink', [`/proc/${child.pid}/ns/net`]).toString() !==
            execFileSync('readlink', ['/proc/self/ns/net']).toString()
          );
        } catch {
          return false;
        }
      },
      10_000,
      50,
    );
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', `kf${tag}s`, 'netns', String(child.pid));
    ip('addr', 'add', `${net3}.1/30`, 'dev', hostIf);
    ip('link', 'set', hostIf, 'up');
    execFileSync('nsenter', ['-t', String(child.pid), '-n', 'ip', 'addr', 'add', `${net3}.2/30`, 'dev', `kf${tag}s`]);
    execFileSync('nsenter', ['-t', String(child.pid), '-n', 'ip', 'link', 'set', `kf${tag}s`, 'up']);
    for (const p of ports) {
      const srv = net.createServer((c) => {
        const u = net.connect(p, '127.0.0.1');
        c.pipe(u);
        u.pipe(c);
        c.on('error', () => u.destroy());
        u.on('error', () => c.destroy());
        c.on('close', () => u.destroy());
        u.on('close', () => c.destroy());
      });
      await new Promise<void>((resolve) => srv.listen(p, `${net3}.1`, resolve));
      servers.push(srv);
    }
    const status = async () => (await api(rig.k, 'GET', `/v1/souls/${sid}`)).body.status as string;
    await waitFor(`${sid} connected through the link`, async () => (await status()) === 'connected', 60_000, 200).catch(
      (err: Error) => {
        err.message += `\n--- soul log ---\n${log.stderr.slice(-2000)}`;
        throw err;
      },
    );

    const applyId = await rig.create('netcut');
    const cutSoul = rig.souls.find((s) => s.sid === sid)!;
    await midDispatch({ ...rig, souls: [cutSoul] }, applyId);
    ip('link', 'set', hostIf, 'down');
    const t0 = Date.now();
    await waitFor(`${sid} disconnected`, async () => (await status()) === 'disconnected', 30_000, 100);
    console.log(`      cut soul shown disconnected after ${Date.now() - t0} ms`);
    const locked = await settledStatus(rig, 'netcut');
    assert.equal(locked.status, 'error_locked');
    const rep = await rig.report('netcut', applyId);
    assert.equal(rep.hosts.find((h: any) => h.sid === sid).status, 'unknown', JSON.stringify(rep.hosts));
    const hist = await rig.check();
    assert.equal(hist.runs.find((x) => x.apply_id === applyId)!.status, 'failed', 'nothing committed');
    console.log(`      run error_locked ${Date.now() - t0} ms after the cut`);

    ip('link', 'set', hostIf, 'up');
    const t1 = Date.now();
    await waitFor(`${sid} connected again`, async () => (await status()) === 'connected', 90_000, 200).catch(
      (err: Error) => {
        err.message += `\n--- soul log ---\n${log.stderr.slice(-2000)}`;
        throw err;
      },
    );
    console.log(`      reconnected ${Date.now() - t1} ms after the link came back`);
    const u = await api(rig.k, 'POST', '/v1/incarnations/netcut/unlock', { retry: true });
    assert.equal(u.status, 202, JSON.stringify(u.body));
    assert.equal((await settledStatus(rig, 'netcut')).status, 'ready');
    await rig.check();
  });
});
