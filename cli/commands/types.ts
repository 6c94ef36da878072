import type { Ctx } from '../context';

/** Wraps a command body: builds the context from the global options and maps errors to exit codes. */
export type Handler = (body: (ctx: Ctx, argv: any) => Promise<void>) => (argv: any) => Promise<void>;
