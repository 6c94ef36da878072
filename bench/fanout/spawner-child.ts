// One command spawner of bench/fanout's SpawnerPool (spawner.ts): runs each command it is sent
// with the soul's own runner (agent/exec/runner.ts) and sends back the result, or the reason it
// could not run. It is a small process, so its fork() for each command is cheap; the swarm's
// process, holding a thousand TLS streams, would stall its event loop on every fork.
import { createProcessRunner, type Command, type CommandResult } from '../../agent/exec/runner';

export interface SpawnRequest {
  id: number;
  cmd: Command;
}
export type SpawnAnswer = { id: number; result: CommandResult } | { id: number; error: string };

if (require.main === module) {
  const run = createProcessRunner();
  const send = (m: SpawnAnswer | { ready: true }) => {
    if (process.connected) process.send!(m);
  };
  process.on('message', (m: SpawnRequest) => {
    run(m.cmd).then(
      (result) => send({ id: m.id, result }),
      (err: Error) => send({ id: m.id, error: err.message }),
    );
  });
  // The pool closes the channel when it is done: nothing else keeps this process.
  process.on('disconnect', () => process.exit(0));
  send({ ready: true });
}
