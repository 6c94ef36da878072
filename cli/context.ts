// What every command handler gets: the client for the chosen cluster, the output format and the
// streams. Handlers print through it so tests and the progress display see the same bytes.
import { KeeperClient } from './client';
import { resolveTarget } from './config';
import { render, type OutputFormat } from './output';

export interface GlobalOptions {
  cluster?: string;
  url?: string;
  ca?: string;
  'token-file'?: string;
  output: OutputFormat;
}

export class Ctx {
  private clientCache: KeeperClient | undefined;

  constructor(
    readonly opts: GlobalOptions,
    readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  get format(): OutputFormat {
    return this.opts.output;
  }

  client(): KeeperClient {
    this.clientCache ??= new KeeperClient(
      resolveTarget(
        {
          ...(this.opts.cluster !== undefined ? { cluster: this.opts.cluster } : {}),
          ...(this.opts.url !== undefined ? { url: this.opts.url } : {}),
          ...(this.opts.ca !== undefined ? { ca: this.opts.ca } : {}),
          ...(this.opts['token-file'] !== undefined ? { tokenFile: this.opts['token-file'] } : {}),
        },
        this.env,
      ),
    );
    return this.clientCache;
  }

  print(text: string): void {
    process.stdout.write(text);
  }
  note(text: string): void {
    process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Prints data in the chosen format; `human` renders the table or details form. */
  show(data: unknown, human: () => string): void {
    this.print(render(this.format, data, human));
  }
}

/** Follows `next_cursor` until the end (for --all), or returns the first page. */
export async function listAll(
  ctx: Ctx,
  operationId: string,
  query: Record<string, unknown>,
  all: boolean,
  params?: Record<string, string>,
): Promise<{ items: any[]; next_cursor: string | null }> {
  const items: any[] = [];
  let cursor: string | undefined;
  for (;;) {
    const r = await ctx
      .client()
      .call(operationId, { ...(params ? { params } : {}), query: { ...query, ...(cursor ? { cursor } : {}) } });
    const page = r.body as { items: any[]; next_cursor: string | null };
    items.push(...page.items);
    if (!all || !page.next_cursor) return { items, next_cursor: all ? null : page.next_cursor };
    cursor = page.next_cursor;
  }
}
