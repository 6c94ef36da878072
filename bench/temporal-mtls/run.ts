/**
 * What Temporal behind mutual TLS costs (issue 13, item 6), not a test: a plain dev server on a
 * free port against the mTLS frontend of test/support/temporal-mtls.ts (HAProxy verifying client
 * certificates, socat, the dev server in its own namespace). Measures time to a healthy frontend,
 * a new connection (handshake + first call), sequential RPCs (GetSystemInfo, StartWorkflowExecution)
 * and the proxy's and bridge's memory. Writes bench/results/temporal-mtls.json.
 *
 *   node dist/bench/temporal-mtls/run.js [calls]
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { freePort } from '../../test/support/ports';
import { startTemporalMtls, temporalBinary } from '../../test/support/temporal-mtls';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2);
};
const now = () => Number(process.hrtime.bigint()) / 1e6;

function rssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  const kids = (p: number) => {
    try {
      return fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    for (const c of kids(p)) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

async function measure(address: string, tls: TLSConfig | undefined, calls: number) {
  const handshakes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t0 = now();
    const c = await Connection.connect({ address, ...(tls ? { tls } : {}) });
    await c.workflowService.getSystemInfo({});
    handshakes.push(now() - t0);
    await c.close();
  }
  const connection = await Connection.connect({ address, ...(tls ? { tls } : {}) });
  const info: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = now();
    await connection.workflowService.getSystemInfo({});
    info.push(now() - t0);
  }
  const client = new Client({ connection });
  const starts: number[] = [];
  for (let i = 0; i < Math.min(calls, 200); i++) {
    const t0 = now();
    await client.workflow.start('benchNoWorker', { workflowId: `bench-${Date.now()}-${i}`, taskQueue: 'bench-none' });
    starts.push(now() - t0);
  }
  await connection.close();
  return {
    new_connection_ms: { p50: pct(handshakes, 0.5), p99: pct(handshakes, 0.99) },
    get_system_info_ms: { p50: pct(info, 0.5), p99: pct(info, 0.99) },
    start_workflow_ms: { p50: pct(starts, 0.5), p99: pct(starts, 0.99) },
  };
}

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 500);
  // Plain: the dev server as the shared stack runs it, on a port of its own.
  const port = await freePort();
  const t0 = Date.now();
  const plain = spawn(
    temporalBinary(),
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--headless',
      '--log-level',
      'warn',
      '--http-port',
      String(await freePort()),
      '--metrics-port',
      String(await freePort()),
    ],
    { stdio: 'ignore' },
  );
  for (;;) {
    try {
      execFileSync(temporalBinary(), ['operator', 'cluster', 'health', '--address', `127.0.0.1:${port}`], {
        stdio: 'pipe',
      });
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const plainStartMs = Date.now() - t0;
  const mtls = await startTemporalMtls();
  try {
    const tls: TLSConfig = {
      serverRootCACertificate: fs.readFileSync(mtls.ca),
      serverNameOverride: mtls.serverName,
      clientCertPair: { crt: fs.readFileSync(mtls.client.cert), key: fs.readFileSync(mtls.client.key) },
    };
    const plainResult = await measure(`127.0.0.1:${port}`, undefined, calls);
    const mtlsResult = await measure(mtls.address, tls, calls);
    const socats = descendants(mtls.pids.namespace).filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'socat';
      } catch {
        return false;
      }
    });
    const result = {
      benchmark: 'temporal-mtls',
      at: new Date().toISOString(),
      calls,
      start_to_healthy_ms: { plain: plainStartMs, mtls_with_certificates: mtls.startMs },
      plain: plainResult,
      mtls: mtlsResult,
      memory_kb: {
        haproxy: rssKb(mtls.pids.proxy),
        socat: socats.reduce((n, p) => n + rssKb(p), 0),
        socat_processes: socats.length,
      },
    };
    fs.mkdirSync(path.join('bench', 'results'), { recursive: true });
    fs.writeFileSync(path.join('bench', 'results', 'temporal-mtls.json'), `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await mtls.stop();
    plain.kill('SIGTERM');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
