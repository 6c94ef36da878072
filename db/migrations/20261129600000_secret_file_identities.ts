// A copy or hard link of a secret file is treated like the file itself (issue 45, M-1; docs/secrets.md
// "Copies and links").
//   secret_files  per host, what identifies each file a step or execution wrote a secret to, as the
//                 host's soul reported it: the keyed digest of its content (HMAC-SHA256 under the
//                 soul's own key, which the keeper never holds: the digest confirms no guessed value)
//                 and its inode (device, inode, birth time). Never a value or a plain hash. A later
//                 step that reads a file with the same digest (a copy) or inode (a link) shows no
//                 content and no output, as for a tainted path.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE secret_files (
      sid text NOT NULL,
      digest text NOT NULL,
      file_id text NOT NULL,
      path text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (sid, digest, file_id)
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE secret_files');
}
