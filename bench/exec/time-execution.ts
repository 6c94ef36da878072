// Times one-off executions for bench/exec (real souls, run.ts) and its swarm variant (swarm.ts).

/** Where the keeper's API is and the operator token to use. */
export interface ApiAccess {
  baseUrl: string;
  adminToken: string;
}

/**
 * One `core.cmd.run` of `true` on a coven of `n` hosts, timed from the POST as keeperctl follows it
 * (its SSE): the 202, the first and the last `host` event, the `end`. Every host must have changed.
 */
export async function timeExecution(k: ApiAccess, coven: string, n: number) {
  const t0 = performance.now();
  const res0 = await fetch(`${k.baseUrl}/v1/executions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${k.adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      module: 'core.cmd.run',
      params: { argv: ['true'] },
      target: { covens: [coven] },
      confirm: true,
    }),
  });
  const r = { status: res0.status, body: (await res0.json()) as any };
  const answered = performance.now() - t0;
  if (r.status !== 202) throw new Error(`POST /v1/executions: ${r.status} ${JSON.stringify(r.body)}`);
  const res = await fetch(`${k.baseUrl}${r.body.events as string}`, {
    headers: { Authorization: `Bearer ${k.adminToken}` },
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let hosts = 0;
  let first = NaN;
  let last = NaN;
  let end: any;
  while (!end) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (/^event: host$/m.test(block)) {
        hosts++;
        last = performance.now() - t0;
        if (hosts === 1) first = last;
      } else if (/^event: end$/m.test(block)) end = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
    }
  }
  const ended = performance.now() - t0;
  await reader.cancel().catch(() => undefined);
  if (!end || end.summary.changed !== n || hosts !== n)
    throw new Error(`execution ${r.body.id}: ${hosts} host events, end ${JSON.stringify(end)}`);
  return { answered, first, last, ended };
}
