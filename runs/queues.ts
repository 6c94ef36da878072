// Task-queue names. Every keeper of a cluster polls the shared queue (config.temporal.task_queue:
// workflows, render, routing, commit) and its own dispatch queue, `<task_queue>-<kid>`, where only
// the dispatch activity runs, bound to this keeper's live soul sessions. With the default shared
// queue `keeper` that is ARCHITECTURE's `keeper-<kid>`; deriving it from the shared name keeps two
// clusters (or two test keepers) that share a Temporal namespace from stealing each other's work.
export function sharedQueue(taskQueue: string): string {
  return taskQueue;
}

export function dispatchQueue(taskQueue: string, kid: string): string {
  return `${taskQueue}-${kid}`;
}
