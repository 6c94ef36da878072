// What `soul init` tells the operator to do next. On a host with the soul package, the soul runs
// as its unit, so the next step is `systemctl enable --now soul` (issue 37 row 16: it suggested a
// checkout's `soul run`). The unit starts only once the identity exists at the packaged seed path
// (ConditionPathExists), so a config whose paths.seed is elsewhere is told it needs a drop-in.
import fs from 'node:fs';
import path from 'node:path';

export const SOUL_UNIT = '/lib/systemd/system/soul.service';
export const UNIT_SEED = '/var/lib/soul/seed';

export function nextStep(configFile: string, seedDir: string, unit = SOUL_UNIT): string {
  if (!fs.existsSync(unit)) return `Start the soul with: soul run --config=${configFile}`;
  if (path.resolve(seedDir) !== UNIT_SEED) {
    return (
      `Start the soul with: systemctl enable --now soul, after a drop-in (systemctl edit soul) that sets ConditionPathExists=${path.join(path.resolve(seedDir), 'cert.pem')}: ` +
      `soul.service starts only once ${UNIT_SEED}/cert.pem exists, and paths.seed is ${seedDir}`
    );
  }
  return 'Start the soul with: systemctl enable --now soul';
}
