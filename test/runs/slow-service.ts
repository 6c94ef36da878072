// The converge-wait scenes' service (test/runs/converge-wait*.test.ts, first-route.test.ts). Each run
// first holds every host at a gate, a command that waits until the test writes `<root>/release`
// (holdRuns/releaseRuns): a converge run stays in flight exactly until the operator's run, upgrade or
// plan has been accepted, with no fixed sleep. Then each note file is written by the first send and
// confirmed by a second one 2 s later (`until:`), so a host the run changed reports `ok`, as an
// `until:` step does. Input `fail` names a host whose gate fails once released: that run fails and
// locks the incarnation. Its state is the greeting.
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

const gate = (root: string) => path.join(root, 'release');
/** From now on every run of the service waits at its gate (runs under `root` only). */
export const holdRuns = (root: string) => fs.rmSync(gate(root), { force: true });
/** The runs waiting at the gate go on, and later runs pass it at once. */
export const releaseRuns = (root: string) => fs.writeFileSync(gate(root), '');

// The host names are passed as "=name": an argv element may not be empty (input fail's default).
// The gate's loop also ends when the test's folder is gone or after 5 minutes, so a soul killed
// while its command waits leaves no shell behind.
const HOLD =
  'i=0; while [ -d "$1" ] && [ ! -e "$1/release" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i+1)); done; [ "$2" != "$3" ]';

/** Writes the service; its runs pass the gate until holdRuns (the test writes the release file first). */
export function writeSlowService(dir: string, steps = 1): void {
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
  fail: {type: string, default: ""}
state_changes:
  sets:
    greeting: "\${input.greeting}"
tasks:
  - name: gate
    module: core.cmd.run
    params:
      argv: [/bin/sh, -c, ${JSON.stringify(HOLD)}, sh, "\${input.root}", "=\${input.fail}", "=\${soulprint.self.fqdn}"]
      timeout: 600
    changed_when: "false"
${tasks}`,
  );
}
