// Runs inside the systemd root (test/modules/systemd-root.ts) as `node /opt/keeper/dist/test/modules/in-root.js`:
// the soul's own step handler (agent/steps.ts createStateStepHandler: its state modules, its ledger
// under paths.seed, its command runner) applies the steps read as JSON on stdin, in order, as the
// keeper delivers them on the stream, and prints each reply as one JSON line.
// stdin: {"applyId": "...", "dryRun"?: bool, "showContent"?: bool, "steps": [{"module", "params", "index"?}]}
// (`index`: the step's index in its plan, default its position here; a caller that sends a plan's
// steps one at a time, deciding requisites between them, gives it so the ledger keys stay distinct.)
import { createStateStepHandler, type DeliveredStep } from '../../agent/steps';
import type { SoulConfig } from '../../agent/config';

async function main(): Promise<void> {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const req = JSON.parse(input) as {
    applyId: string;
    dryRun?: boolean;
    showContent?: boolean;
    steps: Array<{ module: string; params: unknown; index?: number }>;
  };
  const config = {
    sid: 'modules-root',
    paths: { seed: '/var/lib/soul', modules: '/var/lib/soul/modules' },
    ledger: { retention_days: 30 },
  } as unknown as SoulConfig;
  const handler = await createStateStepHandler({
    sid: 'modules-root',
    config,
    soulprint: { os_family: 'debian' } as never,
  });
  const signal = new AbortController().signal;
  try {
    for (const [position, s] of req.steps.entries()) {
      const stepIndex = s.index ?? position;
      const step: DeliveredStep = {
        requestId: `r${stepIndex}`,
        applyId: req.applyId,
        stepIndex,
        module: s.module,
        params: s.params,
        dryRun: req.dryRun === true,
        showContent: req.showContent === true,
      };
      process.stdout.write(`${JSON.stringify(await handler.handle(step, { signal, progress: () => undefined }))}\n`);
    }
  } finally {
    await handler.close?.();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
