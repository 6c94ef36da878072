// The converge-wait scenes' service (test/runs/converge-wait*.test.ts): each note file is written by
// the first send and confirmed by a second one 2 s later (`until:`), about 2 s per step, so a converge
// run is still in flight when the operator's run, upgrade or plan arrives. Its state is the greeting.
import fs from 'node:fs';
import path from 'node:path';
import { api, waitFor } from './keeper';

/** The incarnation's runs, newest first; its converge run is the one with `target_sids`. */
export const runsOf = async (k: Parameters<typeof api>[0], name: string) =>
  (await api(k, 'GET', `/v1/incarnations/${name}/runs`)).body.items as any[];
export const convergeRunning = (k: Parameters<typeof api>[0], name: string) =>
  waitFor(
    `a converge run of ${name} in flight`,
    async () => (await runsOf(k, name)).find((r) => Array.isArray(r.target_sids) && r.status === 'running'),
    30_000,
    100,
  );

export function writeSlowService(dir: string, steps = 3): void {
  fs.mkdirSync(path.join(dir, 'scenario', 'create'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'service.yml'), 'name: slownote\nstate_schema_version: 1\n');
  const tasks = Array.from(
    { length: steps },
    (_, i) => `  - name: note ${i}
    module: core.file.present
    params:
      path: "\${input.root}/\${soulprint.self.fqdn}/note${i}"
      content: "\${input.greeting}\\n"
      mode: "0644"
    until: "result.changed == false"
    retries: 3
    delay: 2
`,
  ).join('');
  fs.writeFileSync(
    path.join(dir, 'scenario', 'create', 'main.yml'),
    `description: Slow notes.
input:
  root: {type: string}
  greeting: {type: string}
state_changes:
  sets:
    greeting: "\${input.greeting}"
tasks:
${tasks}`,
  );
}
