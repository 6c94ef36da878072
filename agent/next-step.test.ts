import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nextStep } from './next-step';

describe('soul init: the next step it names', () => {
  let dir: string;
  let unit: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'next-step-'));
    unit = path.join(dir, 'soul.service');
    fs.writeFileSync(unit, '[Service]\n');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('with the packaged unit and seed path: systemctl enable --now soul', () => {
    assert.equal(
      nextStep('/etc/soul/soul.yml', '/var/lib/soul/seed', unit),
      'Start the soul with: systemctl enable --now soul',
    );
  });

  it('with the unit but paths.seed elsewhere: the drop-in its start condition needs', () => {
    assert.equal(
      nextStep('/etc/soul/soul.yml', '/srv/soul/seed', unit),
      'Start the soul with: systemctl enable --now soul, after a drop-in (systemctl edit soul) that sets ConditionPathExists=/srv/soul/seed/cert.pem: ' +
        'soul.service starts only once /var/lib/soul/seed/cert.pem exists, and paths.seed is /srv/soul/seed',
    );
  });

  it('without the unit (a checkout): soul run with the same config', () => {
    assert.equal(
      nextStep('/tmp/soul.yml', '/tmp/seed', path.join(dir, 'absent.service')),
      'Start the soul with: soul run --config=/tmp/soul.yml',
    );
  });
});
