// Free loopback ports for the listeners of a test keeper and of private test services.
//
// Why not listen(0): the kernel hands out port-0 listeners from the ephemeral range, the same range
// every outgoing connection (PostgreSQL, Redis, Temporal clients) takes its source port from. Between
// "port found free" and "keeper listens on it" an outgoing connection can take the port, and the
// keeper fails with EADDRINUSE (a CI run failed this way). Ports below the ephemeral range are only
// ever taken by listeners, and this process never hands one out twice.
import fs from 'node:fs';
import net from 'node:net';

const given = new Set<number>();

/** The low end of the kernel's ephemeral range (32768 when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12000 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * scripts/run-tests.js runs test files in several processes side by side and gives each a slice of
 * the range (KEEPER_TEST_PORT_SLICE=i/n): `given` only keeps one process from handing a port out
 * twice, and a port another process found free but has not listened on yet looks free here too.
 */
function range(low: number, high: number): [number, number] {
  const m = /^(\d+)\/(\d+)$/.exec(process.env.KEEPER_TEST_PORT_SLICE ?? '');
  if (!m) return [low, high];
  const [i, n] = [Number(m[1]), Number(m[2])];
  if (n < 1 || i >= n) return [low, high];
  const width = Math.floor((high - low + 1) / n);
  return [low + i * width, low + (i + 1) * width - 1];
}

const [LOW, HIGH] = range(10000, ephemeralLow() - 1);
/**
 * Ports in that range that fetch() refuses to connect to ("bad port", the Fetch standard's list):
 * a test keeper listening on one cannot be called by the tests (a CI run failed on 10080).
 */
const FETCH_BLOCKED = new Set([10080]);

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  // A start that differs per process, so two test processes on one machine rarely probe the same ports.
  const span = HIGH - LOW;
  let port = LOW + ((process.pid * 7919 + Math.floor(Math.random() * span)) % span);
  for (let tries = 0; tries < span; tries++, port = port >= HIGH ? LOW : port + 1) {
    if (given.has(port) || FETCH_BLOCKED.has(port)) continue;
    if (await canListen(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port between ${LOW} and ${HIGH}`);
}
