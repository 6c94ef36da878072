// Withdrawing a published version (issue 31, "Remove and revoke"): a yanked version keeps its row
// (incarnations on it keep running its pinned commit, and show the yank), but it is never offered as
// newer and cannot be chosen for a new incarnation or an upgrade. yanked_at null: not yanked.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('service_versions', (t) => {
    t.timestamp('yanked_at', { useTz: true });
    t.text('yanked_by');
    t.text('yank_reason');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('service_versions', (t) => {
    t.dropColumns('yanked_at', 'yanked_by', 'yank_reason');
  });
}
