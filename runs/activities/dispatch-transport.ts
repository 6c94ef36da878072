// How the dispatch activity reaches a host (runs/activities/dispatch.ts): the transport seam. A host
// registered with transport ssh is opened through `push` (hub/ssh) instead of waiting for its stream;
// its steps then go through the same applyHost, and workflows, render and the run report never learn
// which transport a host uses.
import type { DispatchActivityDeps, StepSender } from './deps';

export type TransportDeps = Pick<DispatchActivityDeps, 'sessions' | 'locate' | 'kid' | 'push' | 'reconnectGraceMs'>;

/** A host opened for its steps, or why it cannot be: nothing was run on it then. */
export type HostChannel = { sender: StepSender; close(): Promise<void> } | { unreachable: string };

export interface HostTransports {
  /** 'here' when this keeper can send to the host now, 'moved' when another keeper holds its stream or none appeared in time. */
  arrive(sid: string, signal: AbortSignal): Promise<'here' | 'moved'>;
  open(sid: string, signal: AbortSignal): Promise<HostChannel>;
}

/** The transports for one dispatch of `sids`: which of them are pushed is asked once. */
export async function hostTransports(deps: TransportDeps, sids: string[]): Promise<HostTransports> {
  const graceMs = deps.reconnectGraceMs ?? 10_000;
  // Hosts reached by push (SSH) have no stream to wait for: each is opened once, in `open`.
  const pushed = deps.push ? await deps.push.owns(sids) : new Set<string>();

  /** Waits until this keeper holds the soul's stream; 'moved' when another keeper does or none appears. */
  async function awaitSession(sid: string, signal: AbortSignal): Promise<'here' | 'moved'> {
    const deadline = Date.now() + graceMs;
    for (;;) {
      if (deps.sessions.isConnected(sid)) return 'here';
      const [kid] = await deps.locate([sid]);
      if ((kid && kid !== deps.kid) || Date.now() >= deadline || signal.aborted) return 'moved';
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  return {
    arrive: (sid, signal) => (pushed.has(sid) ? Promise.resolve('here') : awaitSession(sid, signal)),
    async open(sid, signal) {
      if (!pushed.has(sid)) return { sender: deps.sessions, close: async () => {} };
      try {
        const channel = await deps.push!.open(sid, signal);
        return { sender: channel, close: () => channel.close() };
      } catch (err) {
        // Not reached (no connection, host key changed, wrong host, no soul there): nothing ran.
        return { unreachable: `${(err as Error).message}; nothing was run on this host` };
      }
    },
  };
}
