// The canary service: a secretstore(...) read and a secret input rendered into a 0600 file per host.
import fs from 'node:fs';
import path from 'node:path';

export function writeCanaryService(dir: string, o: { name: string; prefix: string; readPath: string }): void {
  const files: Record<string, string> = {
    'service.yml': `name: ${o.name}\nstate_schema_version: 1\nsecrets:\n  - ${o.prefix}\n`,
    'scenario/create/main.yml': [
      'input:',
      '  root: {type: string}',
      '  api_token: {type: string, secret: true}',
      'state_changes:',
      '  sets:',
      '    token_ref: "${input.api_token}"',
      'tasks:',
      '  - name: app config',
      '    module: core.file.rendered',
      '    params:',
      "      path: \"${input.root + '/' + soulprint.self.fqdn + '/app.conf'}\"",
      '      mode: "0600"',
      '      template: app.conf.tmpl',
      '      vars:',
      `        db_password: "\${secretstore('${o.readPath}', 'password')}"`,
      '        api_token: "${input.api_token}"',
      '',
    ].join('\n'),
    'templates/app.conf.tmpl': '[db]\npassword = {{ .db_password }}\n[api]\ntoken = {{ .api_token }}\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
}

/** The line of the secretstore(...) call in scenario/create/main.yml (for soul-lint's file:line). */
export const SECRETSTORE_LINE = 15;
